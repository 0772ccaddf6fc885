package ollama_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// standin starts a stand-in Ollama and returns an adapter on it.
func standin(t *testing.T, cfg llmtest.ServerConfig, mc ollama.Config) (*ollama.Model, *llmtest.Server) {
	t.Helper()
	cfg.Record = true
	s := llmtest.NewServer(cfg)
	mc.URL = s.Start()
	t.Cleanup(s.Close)
	if mc.Model == "" {
		mc.Model = "qwen3.5:9b"
	}
	m, err := ollama.New(mc)
	require.NoError(t, err)
	return m, s
}

// words returns a prompt of about n stand-in tokens (and n raw tokens).
func words(n int) *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Cedar. Your goal: map the workspace."},
		{Role: llm.RoleUser, Content: strings.Repeat("work ", n)},
	}}
}

// TestWindowFromShow: the window comes from /api/show, requests ask for
// the smallest step that holds them and never step down, and a prompt over
// the model's length is refused before it is sent.
func TestWindowFromShow(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}}}, ollama.Config{})
	ctx := context.Background()
	w, est, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, 8192, w, "the model's length, under the default ceiling")
	assert.NotNil(t, est)

	for _, n := range []int{100, 5000, 100} {
		_, err := m.Generate(ctx, words(n))
		require.NoError(t, err, "%d tokens", n)
	}
	calls := s.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []int{4096, 8192, 8192}, []int{calls[0].NumCtx, calls[1].NumCtx, calls[2].NumCtx}, "steps, never down")
	for _, c := range calls {
		assert.False(t, c.Cut, "no prompt was cut")
	}
	assert.Equal(t, 2, s.Stats().Reloads)

	_, err = m.Generate(ctx, words(9000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 8192, ce.Window)
	assert.Zero(t, ce.Kept)
	assert.Len(t, s.Calls(), 3, "refused before it was sent: the server would cut its beginning")

	t.Run("ceiling", func(t *testing.T) {
		m, _ := standin(t, llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 131072}}}, ollama.Config{NumCtx: 16384})
		w, _, err := m.ContextWindow(ctx)
		require.NoError(t, err)
		assert.Equal(t, 16384, w, "the operator's ceiling bounds the KV cache")
	})
}

// TestCalibration: the estimator learns the server's tokenizer from
// prompt_eval_count.
func TestCalibration(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{}, ollama.Config{})
	ctx := context.Background()
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat(`{"path":"notes/a.md","ok":true},`, 60)}}}
	for range 3 {
		_, err := m.Generate(ctx, req)
		require.NoError(t, err)
	}
	_, est, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	ratio, n := est.Ratio()
	assert.Equal(t, 3, n)
	kept := s.Calls()[0].Kept
	assert.InDelta(t, float64(kept), float64(est.Request(req)), 2, "the calibrated estimate matches the server's count (ratio %.2f)", ratio)
	assert.Greater(t, ratio, 1.2, "JSON is more tokens per character than the raw estimate assumes")
}

// TestSilentCutDetected: a server that ignores "truncate": false and
// grants only 2048 tokens whatever num_ctx says. Every cut request is an
// error carrying what was kept, and later prompts are fitted to 2048.
func TestSilentCutDetected(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true}, ollama.Config{})
	ctx := context.Background()
	_, err := m.Generate(ctx, words(3000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce, "a cut is never silent")
	assert.Equal(t, 2048, ce.Kept)
	assert.Equal(t, 2048, ce.Window)
	require.NotNil(t, ce.Response, "its tokens were spent")
	assert.True(t, s.Calls()[0].Cut)

	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2048, w, "the window the server really grants")
	_, err = m.Generate(ctx, words(3000))
	require.ErrorIs(t, err, llm.ErrContextLength)
	assert.Len(t, s.Calls(), 1, "the same prompt is not sent to be cut again")

	_, err = m.Generate(ctx, words(1200))
	require.NoError(t, err, "a prompt fitted to 2048 goes through")
	last := s.Calls()[len(s.Calls())-1]
	assert.False(t, last.Cut)
	assert.Equal(t, 2048, last.NumCtx, "the step follows the granted window down")
}

// TestRefusalLearned: a current server refuses a prompt over the window it
// grants (HTTP 400); the adapter reports it typed and shrinks its window.
func TestRefusalLearned(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048}, ollama.Config{})
	ctx := context.Background()
	_, err := m.Generate(ctx, words(3000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	assert.Zero(t, ce.Kept)
	assert.Contains(t, ce.Message, "exceeds the available context size")
	assert.Equal(t, 1, s.Stats().Refused)
	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Less(t, w, 3000+1024, "below the refused prompt")
}
