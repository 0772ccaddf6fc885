package ctxwindow_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/middleware"
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
	tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
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
	assert.Equal(t, 1024, ce.Reserve, "the reply's reserve, with which the estimate missed")
	assert.Zero(t, ce.Kept)
	require.ErrorIs(t, err, llm.ErrContextLength)

	t.Run("operator ceiling", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Ceiling: 12000, Default: ctxwindow.DefaultMaxWindow}
		tr.SetLength(131072)
		p, err := tr.Plan("p", "m", prompt(36000), 0) // 9004 + 1024
		require.NoError(t, err)
		assert.Equal(t, 12000, p.Window, "a step above the ceiling is cut to it")
	})
	t.Run("short model", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Ceiling: 65536, Default: ctxwindow.DefaultMaxWindow}
		tr.SetLength(8192)
		assert.Equal(t, 8192, tr.Window())
	})
	t.Run("unknown", func(t *testing.T) {
		tr := &ctxwindow.Tracker{}
		assert.Zero(t, tr.Window())
		p, err := tr.Plan("p", "m", prompt(1_000_000), 0)
		require.NoError(t, err, "nothing known: the server decides")
		assert.Zero(t, p.Window)
	})
	t.Run("reply limit a quarter of the window sent", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		tr.SetLength(8192)
		req := prompt(400)
		req.MaxTokens = 2000
		p, err := tr.Plan("p", "m", req, 0) // 104 + 2000 fits 4096
		require.NoError(t, err)
		assert.Equal(t, 4096, p.Window)
		assert.Equal(t, 1024, p.Reserve, "a quarter of the 4096 sent, not of the model's 8192")
	})
	t.Run("held window", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		tr.SetLength(8192)
		tr.Hold(16384)
		p, err := tr.Plan("p", "m", prompt(400), 0)
		require.NoError(t, err)
		assert.Equal(t, 8192, p.Window, "held from the first request, capped at the usable window")
		assert.Equal(t, 1024, p.Reserve)
		tr.Hold(4096)
		p, err = tr.Plan("p", "m", prompt(400), 0)
		require.NoError(t, err)
		assert.Equal(t, 8192, p.Window, "a lower hold lowers nothing")
	})
	t.Run("reserve", func(t *testing.T) {
		assert.Equal(t, 512, ctxwindow.Reserve(nil, 0, 2048), "a quarter of a small window")
		assert.Equal(t, 1024, ctxwindow.Reserve(nil, 0, 8192))
		assert.Equal(t, 300, ctxwindow.Reserve(&llm.Request{MaxTokens: 300}, 0, 8192))
		assert.Equal(t, 99, ctxwindow.Reserve(&llm.Request{MaxTokens: 300}, 99, 8192))
		assert.Equal(t, 512, ctxwindow.Reserve(&llm.Request{MaxTokens: 2000}, 0, 2048), "at most a quarter of a known window")
		assert.Equal(t, 2000, ctxwindow.Reserve(&llm.Request{MaxTokens: 2000}, 0, 8192))
		assert.Equal(t, 2000, ctxwindow.Reserve(&llm.Request{MaxTokens: 2000}, 0, 0))
	})
}

// TestTrackerRefused pins what refusals teach.
func TestTrackerRefused(t *testing.T) {
	t.Run("stated window", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(40000), 0)
		tr.Refused(p, 8192)
		assert.Equal(t, 8192, tr.Window())
		tr.Refused(p, 2048)
		assert.Equal(t, 2048, tr.Window(), "a stated window goes below any floor")
	})
	t.Run("refused without a limit", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(20000), 0) // 5004 + 1024
		tr.Refused(p, 0)
		assert.Equal(t, (5004+1024)*4/5, tr.Window(), "below the refused prompt")
		_, err := tr.Plan("p", "m", prompt(20000), 0)
		require.ErrorIs(t, err, llm.ErrContextLength, "the same prompt is not sent again")
	})
	t.Run("floor", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow, Floor: 4096}
		p, _ := tr.Plan("p", "m", prompt(14000), 0) // 3504 + 1024
		tr.Refused(p, 0)
		assert.Equal(t, 4096, tr.Window(), "not below the server's default on a guess")
		p, _ = tr.Plan("p", "m", prompt(10000), 0) // 2504 + 1024
		tr.Refused(p, 0)
		assert.Equal(t, (2504+1024)*4/5, tr.Window(), "a prompt that fits the default refused too: the server grants less")
	})
}

// turn is one tool-loop turn's request: the goal, then n file reads of
// size characters each.
func turn(n, size int) *llm.Request {
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Cedar. Your goal: survey the workspace."},
		{Role: llm.RoleUser, Content: "Survey the files."},
	}}
	for i := range n {
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: "Reading the next part.", ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: []byte(`{"path":"part"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: "c", Content: strings.Repeat(string(rune('a'+i%26)), size)})
	}
	return req
}

// TestTrackerObserve pins what a count shows: only evidence a KV-cache
// hit cannot produce is a cut, and a doubt is probed, not guessed.
func TestTrackerObserve(t *testing.T) {
	t.Run("a server that refuses never cut a reply", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		tr.SetRefuses(true)
		p, _ := tr.Plan("p", "m", prompt(24000), 0) // 6004 tokens
		assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: 2048}))
		assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: p.Window}))
		assert.Equal(t, ctxwindow.DefaultMaxWindow, tr.Window())
		assert.Zero(t, tr.Overflows())
	})
	t.Run("a window's worth of the window asked for", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(8000), 0) // 2004 + 1024: 4096
		require.Equal(t, 4096, p.Window)
		assert.Equal(t, ctxwindow.Cut, tr.Observe(p, ctxwindow.Count{Prompt: 4090}))
		assert.Equal(t, 4090, tr.Window())
	})
	t.Run("a window's worth of a round window", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(9200), 0) // 2304 tokens
		assert.Equal(t, ctxwindow.Cut, tr.Observe(p, ctxwindow.Count{Prompt: 2048}), "2048 of 2304, sharing nothing")
		assert.Equal(t, 2048, tr.Window())
		tr = &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ = tr.Plan("p", "m", prompt(4500), 0) // 1129 tokens
		assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: 1026}), "1024 is too common a prompt size to tell")
		tr = &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ = tr.Plan("p", "m", prompt(9200), 0)
		tr.Observe(p, ctxwindow.Count{Prompt: 2400})
		p, _ = tr.Plan("p", "m", prompt(9200), 0)
		assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: 2048}), "a prompt repeated may be a cache hit")
	})
	t.Run("a count under 1024 is never a cut", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(8000), 0)
		assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: 40}))
	})
	t.Run("far below a prompt sharing nothing", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", prompt(24000), 0) // 6004
		assert.Equal(t, ctxwindow.Cut, tr.Observe(p, ctxwindow.Count{Prompt: 2048}))
		assert.Equal(t, 2048, tr.Window())
		_, n := tr.Estimator().Ratio()
		assert.Zero(t, n, "a cut does not calibrate")
	})
	t.Run("a whole count far below", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", turn(0, 0), 0)
		tr.Observe(p, ctxwindow.Count{Prompt: 30, Whole: true})
		p, _ = tr.Plan("p", "m", turn(3, 8000), 0)
		assert.Equal(t, ctxwindow.Cut, tr.Observe(p, ctxwindow.Count{Prompt: 2048, Whole: true}), "a whole count is no cache hit")
	})
	t.Run("cache hits are not cuts", func(t *testing.T) {
		// Each turn adds a read of about 1,500 tokens; a cache that kept
		// the last turn counts only the new part.
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow, Floor: 4096}
		tr.SetLength(32768)
		prev := 0
		for n := 0; n <= 12; n++ {
			req := turn(n, 6000)
			p, err := tr.Plan("p", "m", req, 0)
			require.NoError(t, err)
			whole := llm.RawRequestTokens(req)
			reported := whole - prev // the tokens after the cached prefix
			if n == 0 {
				reported = whole
			}
			assert.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: reported}), "turn %d: %d of %d", n, reported, whole)
			prev = whole
		}
		assert.Equal(t, 32768, tr.Window(), "the window never shrank")
		assert.Zero(t, tr.Overflows())
		assert.Zero(t, tr.Probes())
	})
	t.Run("cache hits do not calibrate", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", turn(1, 6000), 0)
		tr.Observe(p, ctxwindow.Count{Prompt: 2000})
		r, n := tr.Estimator().Ratio()
		require.Equal(t, 1, n, "the first prompt, shared with nothing, calibrates")
		p, _ = tr.Plan("p", "m", turn(2, 6000), 0)
		tr.Observe(p, ctxwindow.Count{Prompt: 2000})
		r2, n2 := tr.Estimator().Ratio()
		assert.Equal(t, 1, n2, "a prompt that shares most of itself may be a cache hit")
		assert.Equal(t, r, r2)
		p, _ = tr.Plan("p", "m", turn(2, 6000), 0)
		tr.Observe(p, ctxwindow.Count{Prompt: 3200, Whole: true})
		_, n3 := tr.Estimator().Ratio()
		assert.Equal(t, 2, n3, "a count the server says is whole calibrates")
	})
	t.Run("a doubt is probed", func(t *testing.T) {
		tr := &ctxwindow.Tracker{Default: ctxwindow.DefaultMaxWindow}
		p, _ := tr.Plan("p", "m", turn(1, 6000), 0)
		require.Equal(t, ctxwindow.Kept, tr.Observe(p, ctxwindow.Count{Prompt: 1540}))
		// The next turn reads 4,000 characters more (about 1,000 tokens):
		// a cache hit counts those, a whole prompt about 2,560; 1,800 is
		// neither, beyond the estimate's error.
		next := turn(1, 6000)
		next.Messages = append(next.Messages, turn(2, 4000).Messages[4:]...)
		p, _ = tr.Plan("p", "m", next, 0)
		assert.Equal(t, ctxwindow.Unsure, tr.Observe(p, ctxwindow.Count{Prompt: 1800}))
		assert.Equal(t, 1, tr.Probes())
		assert.Equal(t, ctxwindow.DefaultMaxWindow, tr.Window(), "a doubt lowers nothing")
		assert.False(t, tr.Probed(p, p.Tokens+5), "the probe counted the whole prompt")
		assert.Equal(t, ctxwindow.DefaultMaxWindow, tr.Window())
		assert.True(t, tr.Probed(p, 1800), "the probe kept a window's worth")
		assert.Equal(t, 1800, tr.Window())
		assert.Equal(t, 1, tr.Overflows())
	})
}

func TestContextLengthErrorMessage(t *testing.T) {
	cut := &llm.ContextLengthError{Provider: "ollama", Model: "m", Window: 2048, Prompt: 6000, Kept: 2048}
	assert.Equal(t, `ollama: model "m": the server cut the prompt from about 6000 to 2048 tokens (its context window)`, cut.Error())
	refused := &llm.ContextLengthError{Provider: "openai", Model: "m", Window: 4096, Prompt: 5000, Message: "too long"}
	assert.Equal(t, `openai: model "m": a prompt of about 5000 tokens does not fit the context window of 4096 tokens: too long`, refused.Error())
	estimated := &llm.ContextLengthError{Provider: "ollama", Model: "m", Window: 2048, Prompt: 1900, Reserve: 512}
	assert.Equal(t, `ollama: model "m": a prompt of about 1900 tokens and its reply's reserve of 512 do not fit the context window of 2048 tokens (about 364 over, by the estimate; not sent)`, estimated.Error(), "a refusal on an estimate says by how much it missed")
	assert.Equal(t, middleware.OutcomeContextLength, middleware.Classify(refused))
	assert.False(t, middleware.Retryable(refused), "the same prompt fails again: the caller shrinks it")
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
	stack := middleware.WithRetry(middleware.WithTimeout(middleware.Instrument(middleware.NewLimiter(1).Limit(middleware.WithRepair(base, func(string) error { return nil })), "m", func(middleware.Attempt) {}), time.Minute), middleware.RetryPolicy{})
	n, est, err := llm.ContextWindowOf(context.Background(), stack)
	require.NoError(t, err)
	assert.Equal(t, 8192, n)
	assert.NotNil(t, est)

	n, _, err = llm.ContextWindowOf(context.Background(), middleware.Fallback(windowed{n: 8192}, windowed{n: 4096}))
	require.NoError(t, err)
	assert.Equal(t, 4096, n, "a fallback fits the smaller window")

	n, est, err = llm.ContextWindowOf(context.Background(), middleware.WithRetry(noWindow{}, middleware.RetryPolicy{}))
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Nil(t, est)
}

type noWindow struct{}

func (noWindow) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("unused")
}

// TestParseContextRefusal: every wording a server uses for a prompt over
// its window, with the window and the prompt it states.
func TestParseContextRefusal(t *testing.T) {
	for _, tc := range []struct {
		msg, code      string
		window, prompt int
	}{
		{"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it", "", 4096, 4476},
		{"request (3038 tokens) exceeds the available context size (2048 tokens), try increasing it", "exceed_context_size_error", 2048, 3038},
		{"the request exceeds the available context size, try increasing it", "exceed_context_size_error", 0, 0},
		{"Something went wrong", "exceed_context_size_error", 0, 0},
		{"the input length exceeds the context length", "", 0, 0},
		{"input exceeds maximum context length and cannot be truncated further", "", 0, 0},
		{"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", "context_length_exceeded", 8192, 9000},
		{"Input too long", "context_length_exceeded", 0, 0},
		{"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "", 4096, 4000},
		{"'max_tokens' is too large: 1000. This model's maximum context length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - 3500).", "", 4096, 3500},
		{"request (99999999999 tokens) exceeds the available context size (4096 tokens)", "", 4096, 0},
	} {
		w, p, ok := llm.ParseContextRefusal(tc.msg, tc.code)
		assert.True(t, ok, tc.msg)
		assert.Equal(t, tc.window, w, tc.msg)
		assert.Equal(t, tc.prompt, p, tc.msg)
	}
	for _, msg := range []string{"model \"x\" not found, try pulling it first", "server busy, please try again.  maximum pending requests exceeded", "invalid character 'x'", ""} {
		_, _, ok := llm.ParseContextRefusal(msg, "")
		assert.False(t, ok, msg)
	}
}

// FuzzParseContextRefusal: any message gives non-negative numbers, and a
// number is only ever one the message holds.
func FuzzParseContextRefusal(f *testing.F) {
	f.Add("request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it", "")
	f.Add("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", "")
	f.Add("the input length exceeds the context length", "context_length_exceeded")
	f.Fuzz(func(t *testing.T, msg, code string) {
		w, p, ok := llm.ParseContextRefusal(msg, code)
		if !ok {
			require.Zero(t, w)
			require.Zero(t, p)
			return
		}
		require.GreaterOrEqual(t, w, 0)
		require.GreaterOrEqual(t, p, 0)
		if w > 0 {
			require.Contains(t, msg, strconv.Itoa(w))
		}
		if p > 0 {
			require.Contains(t, msg, strconv.Itoa(p))
		}
	})
}
