package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/mcpserver"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// post sends one JSON-RPC message as an MCP client would, with the token,
// and returns the response (body read) and its session id.
func post(t *testing.T, url, session, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, string(b)
}

// serverSession returns the server's session with the given id.
func serverSession(t *testing.T, s *mcpserver.Server, id string) *mcp.ServerSession {
	t.Helper()
	for ss := range s.MCP().Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	require.Fail(t, "no server session "+id)
	return nil
}

// TestHTTPSessionsAreCapped: an authenticated client that keeps calling
// initialize cannot grow the server without bound: beyond MaxSessions new
// sessions get 503 with a JSON-RPC error that says why, open sessions go
// on working, and closing one makes room.
func TestHTTPSessionsAreCapped(t *testing.T) {
	f := newFixture(t)
	h, err := f.server.Handler(mcpserver.HTTPConfig{Token: "s3cret", MaxSessions: 3})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	defer hs.Close()

	var ids []string
	for range 3 {
		resp, _ := post(t, hs.URL, "", initialize)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	for range 20 { // the hostile loop: 20 more initialize calls
		resp, body := post(t, hs.URL, "", initialize)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
		var rpc struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &rpc), body)
		assert.Contains(t, rpc.Error.Message, "too many MCP sessions: 3 are open and the limit is 3 (HTTPConfig.MaxSessions)")
	}
	assert.Equal(t, 3, f.server.HTTPSessions())

	// An open session still works.
	resp, _ := post(t, hs.URL, ids[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	resp, _ = post(t, hs.URL, ids[0], `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The go-sdk's client of a session (2025-11-25) reports the status.
	_, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Service Unavailable")
	// A stateless client (2026-07-28) opens no session: the cap is not
	// its concern.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: mcpserver.StatelessVersion})
	require.NoError(t, err)
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_agents"})
	require.NoError(t, err)
	cs.Close()
	assert.Equal(t, 3, f.server.HTTPSessions())

	// Closing a session makes room for a new one.
	ss := serverSession(t, f.server, ids[1])
	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, hs.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Mcp-Session-Id", ids[1])
	dresp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	dresp.Body.Close()
	require.NoError(t, ss.Wait())
	resp, _ = post(t, hs.URL, "", initialize)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestHTTPSessionsExpireWhenIdle: a session that receives no request for
// IdleTimeout is closed by the go-sdk, and no longer counts (its memory is
// freed); a client initializes again.
func TestHTTPSessionsExpireWhenIdle(t *testing.T) {
	f := newFixture(t)
	h, err := f.server.Handler(mcpserver.HTTPConfig{Token: "s3cret", IdleTimeout: 20 * time.Millisecond})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	defer hs.Close()

	resp, _ := post(t, hs.URL, "", initialize)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
	// The session may already be gone here (20 ms is short on a loaded
	// machine), so it is watched through the count, not looked up.
	require.Eventually(t, func() bool { return f.server.HTTPSessions() == 0 }, 30*time.Second, time.Millisecond,
		"the idle session is closed and no longer the server's")
	resp, _ = post(t, hs.URL, "", initialize)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a new session is opened")
}

// TestHTTPBothProtocolVersions: one endpoint serves a 2025-11-25 client
// (initialize, a session) and a 2026-07-28 one (server/discover, no
// session), and tools/list is the same list, in the same (name) order,
// on every call and for both.
func TestHTTPBothProtocolVersions(t *testing.T) {
	f := newFixture(t)
	h, err := f.server.Handler(mcpserver.HTTPConfig{Token: "s3cret"})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	defer hs.Close()
	var lists [][]string
	for _, version := range []string{"2025-11-25", mcpserver.StatelessVersion} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err, version)
		assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_agents"})
		require.NoError(t, err, version)
		assert.False(t, res.IsError, version)
		for range 3 {
			tl, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range tl.Tools {
				names = append(names, tool.Name)
			}
			lists = append(lists, names)
		}
		cs.Close()
	}
	assert.True(t, slices.IsSorted(lists[0]), "in name order: %v", lists[0])
	for _, l := range lists[1:] {
		assert.Equal(t, lists[0], l, "tools/list is identical across calls and versions")
	}
}
