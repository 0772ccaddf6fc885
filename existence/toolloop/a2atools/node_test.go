package a2atools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/a2atools"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// TestAgentCallsAJavaScriptAgent: an agent's tool loop gives a task to an
// agent built with @a2a-js/sdk (testdata/server.mjs, served by Node.js)
// and the model reads its answer.
func TestAgentCallsAJavaScriptAgent(t *testing.T) {
	node := npmtest.Bin(t, "node")
	sdk := filepath.Dir(npmtest.File(t, "@a2a-js/sdk/package.json"))
	express := filepath.Dir(npmtest.File(t, "express/package.json"))
	if testing.Short() {
		t.Skip("starts a Node.js server")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "server.mjs"), "js-token")
	cmd.Env = append(npmtest.Env(), "A2A_SDK_DIR="+sdk, "EXPRESS_DIR="+express)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)

	agent, err := a2atools.Connect(ctx, a2atools.Config{URL: "http://127.0.0.1:" + port, Token: "js-token", PollInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	defer agent.Close()
	tool := agent.Tool()
	assert.Equal(t, "a2a_the_almanac", tool.Name())
	assert.Contains(t, tool.Description(), "weekday: the day of the week of a date")

	args, _ := json.Marshal(map[string]string{"message": "2026-12-03"})
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: tool.Name(), Arguments: args}}},
		llmtest.Reply{Text: "done: the almanac says Thursday"},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: []toolloop.Tool{tool}})
	require.NoError(t, err)
	var calls []event.ToolCallInfo
	out, err := exec.Execute(ctx, existence.Assignment{
		Goal:   identity.Goal{Objective: "find the weekday of 2026-12-03"},
		Report: func(e event.Event) { calls = append(calls, *e.Tool) },
	})
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)
	require.Len(t, calls, 1)
	assert.False(t, calls[0].Failed, calls[0].Result)
	assert.Contains(t, calls[0].Result, "almanac: 2026-12-03 falls on a Thursday")
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, llm.RoleTool, last.Role)
	assert.Contains(t, last.Content, "falls on a Thursday", "the model reads the remote agent's answer")
}
