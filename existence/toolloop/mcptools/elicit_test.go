package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askServer has one tool, "ask", that elicits a name from the user and
// returns the answer's action and content.
func askServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the user's name."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: "What is your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"name": map[string]any{"type": "string", "default": "Ada"},
				}},
			})
			if err != nil {
				return nil, nil, err
			}
			out, _ := json.Marshal(res.Content)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + " " + string(out)}}}, nil, nil
		})
	return s
}

// before2026 is a server transport that serves protocol versions before
// 2026-07-28, where a server asks with an elicitation/create request (from
// 2026-07-28 it returns input requests instead, which the SDK's client
// answers through the same handler).
type before2026 struct{ mcp.Transport }

func (before2026) SupportsProtocolVersion(v string) bool { return v < "2026-07-28" }

// askTransport connects a new askServer over protocol 2025-11-25.
func askTransport(t *testing.T) func() mcp.Transport {
	return func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := askServer().Connect(context.Background(), before2026{st}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { ss.Close() })
		return ct
	}
}

func TestElicitation(t *testing.T) {
	tests := []struct {
		name    string
		elicit  mcptools.ElicitFunc
		want    string
		wantErr string
	}{
		{name: "no handler declines", want: "decline null"},
		{name: "accepted, defaults filled in", want: `accept {"name":"Ada"}`,
			elicit: func(_ context.Context, e mcptools.Elicitation) (*mcp.ElicitResult, error) {
				if e.Server != "ask" || e.Agent != "scout" || e.Message != "What is your name?" || e.Mode != "form" {
					return nil, errors.New("unexpected elicitation")
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}},
		{name: "handler error", wantErr: "nobody home",
			elicit: func(context.Context, mcptools.Elicitation) (*mcp.ElicitResult, error) {
				return nil, errors.New("nobody home")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEvents()
			set := connect(t, mcptools.Config{
				Servers:  []mcptools.ServerConfig{{Name: "ask", Transport: askTransport(t)}},
				Observer: ev.observe,
				Elicit:   tc.elicit,
			})
			// The answer comes at once: far inside this bound.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			ctx = toolloop.WithCaller(ctx, existence.Assignment{AgentID: "scout"})
			out, err := toolByName(t, set, "ask__ask").Call(ctx, json.RawMessage(`{}`))
			e := ev.wait(t, mcptools.EventElicited)
			assert.Contains(t, e.String(), `asked "What is your name?"`)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.ErrorContains(t, e.Err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		})
	}
}
