package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
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
		{"ollama", 4096, true},
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

func TestContextWindowConfigured(t *testing.T) {
	m, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ContextWindow: 8192})
	require.NoError(t, err)
	w, _, err := m.ContextWindow(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8192, w)
	_, err = m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("a", 40000)}}})
	require.ErrorIs(t, err, llm.ErrContextLength, "never sent: the window is known")
}
