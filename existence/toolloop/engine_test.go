package toolloop_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/engine"
	"github.com/existence-loop/sdk/llm/ollama"
)

var engineUpdate = engine.UpdateFlag()

type engineNoteArgs struct {
	Text string `json:"text" jsonschema_description:"What to write down."`
}

// Tool-loop turns against a real engine (package internal/engine;
// skipped without one) through the Ollama adapter. The engine is told to
// answer requests with tools by a tool call (random weights never choose
// one; engine.Config.ToolChoice): each turn's call is parsed from the
// model's <tool_call> block with arguments that follow the tool's schema,
// the tool runs, its result goes back as a tool message in the next
// turn's prompt, and the step budget ends the goal. TestTranscriptToolTurn
// replays what the engine answered.
func TestEngineToolTurn(t *testing.T) {
	checkToolTurn(t, engine.Live(t, "toolloop_turn", engine.Config{Window: 4096, ToolChoice: "required"}, engineUpdate()))
}

func TestTranscriptToolTurn(t *testing.T) {
	for _, eng := range engine.Engines {
		t.Run(eng, func(t *testing.T) { checkToolTurn(t, engine.ReplayedOn(t, "toolloop_turn", eng)) })
	}
}

func checkToolTurn(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	m, err := ollama.New(ollama.Config{URL: tg.URL, Model: tg.Model, HTTPClient: tg.Client})
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		notes []string
	)
	note := toolloop.NewTool("write_note", "Write a short note to the workspace.",
		func(ctx context.Context, a engineNoteArgs) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, a.Text)
			return "written", nil
		})
	exec, err := toolloop.New(toolloop.Config{Model: m, Tools: []toolloop.Tool{note}, MaxSteps: 2, MaxTokens: 200, NoMemory: true})
	require.NoError(t, err)
	var calls []json.RawMessage
	out, err := exec.Execute(ctx, existence.Assignment{
		AgentName: "Cipher",
		Goal:      identity.Goal{Objective: "write down what the workspace holds"},
		Report: func(e event.Event) {
			if e.Kind == event.ToolCall {
				calls = append(calls, json.RawMessage(e.Tool.Arguments))
			}
		},
	})
	require.NoError(t, err)
	require.Equal(t, identity.Abandoned, out.Status, "summary: %s", out.Summary)
	require.Equal(t, toolloop.StallStepBudget, out.Stall)
	require.Equal(t, 2, out.Steps)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, notes, 2, "each turn's tool call ran; calls: %s", calls)
	require.Positive(t, out.PromptTokens)
}
