package existence_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/internal/engine"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ollama"
)

var engineUpdate = engine.UpdateFlag()

// One existence cycle against a real engine (package internal/engine;
// skipped without one) through the Ollama adapter: the reply, constrained
// by the response schema's grammar, validates, and the goal it chose is
// the agent's. TestTranscriptCycle replays what the engine answered.
func TestEngineCycle(t *testing.T) {
	checkCycle(t, engine.Live(t, "existence_cycle", engine.Config{Window: 4096}, engineUpdate()))
}

func TestTranscriptCycle(t *testing.T) {
	for _, eng := range engine.Engines {
		t.Run(eng, func(t *testing.T) { checkCycle(t, engine.ReplayedOn(t, "existence_cycle", eng)) })
	}
}

func checkCycle(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	m, err := ollama.New(ollama.Config{URL: tg.URL, Model: tg.Model, HTTPClient: tg.Client})
	require.NoError(t, err)
	rec := &existencetest.Recorder{}
	agent, err := existence.New(ctx, existence.Config{
		ID:    "scout",
		Name:  "Cedar",
		Model: m,
		Calls: existence.CallConfig{
			Seed:      llm.Ptr(11),
			MaxTokens: 1000,
		},
		Observer: rec.Observe,
	})
	require.NoError(t, err)
	defer agent.Close()
	require.NoError(t, agent.Tick(ctx))

	events := rec.Events()
	var chosen []string
	for _, e := range events {
		require.NotEqual(t, event.Fallback, e.Kind, "the reply did not validate: %s", e.Text)
		require.NotEqual(t, event.ContextOverflow, e.Kind, "%s", e.Text)
		if e.Kind == event.GoalChosen {
			chosen = append(chosen, e.Text)
		}
	}
	require.Len(t, chosen, 1, "events: %s", kinds(events))
	require.NotEmpty(t, chosen[0])
}

func kinds(events []event.Event) string {
	var ks []event.Kind
	for _, e := range events {
		ks = append(ks, e.Kind)
	}
	b, _ := json.Marshal(ks)
	return string(b)
}
