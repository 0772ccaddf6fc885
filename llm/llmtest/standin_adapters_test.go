package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// adapters are the SDK's model adapters pointed at a stand-in: what a
// user's test does with llmtest.NewServer.
var adapters = []struct {
	name string
	api  string
	new  func(t *testing.T, url, model string) llm.Model
}{
	{"ollama", "ollama", func(t *testing.T, url, model string) llm.Model {
		m, err := ollama.New(ollama.Config{URL: url, Model: model})
		require.NoError(t, err)
		return m
	}},
	{"openai", "openai", func(t *testing.T, url, model string) llm.Model {
		m, err := openai.New(openai.Config{BaseURL: url + "/v1", Model: model})
		require.NoError(t, err)
		return m
	}},
}

func userRequest(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Cedar, a scout."},
		{Role: llm.RoleUser, Content: text},
	}}
}

// Through either adapter the stand-in answers as its Reply says, the
// adapter's token counts are the server's, and the server records what
// the adapter sent.
func TestStandinThroughAdapters(t *testing.T) {
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{Record: true, Reply: func(c *llmtest.Call) llmtest.Answer {
				return llmtest.Answer{Text: fmt.Sprintf("you said %d things", len(c.Messages))}
			}})
			url := s.Start()
			t.Cleanup(s.Close)
			m := a.new(t, url, "qwen3.5:9b")
			resp, err := m.Generate(t.Context(), userRequest("map the workspace"))
			require.NoError(t, err)
			assert.Equal(t, "you said 2 things", resp.Text)
			assert.Equal(t, llm.DoneStop, resp.DoneReason)
			calls := s.Calls()
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Equal(t, a.api, c.API)
			assert.Equal(t, "qwen3.5:9b", c.Model)
			assert.Equal(t, "map the workspace", c.Messages[1].Content)
			assert.Equal(t, c.Kept, resp.PromptTokens, "the prompt tokens are the server's count")
			assert.Equal(t, llmtest.CountTokens(resp.Text), resp.OutputTokens, "the output tokens are the stand-in tokenizer's")
			assert.Positive(t, c.MaxTokens, "every request bounds its reply")
		})
	}
}

// A structured-output request gets, from the default Reply, a minimal
// existence reply that parses as JSON with the schema's required keys.
func TestStandinDefaultStructuredReply(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"}},"required":["action","content"]}`)
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{})
			url := s.Start()
			t.Cleanup(s.Close)
			req := userRequest("what next?")
			req.Format = schema
			resp, err := a.new(t, url, "qwen3.5:9b").Generate(t.Context(), req)
			require.NoError(t, err)
			var reply map[string]any
			require.NoError(t, json.Unmarshal([]byte(resp.Text), &reply), "%s", resp.Text)
			assert.NotEmpty(t, reply["action"])
			assert.NotEmpty(t, reply["content"])

			plain, err := a.new(t, url, "qwen3.5:9b").Generate(t.Context(), userRequest("hello"))
			require.NoError(t, err)
			assert.Equal(t, "ok", plain.Text, "anything else gets ok")
		})
	}
}

// The stand-in's failures reach a user of either adapter classified as
// a real server's would be: a missing model, a full queue (503, with
// Retry-After when configured), a reply cut at its limit, an error
// status of the Reply.
func TestStandinFailuresThroughAdapters(t *testing.T) {
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			t.Run("model missing", func(t *testing.T) {
				s := llmtest.NewServer(llmtest.ServerConfig{})
				url := s.Start()
				t.Cleanup(s.Close)
				_, err := a.new(t, url, "nope:1b").Generate(t.Context(), userRequest("x"))
				require.ErrorIs(t, err, llm.ErrModelNotFound)
				assert.Contains(t, err.Error(), "nope:1b")
			})
			t.Run("queue full", func(t *testing.T) {
				release := make(chan struct{})
				entered := make(chan struct{}, 1)
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
				m := a.new(t, url, "qwen3.5:9b")
				var wg sync.WaitGroup
				wg.Go(func() {
					_, err := m.Generate(t.Context(), userRequest("first"))
					assert.NoError(t, err)
				})
				<-entered
				_, err := m.Generate(t.Context(), userRequest("second"))
				close(release)
				wg.Wait()
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 503, se.StatusCode)
				assert.Equal(t, 2*time.Second, se.RetryAfter, "whole seconds, rounded up")
				assert.True(t, middleware.Retryable(err))
				assert.Equal(t, 1, s.Stats().Busy)
			})
			t.Run("cut at the limit", func(t *testing.T) {
				s := llmtest.NewServer(llmtest.ServerConfig{Reply: func(*llmtest.Call) llmtest.Answer {
					return llmtest.Answer{Text: strings.Repeat("word ", 200)}
				}})
				url := s.Start()
				t.Cleanup(s.Close)
				req := userRequest("talk a lot")
				req.MaxTokens = 10
				_, err := a.new(t, url, "qwen3.5:9b").Generate(t.Context(), req)
				var te *llm.TruncatedError
				require.ErrorAs(t, err, &te)
				require.NotNil(t, te.Response)
				assert.Equal(t, 10, te.Response.OutputTokens, "the reply stops at its limit")
				assert.Equal(t, llm.DoneLength, te.Response.DoneReason)
			})
			t.Run("reply status", func(t *testing.T) {
				s := llmtest.NewServer(llmtest.ServerConfig{Reply: func(*llmtest.Call) llmtest.Answer {
					return llmtest.Answer{Status: 500, Error: "the runner crashed"}
				}})
				url := s.Start()
				t.Cleanup(s.Close)
				_, err := a.new(t, url, "qwen3.5:9b").Generate(t.Context(), userRequest("x"))
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 500, se.StatusCode)
				assert.Contains(t, se.Message, "the runner crashed")
			})
		})
	}
}

// Latency holds a slot for the configured time through the injected
// Sleep, and Stats count the slot time and the most requests at once.
func TestStandinLatencyAndSlotTime(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	s := llmtest.NewServer(llmtest.ServerConfig{Slots: 2,
		LatencyFunc: func(c *llmtest.Call) time.Duration {
			return time.Duration(len(c.Messages[1].Content)) * time.Millisecond
		},
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
			return nil
		}})
	url := s.Start()
	t.Cleanup(s.Close)
	m := adapters[0].new(t, url, "qwen3.5:9b")
	for _, text := range []string{"abc", "abcdefghij"} {
		_, err := m.Generate(t.Context(), userRequest(text))
		require.NoError(t, err)
	}
	assert.Equal(t, []time.Duration{3 * time.Millisecond, 10 * time.Millisecond}, slept, "LatencyFunc decides per call")
	st := s.Stats()
	assert.Equal(t, 2, st.Requests)
	assert.Equal(t, 1, st.MaxInFlight)
	assert.Zero(t, st.Running)
	assert.Zero(t, st.Waiting)
	u := s.Utilisation()
	assert.GreaterOrEqual(t, u, 0.0)
	assert.LessOrEqual(t, u, 1.0)
}

// A request whose context ends while it holds a slot frees the slot:
// the next request runs.
func TestStandinCancelFreesTheSlot(t *testing.T) {
	entered := make(chan struct{}, 2)
	s := llmtest.NewServer(llmtest.ServerConfig{Slots: 1, Latency: time.Hour,
		Sleep: func(ctx context.Context, d time.Duration) error {
			entered <- struct{}{}
			if d == time.Hour {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
		LatencyFunc: func(c *llmtest.Call) time.Duration {
			if strings.Contains(c.Messages[1].Content, "hang") {
				return time.Hour
			}
			return time.Millisecond
		}})
	url := s.Start()
	t.Cleanup(s.Close)
	m := adapters[0].new(t, url, "qwen3.5:9b")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := m.Generate(ctx, userRequest("hang here"))
		done <- err
	}()
	<-entered
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	_, err = m.Generate(t.Context(), userRequest("next one"))
	require.NoError(t, err, "the slot was freed")
	assert.False(t, errors.Is(err, context.Canceled))
}

// With a KV cache, a request that extends the previous prompt is
// evaluated only after the cached prefix: Ollama's prompt_eval_count,
// which the ollama adapter reports as PromptTokens, counts the new
// tokens alone; the server's stats split cached and evaluated tokens.
func TestStandinKVCacheThroughAdapter(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 1, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	m := adapters[0].new(t, url, "qwen3.5:9b")
	first := userRequest("read the notes and map the workspace, file by file")
	r1, err := m.Generate(t.Context(), first)
	require.NoError(t, err)
	second := userRequest("read the notes and map the workspace, file by file")
	second.Messages = append(second.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: r1.Text},
		llm.Message{Role: llm.RoleUser, Content: "now the next step"})
	r2, err := m.Generate(t.Context(), second)
	require.NoError(t, err)
	calls := s.Calls()
	require.Len(t, calls, 2)
	assert.Zero(t, calls[0].Cached, "a cold cache")
	assert.Positive(t, calls[1].Cached, "the first prompt is the second's cached prefix")
	assert.Equal(t, calls[1].Kept-calls[1].Cached, calls[1].Evaluated)
	assert.Equal(t, calls[1].Evaluated, r2.PromptTokens, "prompt_eval_count counts the evaluated tokens only")
	assert.Less(t, r2.PromptTokens, calls[1].Kept)
	st := s.Stats()
	assert.Equal(t, calls[1].Cached, st.CachedTokens)
	assert.Equal(t, st.PromptTokens, st.CachedTokens+st.EvaluatedTokens)
	assert.InDelta(t, float64(st.CachedTokens)/float64(st.PromptTokens), st.CachedShare(), 1e-9)
}
