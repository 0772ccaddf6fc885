package mcptools

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is a server's elicitation/create request: during a tool call
// the server asks the user for information (MCP 2025-06-18 and later).
type Elicitation struct {
	// Server is the name of the server that asks.
	Server string
	// Message is the server's question, as it sent it.
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
	e := Elicitation{Server: srv.cfg.Name}
	if p := req.Params; p != nil {
		e.Message, e.Mode, e.Schema, e.URL = p.Message, p.Mode, p.RequestedSchema, p.URL
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
