package mcptools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/internal/runes"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is a server's elicitation/create request: during a tool call
// the server asks the user for information (MCP 2025-06-18 and later).
type Elicitation struct {
	// Server is the name of the server that asks.
	Server string
	// Agent is the id of the agent whose tool call the server is
	// serving, when the calls in progress on that server are all one
	// agent's; "" when none or several agents' are.
	Agent string
	// Message is the server's question, without the code points of the
	// SDK's unsafe-character rule (it reaches a person, and may reach an
	// agent's prompt through the human-requests queue).
	Message string
	// Mode is "form" (the answer is an object matching Schema) or "url"
	// (the user is to visit URL).
	Mode   string
	Schema any
	URL    string
}

// ElicitFunc answers an [Elicitation]: Action "accept" (with Content, an
// object matching the schema; the SDK fills in the schema's defaults),
// "decline" or "cancel". It runs during the tool call that caused it and
// ends with it: ctx ends when the call's timeout passes. An error is
// returned to the server as a JSON-RPC error.
type ElicitFunc func(ctx context.Context, e Elicitation) (*mcp.ElicitResult, error)

// elicit is the client's elicitation/create handler. The client always
// declares the elicitation capability, so that a server asks rather than
// waits: with no [Config].Elicit the answer is an immediate decline.
func (srv *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e := Elicitation{Server: srv.cfg.Name, Agent: srv.caller()}
	if p := req.Params; p != nil {
		e.Message, e.Mode, e.Schema, e.URL = runes.Strip(strings.ToValidUTF8(p.Message, "\uFFFD")), p.Mode, p.RequestedSchema, p.URL
	}
	if e.Mode == "" {
		e.Mode = "form"
	}
	start := srv.set.cfg.Now()
	res := &mcp.ElicitResult{Action: "decline"}
	var err error
	if f := srv.set.cfg.Elicit; f != nil {
		res, err = f(ctx, e)
	}
	ev := Event{Kind: EventElicited, Server: srv.cfg.Name, Err: err, Duration: srv.set.cfg.Now().Sub(start)}
	switch {
	case err != nil:
		ev.Text = fmt.Sprintf("asked %q; no answer", e.Message)
	case res == nil:
		res = &mcp.ElicitResult{Action: "decline"}
		fallthrough
	default:
		ev.Text = fmt.Sprintf("asked %q; answered %s after %s", e.Message, res.Action, ev.Duration.Round(time.Millisecond))
	}
	srv.set.emit(ev)
	return res, err
}

// calling records a tool call of agent in progress on srv; the returned
// function ends it.
func (srv *server) calling(agent string) func() {
	srv.mu.Lock()
	if srv.inflight == nil {
		srv.inflight = map[string]int{}
	}
	srv.inflight[agent]++
	srv.mu.Unlock()
	return func() {
		srv.mu.Lock()
		if srv.inflight[agent]--; srv.inflight[agent] <= 0 {
			delete(srv.inflight, agent)
		}
		srv.mu.Unlock()
	}
}

// caller returns the one agent with tool calls in progress on srv, or "".
func (srv *server) caller() string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.inflight) != 1 {
		return ""
	}
	for a := range srv.inflight {
		return a
	}
	return ""
}
