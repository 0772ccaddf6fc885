package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
)

// TestStatelessServer: the client speaks MCP 2026-07-28 to a stateless
// server (the go-sdk's, StreamableHTTPOptions.Stateless): it discovers
// the server (server/discover) instead of initializing a session, every
// request names the version, and its tools are called as any others.
func TestStatelessServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var methods, versions []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct{ Method string }
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		methods = append(methods, m.Method)
		versions = append(versions, r.Header.Get("Mcp-Protocol-Version"))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "sl", URL: hs.URL}}})
	out, err := toolByName(t, set, "sl__echo").Call(t.Context(), json.RawMessage(`{"text":"hello"}`))
	require.NoError(t, err)
	assert.Contains(t, out, "hello")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, methods, "server/discover")
	assert.NotContains(t, methods, "initialize", "no session handshake")
	for i, m := range methods {
		if m == "tools/call" {
			assert.Equal(t, "2026-07-28", versions[i])
		}
	}
}
