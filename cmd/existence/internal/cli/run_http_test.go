package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// TestHTTPServesA2AAndMCP: -http serves A2A at /a2a, the agent card at
// /.well-known/agent-card.json and MCP at /mcp, behind the dashboard's
// token.
func TestHTTPServesA2AAndMCP(t *testing.T) {
	r := testRunner(t, nil)
	tasks := taskqueue.NewMemory(taskqueue.Options{})
	var stderr bytes.Buffer
	stop, err := serveMonitor(&runOptions{http: "127.0.0.1:0", httpToken: envToken{value: "tok", set: true}}, r, tasks, requests.NewMemory(requests.Options{}), nil, nil, nil, slog.New(slog.DiscardHandler), &stderr)
	require.NoError(t, err)
	defer stop()
	m := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/ .*A2A at /a2a`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	base := m[1]
	do := func(method, path, tok, body string, hdr ...string) (int, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	status, _ := do("GET", "/.well-known/agent-card.json", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "the card is behind the token")
	status, body := do("GET", "/.well-known/agent-card.json", "tok", "")
	require.Equal(t, http.StatusOK, status, body)
	var card struct {
		Skills []struct{ ID string } `json:"skills"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &card))
	assert.Len(t, card.Skills, 3, "the trio's card names each agent")

	status, _ = do("POST", "/a2a", "", `{}`)
	assert.Equal(t, http.StatusUnauthorized, status)
	status, body = do("POST", "/a2a", "tok", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"tenant":"scout","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"list the workspace"}]}}}`)
	require.Equal(t, http.StatusOK, status, body)
	ts, err := tasks.List(t.Context())
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "scout", ts[0].Agent)
	status, body = do("GET", "/a2a/rest/scout/tasks/"+ts[0].ID, "tok", "")
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "TASK_STATE_SUBMITTED")

	status, body = do("POST", "/mcp", "tok", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		"Accept", "application/json, text/event-stream")
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "existence-loop-trio")
	status, _ = do("POST", "/mcp", "", `{}`)
	assert.Equal(t, http.StatusUnauthorized, status)
}
