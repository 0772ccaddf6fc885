package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
)

// idName is one trio member's id and display name.
type idName struct{ id, name string }

// agentNames returns the trio's ids and names in member order: the name of
// each stored identity (for an imported agent, the name in its own
// profile.json), else the member's default (scout=Cedar, analyst=Cipher,
// builder=Vault), which only agents created fresh take. A state
// that cannot be loaded keeps the default here; the runner reports it.
func agentNames(ctx context.Context, store identity.Store, members []member) ([]idName, error) {
	out := make([]idName, len(members))
	for i, m := range members {
		out[i] = idName{m.id, m.name}
		st, err := store.Load(ctx, m.id)
		switch {
		case err == nil:
			if n := strings.TrimSpace(st.Identity.Name); n != "" {
				out[i].name = n
			}
		case errors.Is(err, identity.ErrNotFound), errors.Is(err, identity.ErrCorrupt):
		default:
			return nil, fmt.Errorf("%s: %w", m.id, err)
		}
	}
	return out, nil
}

// peerList renders the peers of self as "Titan (scout), Vault (builder)".
func peerList(self string, names []idName) string {
	var parts []string
	for _, n := range names {
		if n.id != self {
			parts = append(parts, n.name+" ("+n.id+")")
		}
	}
	return strings.Join(parts, ", ")
}

// messageArgs are send_message's arguments. The description of "to" is
// set at run time from the actual peers (see [sendMessage]).
type messageArgs struct {
	To   string `json:"to" jsonschema_description:"the peer's name or id"`
	Text string `json:"text" jsonschema_description:"the message; the peer is shown at most 200 characters of it"`
}

// sendMessage is the tool with which self writes to a peer's inbox (spec §2
// row 15, "MESSAGES FROM YOUR PEERS"). Its schema names the actual peers,
// with their names and ids, as they are when the trio starts.
// The runner is looked up when the tool is called, since the tools exist
// before the runner.
func sendMessage(runner func() *runner.Runner, self string, names []idName) toolloop.Tool {
	peers := peerList(self, names)
	inner := toolloop.NewTool("send_message", "Send a short message to one of your peers ("+peers+"); they read it at their next existence cycle.",
		func(ctx context.Context, args messageArgs) (string, error) {
			from, ok := toolloop.Caller(ctx)
			r := runner()
			if !ok || r == nil {
				return "", errors.New("send_message: no sending agent")
			}
			to := agentID(r, args.To)
			if to == "" || to == from.AgentID {
				return "", fmt.Errorf("no peer %q: write to one of %s (not yourself)", args.To, peerList(from.AgentID, names))
			}
			if strings.TrimSpace(args.Text) == "" {
				return "", errors.New("empty message")
			}
			if err := r.Send(ctx, from.AgentID, to, args.Text); err != nil {
				return "", err
			}
			return "sent to " + r.Agent(to).Name(), nil
		})
	return &peerTool{Tool: inner, schema: withDescription(inner.Schema(), "to", "the peer's name or id: "+peers)}
}

// peerTool is a tool whose schema was rewritten at run time.
type peerTool struct {
	toolloop.Tool
	schema json.RawMessage
}

func (t *peerTool) Schema() json.RawMessage { return append(json.RawMessage(nil), t.schema...) }

// withDescription returns schema with the description of property prop
// replaced by desc; schema unchanged when it has no such property.
func withDescription(schema json.RawMessage, prop, desc string) json.RawMessage {
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return schema
	}
	props, _ := s["properties"].(map[string]any)
	p, ok := props[prop].(map[string]any)
	if !ok {
		return schema
	}
	p["description"] = desc
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}
