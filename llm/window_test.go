package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
)

// prompt returns a request whose single message has n characters, so that
// its raw estimate is n/4 + the message overhead.
func prompt(n int) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("a", n)}}}
}

func TestRawTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"日本語の", 1}, // characters, not bytes
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, llm.RawTokens(tc.text), "%q", tc.text)
	}
	req := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("a", 40)}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "read", Arguments: []byte(`{"path":"x"}`)}}}},
		Tools:    []llm.ToolDef{{Name: "read", Description: "reads", Parameters: []byte(`{"type":"object"}`)}},
	}
	// 2 messages × 4 overhead + 10 content + name 1 + arguments 3 + tools JSON.
	assert.Equal(t, 8+10+1+3+18, llm.RawRequestTokens(req))
}

// TestEstimatorCalibration pins the exponentially weighted ratio: the first
// observation sets it, later ones move it a fifth of the way, within
// [0.25, 4]; a nil estimator is characters / 4.
func TestEstimatorCalibration(t *testing.T) {
	var nilEst *llm.TokenEstimator
	assert.Equal(t, 25, nilEst.Tokens(strings.Repeat("a", 100)))
	nilEst.Observe(10, 20) // no panic, no effect

	e := llm.NewTokenEstimator()
	r, n := e.Ratio()
	assert.Equal(t, 1.0, r)
	assert.Zero(t, n)
	e.Observe(100, 130)
	r, n = e.Ratio()
	assert.InDelta(t, 1.3, r, 1e-9)
	assert.Equal(t, 1, n)
	e.Observe(100, 80) // 1.3 + 0.2 × (0.8 − 1.3) = 1.2
	r, _ = e.Ratio()
	assert.InDelta(t, 1.2, r, 1e-9)
	assert.Equal(t, 120, e.Scale(100))
	assert.Equal(t, 30, e.Tokens(strings.Repeat("a", 100)))

	e.Observe(0, 50) // ignored
	e.Observe(10, 0) // ignored
	_, n = e.Ratio()
	assert.Equal(t, 2, n)

	f := llm.NewTokenEstimator()
	f.Observe(10, 1000) // clamped
	r, _ = f.Ratio()
	assert.Equal(t, 4.0, r)
}

// TestTrackerSteps pins the windows asked for: the smallest step that holds
// the prompt and the reserve, never lower than before, never above the
// usable window.
func TestTrackerSteps(t *testing.T) {
	tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
	tr.SetLength(40960)
	assert.Equal(t, 32768, tr.Window(), "the model's length capped at 32768 without a ceiling")

	p, err := tr.Plan("p", "m", prompt(4000), 0) // 1004 tokens + 1024
	require.NoError(t, err)
	assert.Equal(t, 4096, p.Window)
	assert.Equal(t, 1024, p.Reserve)

	p, err = tr.Plan("p", "m", prompt(20000), 0) // 5004 + 1024
	require.NoError(t, err)
	assert.Equal(t, 8192, p.Window)

	p, err = tr.Plan("p", "m", prompt(400), 0)
	require.NoError(t, err)
	assert.Equal(t, 8192, p.Window, "never stepped down: Ollama reloads the model at every change")

	p, err = tr.Plan("p", "m", prompt(100000), 0) // 25004 + 1024
	require.NoError(t, err)
	assert.Equal(t, 32768, p.Window)

	_, err = tr.Plan("p", "m", prompt(130000), 0)
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce, "over the ceiling: refused before sending")
	assert.Equal(t, 32768, ce.Window)
	assert.Equal(t, 32504, ce.Prompt)
	assert.Zero(t, ce.Kept)
	require.ErrorIs(t, err, llm.ErrContextLength)

	t.Run("operator ceiling", func(t *testing.T) {
		tr := &llm.ContextTracker{Ceiling: 12000, Default: llm.DefaultMaxWindow}
		tr.SetLength(131072)
		p, err := tr.Plan("p", "m", prompt(36000), 0) // 9004 + 1024
		require.NoError(t, err)
		assert.Equal(t, 12000, p.Window, "a step above the ceiling is cut to it")
	})
	t.Run("short model", func(t *testing.T) {
		tr := &llm.ContextTracker{Ceiling: 65536, Default: llm.DefaultMaxWindow}
		tr.SetLength(8192)
		assert.Equal(t, 8192, tr.Window())
	})
	t.Run("unknown", func(t *testing.T) {
		tr := &llm.ContextTracker{}
		assert.Zero(t, tr.Window())
		p, err := tr.Plan("p", "m", prompt(1_000_000), 0)
		require.NoError(t, err, "nothing known: the server decides")
		assert.Zero(t, p.Window)
	})
	t.Run("reserve", func(t *testing.T) {
		assert.Equal(t, 512, llm.Reserve(nil, 0, 2048), "a quarter of a small window")
		assert.Equal(t, 1024, llm.Reserve(nil, 0, 8192))
		assert.Equal(t, 300, llm.Reserve(&llm.Request{MaxTokens: 300}, 0, 8192))
		assert.Equal(t, 99, llm.Reserve(&llm.Request{MaxTokens: 300}, 99, 8192))
	})
}

// TestTrackerObserve pins cut detection and what it teaches.
func TestTrackerObserve(t *testing.T) {
	t.Run("whole prompts calibrate", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(8000), 0) // raw 2004
		assert.False(t, tr.Observe(p, 2600))
		r, n := tr.Estimator().Ratio()
		assert.InDelta(t, 2600.0/2004, r, 1e-9)
		assert.Equal(t, 1, n)
		assert.Zero(t, tr.Overflows())
	})
	t.Run("a far lower count is a cut", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(24000), 0) // 6004 tokens, asks 8192
		assert.True(t, tr.Observe(p, 2048))
		assert.Equal(t, 2048, tr.Window(), "the server grants what it kept")
		_, n := tr.Estimator().Ratio()
		assert.Zero(t, n, "a cut prompt says nothing about the tokenizer")
		assert.Equal(t, 1, tr.Overflows())
		p, _ = tr.Plan("p", "m", prompt(4000), 0)
		assert.Equal(t, 2048, p.Window, "the step drops to what the server grants")
	})
	t.Run("a whole window's worth is a cut", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(8000), 0) // 2004 tokens, asks 4096
		assert.True(t, tr.Observe(p, 4090))
	})
	t.Run("small counts are never cuts", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(800), 0)
		assert.False(t, tr.Observe(p, 40), "no server grants under 1024 tokens")
	})
	t.Run("calibrated: tighter", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		for range 3 {
			p, _ := tr.Plan("p", "m", prompt(4000), 0)
			require.False(t, tr.Observe(p, 1004))
		}
		p, _ := tr.Plan("p", "m", prompt(12000), 0) // 3004
		assert.True(t, tr.Observe(p, 2500), "under 85 %% of a calibrated estimate")
	})
	t.Run("refused with a limit", func(t *testing.T) {
		tr := &llm.ContextTracker{}
		p, _ := tr.Plan("p", "m", prompt(40000), 0)
		tr.Refused(p, 8192)
		assert.Equal(t, 8192, tr.Window())
	})
	t.Run("refused without a limit", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(20000), 0) // 5004 + 1024
		tr.Refused(p, 0)
		assert.Equal(t, (5004+1024)*4/5, tr.Window(), "below the refused prompt")
		_, err := tr.Plan("p", "m", prompt(20000), 0)
		require.ErrorIs(t, err, llm.ErrContextLength, "the same prompt is not sent again")
	})
}

func TestContextLengthErrorMessage(t *testing.T) {
	cut := &llm.ContextLengthError{Provider: "ollama", Model: "m", Window: 2048, Prompt: 6000, Kept: 2048}
	assert.Equal(t, `ollama: model "m": the server cut the prompt from about 6000 to 2048 tokens (its context window)`, cut.Error())
	refused := &llm.ContextLengthError{Provider: "openai", Model: "m", Window: 4096, Prompt: 5000, Message: "too long"}
	assert.Equal(t, `openai: model "m": a prompt of about 5000 tokens does not fit the context window of 4096 tokens: too long`, refused.Error())
	assert.Equal(t, llm.OutcomeContextLength, llm.Classify(refused))
	assert.False(t, llm.Retryable(refused), "the same prompt fails again: the caller shrinks it")
}

type windowed struct {
	llm.Model
	n int
}

func (w windowed) ContextWindow(context.Context) (int, *llm.TokenEstimator, error) {
	return w.n, llm.NewTokenEstimator(), nil
}

// TestContextWindowOf finds the window through every middleware.
func TestContextWindowOf(t *testing.T) {
	base := windowed{n: 8192}
	stack := llm.WithRetry(llm.WithTimeout(llm.Instrument(llm.NewLimiter(1).Limit(llm.WithRepair(base, func(string) error { return nil })), "m", func(llm.Attempt) {}), time.Minute), llm.RetryPolicy{})
	n, est, err := llm.ContextWindowOf(context.Background(), stack)
	require.NoError(t, err)
	assert.Equal(t, 8192, n)
	assert.NotNil(t, est)

	n, _, err = llm.ContextWindowOf(context.Background(), llm.Fallback(windowed{n: 8192}, windowed{n: 4096}))
	require.NoError(t, err)
	assert.Equal(t, 4096, n, "a fallback fits the smaller window")

	n, est, err = llm.ContextWindowOf(context.Background(), llm.WithRetry(noWindow{}, llm.RetryPolicy{}))
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Nil(t, est)
}

type noWindow struct{}

func (noWindow) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("unused")
}

// TestTrackerPlateau: a server that grants a little less than a prompt
// needs cuts it by less than the ratio rules catch; a window's worth of a
// round window, or the same count for a larger prompt, gives it away.
func TestTrackerPlateau(t *testing.T) {
	t.Run("round window", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(9200), 0) // 2304 tokens
		assert.True(t, tr.Observe(p, 2048), "2048 of 2304: a window's worth")
		assert.Equal(t, 2048, tr.Window())
		tr = &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ = tr.Plan("p", "m", prompt(4500), 0) // 1129 tokens
		assert.False(t, tr.Observe(p, 1026), "1024 is too common a prompt size to tell")
	})
	t.Run("same count, larger prompt", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(9200), 0)
		assert.False(t, tr.Observe(p, 2000), "alone, 2000 of 2304 is a tokenizer")
		p, _ = tr.Plan("p", "m", prompt(9800), 0)
		assert.True(t, tr.Observe(p, 2001), "the same count for a larger prompt is the server's window")
		assert.Equal(t, 2001, tr.Window())
		_, n := tr.Estimator().Ratio()
		assert.Zero(t, n, "the misleading observation no longer calibrates")
	})
	t.Run("growing prompts are not a plateau", func(t *testing.T) {
		tr := &llm.ContextTracker{Default: llm.DefaultMaxWindow}
		for _, n := range []int{8000, 8400, 8800, 9200} {
			p, _ := tr.Plan("p", "m", prompt(n), 0)
			assert.False(t, tr.Observe(p, n/4+3), "%d", n)
		}
	})
}
