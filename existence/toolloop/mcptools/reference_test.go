package mcptools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// TestReferenceServersInTheToolLoop runs a goal through the tool loop
// with the tools of the MCP project's reference servers, started over
// stdio from npm: server-everything (text, an elicitation this client
// declines, a tool that requires task augmentation and so is not
// offered) and server-filesystem (a file written, then read back).
func TestReferenceServersInTheToolLoop(t *testing.T) {
	everything := npmtest.Bin(t, "mcp-server-everything")
	filesystem := npmtest.Bin(t, "mcp-server-filesystem")
	if testing.Short() {
		t.Skip("starts two Node.js servers")
	}
	dir := t.TempDir()
	path := map[string]string{"PATH": npmtest.BinDir() + string(os.PathListSeparator) + os.Getenv("PATH")}
	ev := newEvents()
	set := connect(t, mcptools.Config{
		Servers: []mcptools.ServerConfig{
			{Name: "everything", Command: everything, Args: []string{"stdio"}, Env: path},
			{Name: "fs", Command: filesystem, Args: []string{dir}, Env: path},
		},
		Observer: ev.observe,
	})
	got := names(set.Tools())
	assert.Contains(t, got, "everything__echo")
	assert.Contains(t, got, "everything__trigger-elicitation-request", "offered: this client declares elicitation")
	assert.NotContains(t, got, "everything__simulate-research-query", "requires task augmentation")
	assert.Contains(t, got, "fs__write_file")

	file := filepath.Join(dir, "note.md")
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "everything__echo", Arguments: args(map[string]string{"message": "hello"})}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "everything__trigger-elicitation-request", Arguments: args(map[string]any{})}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "fs__write_file", Arguments: args(map[string]string{"path": file, "content": "# A note\n"})}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "fs__read_text_file", Arguments: args(map[string]string{"path": file})}}},
		llmtest.Reply{Text: "done"},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: set.Tools()})
	require.NoError(t, err)
	var calls []event.ToolCallInfo
	out, err := exec.Execute(t.Context(), existence.Assignment{
		Goal:   identity.Goal{Objective: "use the reference servers"},
		Report: func(e event.Event) { calls = append(calls, *e.Tool) },
	})
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)
	require.Len(t, calls, 4)
	for _, c := range calls {
		assert.False(t, c.Failed, "%s: %s", c.Name, c.Result)
	}
	assert.Contains(t, calls[0].Result, "hello")
	assert.Contains(t, calls[1].Result, "decline", "the elicitation was answered")
	assert.Equal(t, "# A note\n", calls[3].Result)
	ev.wait(t, mcptools.EventElicited)
}
