package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskServer answers MCP over HTTP by hand: its tools/list marks "research"
// as requiring task augmentation, as server-everything's
// simulate-research-query does. sse sends the tools/list result as a
// server-sent event rather than a JSON body.
func taskServer(t *testing.T, sse bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","serverInfo":{"name":"tasks","version":"1"},"capabilities":{"tools":{}}}`
		case "tools/list":
			result = `{"tools":[
				{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
				{"name":"echo","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"echoed"}]}`
		default:
			if req.ID == nil { // a notification
				w.WriteHeader(http.StatusAccepted)
				return
			}
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		if result == "" { // server/discover and the like: fall back to initialize
			msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
		}
		if sse && req.Method == "tools/list" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 1\nevent: message\ndata: %s\n\n", compact(t, msg))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
	}))
}

func compact(t *testing.T, s string) string {
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	b, _ := json.Marshal(v)
	return string(b)
}

// taskMarker is a client transport that adds execution.taskSupport
// "required" to the tool "slow" of every tools/list result it reads.
type taskMarker struct{ mcp.Transport }

func (m taskMarker) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := m.Transport.Connect(ctx)
	return markerConn{c}, err
}

type markerConn struct{ mcp.Connection }

func (c markerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && r.Result != nil {
		var res map[string]any
		if json.Unmarshal(r.Result, &res) == nil {
			if tools, ok := res["tools"].([]any); ok {
				for _, tl := range tools {
					if m := tl.(map[string]any); m["name"] == "slow" {
						m["execution"] = map[string]any{"taskSupport": "required"}
					}
				}
				r.Result, _ = json.Marshal(res)
			}
		}
	}
	return msg, err
}

func TestTaskRequiredToolsNotOffered(t *testing.T) {
	jsonBody, sseBody := taskServer(t, false), taskServer(t, true)
	defer jsonBody.Close()
	defer sseBody.Close()
	tests := []struct {
		name, want string
		srv        mcptools.ServerConfig
	}{
		{name: "http json", want: "research", srv: mcptools.ServerConfig{Name: "h", URL: jsonBody.URL}},
		{name: "http sse", want: "research", srv: mcptools.ServerConfig{Name: "h", URL: sseBody.URL}},
		{name: "transport", want: "slow", srv: mcptools.ServerConfig{Name: "t",
			Transport: inMemory(t, newServer, func(tr mcp.Transport) mcp.Transport { return taskMarker{tr} })}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEvents()
			set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{tc.srv}, Observer: ev.observe})
			assert.NotContains(t, names(set.Tools()), tc.srv.Name+"__"+tc.want)
			assert.NotEmpty(t, set.Tools(), "the other tools are offered")
			e := ev.wait(t, mcptools.EventToolNotOffered)
			assert.Equal(t, tc.want, e.Tool)
			assert.Contains(t, e.String(), `taskSupport is "required"`)

			// Allowing it by name is a configuration error.
			tc.srv.Allow = []string{tc.want}
			_, err := mcptools.Connect(t.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{tc.srv}, Logger: quiet})
			require.ErrorIs(t, err, mcptools.ErrConfig)
			assert.Contains(t, err.Error(), "can only be called as a task")
		})
	}
}
