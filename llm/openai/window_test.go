package openai_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
)

// TestContextWindowFlavors runs a prompt over a stand-in server's window
// against each server's way of answering it: the error is typed, carries
// the window when the server states it, and teaches the adapter the window.
func TestContextWindowFlavors(t *testing.T) {
	long := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("work ", 6000)}}}
	tests := []struct {
		flavor string
		window int // stated by the server, 0: not stated
		kept   bool
	}{
		{"openai", 4096, false},
		{"vllm", 4096, false},
		{"llamacpp", 4096, false},
	}
	for _, tc := range tests {
		t.Run(tc.flavor, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{OpenAIFlavor: tc.flavor})
			url := s.Start()
			t.Cleanup(s.Close)
			for _, stream := range []bool{false, true} {
				m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b", Stream: stream})
				require.NoError(t, err)
				w, _, err := m.ContextWindow(context.Background())
				require.NoError(t, err)
				assert.Zero(t, w, "unknown until the server says")

				_, err = m.Generate(context.Background(), long)
				var ce *llm.ContextLengthError
				require.ErrorAs(t, err, &ce)
				if tc.kept {
					assert.Equal(t, 4096, ce.Kept, "a silent cut is caught from usage.prompt_tokens")
				} else {
					assert.Zero(t, ce.Kept)
					assert.NotEmpty(t, ce.Message)
				}
				w, _, err = m.ContextWindow(context.Background())
				require.NoError(t, err)
				assert.Equal(t, tc.window, w)
				_, err = m.Generate(context.Background(), long)
				require.ErrorIs(t, err, llm.ErrContextLength, "refused before sending, now that the window is known")
			}
		})
	}
}

// TestOllamaEndpoint: Ollama's OpenAI-compatible endpoint drops num_ctx, so
// its default window applies. The adapter finds out from /api/version,
// warns once, sizes prompts to 4096 tokens, and still catches a cut.
func TestOllamaEndpoint(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{OpenAIFlavor: "ollama", Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	var logs strings.Builder
	m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	ctx := context.Background()
	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, ctxwindow.OllamaDefaultWindow, w, "Ollama's default window")
	assert.Equal(t, llmtest.DefaultVersion, m.Ollama())
	_, err = m.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("work ", 6000)}}})
	require.ErrorIs(t, err, llm.ErrContextLength, "refused before sending: it would be cut")
	_, err = m.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("work ", 2000)}}})
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "the server is Ollama"), "warned once:\n%s", logs.String())
	require.Len(t, s.Calls(), 1)
	assert.Positive(t, s.Calls()[0].MaxTokens, "a reply limit")

	t.Run("cut caught", func(t *testing.T) {
		// The estimate is short of the server's count (JSON is more tokens
		// a character than prose): the server cuts, and the count shows.
		m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b", Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		_, err = m.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat(`{"a":[1,2]},`, 900)}}})
		var ce *llm.ContextLengthError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 4096, ce.Kept)
	})
	t.Run("not ollama", func(t *testing.T) {
		s := llmtest.NewServer(llmtest.ServerConfig{OpenAIFlavor: "llamacpp"})
		url := s.Start()
		t.Cleanup(s.Close)
		m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b"})
		require.NoError(t, err)
		w, _, err := m.ContextWindow(ctx)
		require.NoError(t, err)
		assert.Zero(t, w)
		assert.Empty(t, m.Ollama())
	})
}

func TestContextWindowConfigured(t *testing.T) {
	m, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ContextWindow: 8192})
	require.NoError(t, err)
	w, _, err := m.ContextWindow(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8192, w)
	_, err = m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("a", 40000)}}})
	require.ErrorIs(t, err, llm.ErrContextLength, "never sent: the window is known")
}

// TestOllamaEndpointProbe: on Ollama's /v1, which cuts and (in some
// releases) counts after the cached prefix, a count that a cut or a cache
// hit could give is asked again with a prompt no cache holds.
func TestOllamaEndpointProbe(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{OpenAIFlavor: "ollama", CacheSlots: 1, MaxContext: 2560, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ctx := context.Background()
	survey := func(n int) string { return strings.Repeat("the survey lists every room ", n) }
	first := &llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are Cedar."},
		{Role: llm.RoleUser, Content: "a: " + survey(100)}, {Role: llm.RoleUser, Content: "b: " + survey(100)}, {Role: llm.RoleUser, Content: "c: " + survey(100)}}}
	_, err = m.Generate(ctx, first)
	require.NoError(t, err)
	second := &llm.Request{Messages: append(slices.Clone(first.Messages),
		llm.Message{Role: llm.RoleAssistant, Content: "ok"}, llm.Message{Role: llm.RoleUser, Content: "d: " + survey(50)})}
	_, err = m.Generate(ctx, second)
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce, "the probe showed the cut")
	calls := s.Calls()
	require.Len(t, calls, 3, "the request, then one probe")
	assert.True(t, calls[1].Cut)
	assert.Equal(t, 1, calls[2].MaxTokens, "the probe asks for one token")
	assert.Equal(t, calls[2].Evaluated, ce.Kept)
}
