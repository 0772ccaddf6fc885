package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/middleware"
)

func TestMCPFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	require.NoError(t, writeFile(cfg, `{"mcpServers": {"wiki": {"url": "http://127.0.0.1:9/mcp", "allow": ["search"]}}}`))
	o, err := parseRunFlags([]string{"-mcp", "fs=mcp-fs /srv/data", "-mcp", "web=http://127.0.0.1:8080/mcp", "-mcp-config", cfg, "-mcp-serve"}, io.Discard)
	require.NoError(t, err)
	require.Len(t, o.mcp.servers, 2)
	assert.Equal(t, "mcp-fs", o.mcp.servers[0].Command)
	assert.Equal(t, []string{"/srv/data"}, o.mcp.servers[0].Args)
	assert.Equal(t, "http://127.0.0.1:8080/mcp", o.mcp.servers[1].URL)
	assert.Equal(t, cfg, o.mcp.config)
	assert.True(t, o.mcp.serve)

	for _, bad := range [][]string{{"-mcp", "noequals"}, {"-mcp", "my_fs=cmd"}, {"-mcp", "fs="}} {
		_, err := parseRunFlags(bad, io.Discard)
		assert.Error(t, err, bad)
	}
	// A bad config file stops the trio before anything starts.
	require.NoError(t, writeFile(cfg, `{"mcpServers": {"wiki": {"url": "http://127.0.0.1:9/mcp", "alow": ["search"]}}}`))
	t.Chdir(dir)
	_, _, err = runTrioTest(t, "-llm-url", "http://127.0.0.1:9", "-mcp-config", cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "alow"`)
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// TestMCPTools gives the trio the tools of a real stdio MCP server (the
// mcptools test server, built here): the agents' executors offer them.
func TestMCPTools(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command to build the test MCP server: install Go")
	}
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, "../../../../existence/toolloop/mcptools/testdata/server").CombinedOutput()
	require.NoError(t, err, string(out))
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, nil)
	_, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-mcp", "t="+bin)...)
	require.NoError(t, err)
	assert.Contains(t, stderr, "trio: MCP tools: t__big, t__crash, t__dotted_name_")
	assert.Contains(t, stderr, "t__echo")
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPServe runs `trio -mcp-serve` with an MCP client from the SDK on
// its stdin and stdout: the client lists the agents, speaks to one and
// reads its state; disconnecting stops the trio.
func TestMCPServe(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, nil)
	o, err := parseRunFlags(trioArgs(t, srv.URL, "-mcp-serve"), io.Discard)
	require.NoError(t, err)
	o.retry = middleware.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	o.maxGoalDuration = -1
	inR, inW := io.Pipe()   // client -> trio
	outR, outW := io.Pipe() // trio -> client
	o.stdin = inR
	var stderr syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runTrio(ctx, o, outW, &stderr)
		outW.Close()
	}()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	callText := func(name string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %+v", name, res.Content)
		return res.Content[0].(*mcp.TextContent).Text
	}
	var agents []struct{ ID, Name string }
	require.NoError(t, json.Unmarshal([]byte(callText("list_agents", map[string]any{})), &agents))
	require.Len(t, agents, 3)
	assert.Equal(t, "scout", agents[0].ID)
	assert.Equal(t, "delivered to builder", callText("send_message", map[string]any{"text": "build a tiny index", "agent_ids": []string{"builder"}}))
	assert.Contains(t, callText("assign_task", map[string]any{"description": "write notes/index.md"}), `"status": "pending"`)
	assert.Contains(t, callText("agent_state", map[string]any{"agent_id": "builder"}), `"name": "Vault"`)
	assert.Equal(t, "[]", callText("list_requests", map[string]any{}))

	// The events went to stderr, not into the MCP stream.
	require.NoError(t, cs.Close())
	inW.Close()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the trio did not stop when the MCP client disconnected")
	}
	assert.Contains(t, stderr.String(), `"kind":"message"`, "the host message event")
	assert.True(t, strings.Contains(stderr.String(), "the MCP client disconnected"), stderr.String())
}
