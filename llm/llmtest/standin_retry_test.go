package llmtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/openai"
)

// TestStandinRetryAfter: a full server answers 503 with Retry-After, and
// middleware.WithRetry waits exactly that long (no jitter) before the retry that
// succeeds, through both adapters.
func TestStandinRetryAfter(t *testing.T) {
	for _, api := range []string{"ollama", "openai"} {
		t.Run(api, func(t *testing.T) {
			release := make(chan struct{})
			entered := make(chan struct{}, 4)
			s := llmtest.NewServer(llmtest.ServerConfig{Slots: 1, Queue: -1, RetryAfter: 1500 * time.Millisecond, Latency: time.Nanosecond,
				Sleep: func(ctx context.Context, _ time.Duration) error {
					entered <- struct{}{}
					select {
					case <-release:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}})
			url := s.Start()
			t.Cleanup(s.Close)
			var base llm.Model
			var err error
			if api == "ollama" {
				base, err = ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
			} else {
				base, err = openai.New(openai.Config{BaseURL: url + "/v1", Model: "qwen3.5:9b"})
			}
			require.NoError(t, err)

			var wg sync.WaitGroup
			wg.Go(func() { // holds the only slot until released
				_, err := base.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "first"}}})
				assert.NoError(t, err)
			})
			<-entered
			var waits []time.Duration
			m := middleware.WithRetry(base, middleware.RetryPolicy{Sleep: func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				close(release) // the slot frees while the client waits
				wg.Wait()
				return nil
			}})
			go func() { <-entered }() // the retry's own sleep
			resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "second"}}})
			require.NoError(t, err)
			assert.Equal(t, "ok", resp.Text)
			assert.Equal(t, []time.Duration{2 * time.Second}, waits, "Retry-After in whole seconds, honoured without jitter")
			assert.Equal(t, 1, s.Stats().Busy)
		})
	}
}
