package existence_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/prompt"
)

// TestLiveCycle runs one real existence cycle against a local Ollama server:
// the default prompt, the response schema as the format, parsing and the
// spec §3 field table. It is skipped unless EXISTENCE_LIVE_OLLAMA=1; the
// model comes from EXISTENCE_LIVE_MODEL (default qwen3.5:9b) and the server
// from OLLAMA_HOST:
//
//	EXISTENCE_LIVE_OLLAMA=1 go test -run Live -v ./existence ./llm/ollama
func TestLiveCycle(t *testing.T) {
	if os.Getenv("EXISTENCE_LIVE_OLLAMA") != "1" {
		t.Skip("set EXISTENCE_LIVE_OLLAMA=1 to run one cycle against a local Ollama server")
	}
	name := os.Getenv("EXISTENCE_LIVE_MODEL")
	if name == "" {
		name = "qwen3.5:9b"
	}
	model, err := ollama.New(ollama.Config{Model: name})
	require.NoError(t, err)
	rec := &existencetest.Recorder{}
	a, err := existence.New(context.Background(), existence.Config{
		ID: "scout", Name: "Cedar", Model: model,
		Prompt:   prompt.New(prompt.Config{World: "You are a process on a developer's machine, in a test. You have no tools."}),
		Observer: func(e event.Event) { t.Log(e); rec.Observe(e) },
	})
	require.NoError(t, err)
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, a.Tick(ctx))
	assert.Empty(t, rec.Kind(event.Fallback), "the model's reply was used, not the fallback goal")
	g := a.State().Identity.ActiveGoal()
	require.NotNil(t, g)
	assert.NotEmpty(t, g.Objective)
}
