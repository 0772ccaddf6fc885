package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// netTimeout is a network error whose Timeout() is true, like the one
// net/http returns when http.Client.Timeout fires.
type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

var _ net.Error = netTimeout{}

func status(code int) error {
	return llm.StatusError{Provider: "test", StatusCode: code, Message: "x"}
}

func TestClassifyAndRetryable(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		class     string
		retryable bool
	}{
		{"nil", nil, "ok", false},
		{"503", status(503), "http_503", true},
		{"503 pointer", &llm.StatusError{StatusCode: 503}, "http_503", true},
		{"503 wrapped", fmt.Errorf("ollama: %w", status(503)), "http_503", true},
		{"429", status(429), "http_429", true},
		{"502", status(502), "http_502", true},
		{"504", status(504), "http_504", true},
		{"500", status(500), "http_500", false},
		{"400", status(400), "http_400", false},
		{"401", status(401), "http_401", false},
		{"403", status(403), "http_403", false},
		{"404", status(404), "http_404", false},
		{"unavailable", &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Err: syscall.ECONNREFUSED}, "unavailable", true},
		{"ErrUnavailable", llm.ErrUnavailable, "unavailable", true},
		{"raw connection refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, "unavailable", true},
		{"raw connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), "unavailable", true},
		{"model not found", &llm.ModelNotFoundError{Provider: "ollama", Model: "qwen3.5:9b"}, "model_not_found", false},
		{"truncated", &llm.TruncatedError{Response: &llm.Response{OutputTokens: 9}}, "truncated", false},
		{"empty", fmt.Errorf("ollama: %w", llm.ErrEmpty), "empty", false},
		{"ErrTimeout", llm.ErrTimeout, "timeout", true},
		{"TimeoutError", &middleware.TimeoutError{Timeout: time.Second, Err: context.DeadlineExceeded}, "timeout", true},
		{"network timeout", &url.Error{Op: "Post", URL: "http://x", Err: netTimeout{}}, "timeout", true},
		{"caller deadline", fmt.Errorf("ollama: %w", context.DeadlineExceeded), "timeout", false},
		{"caller canceled", fmt.Errorf("ollama: %w", context.Canceled), "canceled", false},
		{"canceled beats status", errors.Join(context.Canceled, status(503)), "canceled", false},
		{"invalid output", &llm.InvalidOutputError{Err: errors.New("/content: expected string")}, "invalid_output", false},
		{"schema mismatch wrapped", fmt.Errorf("cycle: %w", &llm.InvalidOutputError{Err: errors.New("/action: bad")}), "invalid_output", false},
		{"other", io.ErrUnexpectedEOF, "error", false},
		{"retry error keeps cause", &middleware.RetryError{Attempts: 3, Err: status(503)}, "http_503", true},
		{"fallback judges last", &middleware.FallbackError{Errs: []error{status(404), status(503)}}, "http_503", true},
		{"fallback last permanent", &middleware.FallbackError{Errs: []error{status(503), status(400)}}, "http_400", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.class, middleware.Classify(c.err))
			assert.Equal(t, c.retryable, middleware.Retryable(c.err))
		})
	}
}

// waits records the waits of a RetryPolicy.Sleep.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) got() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func fixedRand(r float64) func() float64 { return func() float64 { return r } }

func errReplies(errs ...error) []llmtest.Reply {
	out := make([]llmtest.Reply, len(errs))
	for i, err := range errs {
		out[i] = llmtest.Reply{Err: err}
	}
	return out
}

func TestRetryBackoff(t *testing.T) {
	e503 := status(503)
	unavailable := &llm.UnavailableError{Provider: "ollama", URL: "u", Err: syscall.ECONNRESET}
	cases := []struct {
		name  string
		p     middleware.RetryPolicy
		errs  []error
		waits []time.Duration
	}{
		{"503 waits 10s then 20s", middleware.RetryPolicy{Rand: fixedRand(0.5)}, []error{e503, e503, e503}, []time.Duration{10 * time.Second, 20 * time.Second}},
		{"other retryable waits 5s then 10s", middleware.RetryPolicy{Rand: fixedRand(0.5)}, []error{unavailable, llm.ErrTimeout, e503}, []time.Duration{5 * time.Second, 10 * time.Second}},
		{"jitter low bound -20%", middleware.RetryPolicy{Rand: fixedRand(0)}, []error{e503, e503, e503}, []time.Duration{8 * time.Second, 16 * time.Second}},
		{"jitter high bound +20%", middleware.RetryPolicy{Rand: fixedRand(0.75)}, []error{e503, e503, e503}, []time.Duration{11 * time.Second, 22 * time.Second}},
		{"jitter disabled", middleware.RetryPolicy{Jitter: -1, Rand: fixedRand(0)}, []error{status(429), status(429), status(429)}, []time.Duration{5 * time.Second, 10 * time.Second}},
		{"capped at MaxWait", middleware.RetryPolicy{Attempts: 5, Rand: fixedRand(0.5)}, []error{e503, e503, e503, e503, e503}, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 60 * time.Second}},
		{"Retry-After honoured without jitter", middleware.RetryPolicy{Rand: fixedRand(0)}, []error{
			llm.StatusError{StatusCode: 503, RetryAfter: 7 * time.Second},
			llm.StatusError{StatusCode: 429, RetryAfter: 2 * time.Second},
			e503,
		}, []time.Duration{7 * time.Second, 2 * time.Second}},
		{"Retry-After capped", middleware.RetryPolicy{MaxWait: 30 * time.Second, Rand: fixedRand(0.5)}, []error{
			llm.StatusError{StatusCode: 429, RetryAfter: 5 * time.Minute}, e503, e503,
		}, []time.Duration{30 * time.Second, 20 * time.Second}},
		{"custom bases", middleware.RetryPolicy{Wait503: time.Second, Wait: 100 * time.Millisecond, Jitter: -1}, []error{e503, unavailable, e503}, []time.Duration{time.Second, 200 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w waits
			c.p.Sleep = w.sleep
			fake := llmtest.NewFake(errReplies(c.errs...)...)
			resp, err := middleware.WithRetry(fake, c.p).Generate(context.Background(), &llm.Request{})
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.Equal(t, c.waits, w.got())
			assert.Equal(t, len(c.waits)+1, fake.Calls())

			var re *middleware.RetryError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, len(c.waits)+1, re.Attempts)
			assert.Equal(t, c.errs[len(c.errs)-1], re.Err, "the last error is returned")
			assert.Contains(t, err.Error(), fmt.Sprintf("failed after %d attempts", re.Attempts))
		})
	}
}

func TestRetryJitterBounds(t *testing.T) {
	p := middleware.RetryPolicy{}
	for _, r := range []float64{0, 0.1, 0.25, 0.5, 0.9, 0.999999} {
		p.Rand = fixedRand(r)
		for retry, base := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
			d := p.Backoff(retry+1, status(503))
			lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2)
			if hi > middleware.DefaultMaxWait {
				hi = middleware.DefaultMaxWait
			}
			assert.GreaterOrEqual(t, d, lo, "rand %v retry %d", r, retry+1)
			assert.LessOrEqual(t, d, hi, "rand %v retry %d", r, retry+1)
		}
	}
	// A broken Rand cannot push a wait outside the bounds.
	for _, r := range []float64{-3, 1, 7} {
		p.Rand = fixedRand(r)
		assert.Equal(t, 10*time.Second, p.Backoff(1, status(503)))
	}
	// Huge retry numbers do not overflow.
	p.Rand = fixedRand(0.5)
	assert.Equal(t, middleware.DefaultMaxWait, p.Backoff(10_000, status(503)))
	assert.Equal(t, time.Duration(0), middleware.RetryPolicy{Wait: -1}.Backoff(1, status(429)))
}

func TestRetryStopsOnPermanentErrors(t *testing.T) {
	for _, err := range []error{
		status(400), status(401), status(403), status(404), status(500),
		&llm.ModelNotFoundError{Provider: "ollama", Model: "m"},
		&llm.TruncatedError{Response: &llm.Response{}},
		fmt.Errorf("x: %w", llm.ErrEmpty),
		&llm.InvalidOutputError{Err: errors.New("/content: missing")},
		fmt.Errorf("x: %w", context.Canceled),
	} {
		t.Run(middleware.Classify(err), func(t *testing.T) {
			var w waits
			fake := llmtest.NewFake(llmtest.Reply{Err: err}, llmtest.Reply{Text: "never"})
			_, got := middleware.WithRetry(fake, middleware.RetryPolicy{Sleep: w.sleep}).Generate(context.Background(), &llm.Request{})
			require.ErrorIs(t, got, err)
			assert.Equal(t, 1, fake.Calls())
			assert.Empty(t, w.got())
			var re *middleware.RetryError
			require.ErrorAs(t, got, &re)
			assert.Equal(t, 1, re.Attempts)
			assert.Contains(t, got.Error(), "failed after 1 attempt:")
		})
	}
}

func TestRetrySucceeds(t *testing.T) {
	var w waits
	fake := llmtest.NewFake(
		llmtest.Reply{Err: status(503)},
		llmtest.Reply{Err: &llm.UnavailableError{Provider: "ollama", URL: "u", Err: syscall.ECONNREFUSED}},
		llmtest.Reply{Text: "hello", OutputTokens: 3},
	)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	resp, err := middleware.WithRetry(fake, middleware.RetryPolicy{Sleep: w.sleep, Rand: fixedRand(0.5)}).Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "hello", resp.Text)
	assert.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second}, w.got())
	reqs := fake.Requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		assert.Equal(t, req, r, "every attempt sends the same request")
	}
}

func TestRetryDefaultsCopyTheOriginal(t *testing.T) {
	var w waits
	fake := llmtest.NewFake(llmtest.Reply{Err: status(503)})
	fake.Repeat = true
	_, err := middleware.WithRetry(fake, middleware.RetryPolicy{Sleep: w.sleep, Jitter: -1}).Generate(context.Background(), &llm.Request{})
	require.Error(t, err)
	assert.Equal(t, 3, fake.Calls(), "3 attempts")
	assert.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second}, w.got(), "10 s after a 503, doubled")
}

func TestRetryCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var w waits
	sleep := func(sctx context.Context, d time.Duration) error {
		cancel() // the caller gives up while we wait
		return w.sleep(sctx, d)
	}
	fake := llmtest.NewFake(llmtest.Reply{Err: status(503)}, llmtest.Reply{Text: "never"})
	_, err := middleware.WithRetry(fake, middleware.RetryPolicy{Sleep: sleep, Rand: fixedRand(0.5)}).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, status(503), "the last attempt's error is kept")
	assert.Equal(t, "canceled", middleware.Classify(err))
	assert.False(t, middleware.Retryable(err))
	assert.Equal(t, 1, fake.Calls())
	assert.Equal(t, []time.Duration{10 * time.Second}, w.got())
}

func TestRetryDefaultSleepStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The model fails with a 503 and then cancels from another goroutine;
	// the default sleep of 1 h must stop at once.
	calls := 0
	m := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		calls++
		go cancel()
		return nil, status(503)
	})
	_, err := middleware.WithRetry(m, middleware.RetryPolicy{Wait503: time.Hour}).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
}

func TestRetryDoesNotRetryCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var w waits
	m := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return nil, status(503) // retryable on its own, but the caller is gone
	})
	_, err := middleware.WithRetry(m, middleware.RetryPolicy{Sleep: w.sleep}).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, status(503))
	assert.Empty(t, w.got())
}

// TestPermanent: the outcomes FailFast stops on are the ones a retry with
// the same configuration can never fix; a retryable or a validation
// failure is not one of them.
func TestPermanent(t *testing.T) {
	for outcome, want := range map[string]bool{
		middleware.OutcomeModelNotFound: true, "http_401": true, "http_403": true, "http_404": true,
		"http_400": false, "http_429": false, "http_503": false, middleware.OutcomeUnavailable: false,
		middleware.OutcomeTimeout: false, "": false, "parse": false,
	} {
		if got := middleware.Permanent(outcome); got != want {
			t.Errorf("Permanent(%q) = %v, want %v", outcome, got, want)
		}
	}
	err := &llm.StatusError{StatusCode: 401, Message: "bad key"}
	if !middleware.Permanent(middleware.Classify(err)) || middleware.Retryable(err) {
		t.Errorf("a refused key is permanent and not retryable")
	}
}

// TestRetryPriorityWaitsLittle: a priority call (a person waits for it)
// refused by a loaded server is retried after WaitPriority, doubled, not
// the 10 s meant to relieve the server; a Retry-After still rules.
func TestRetryPriorityWaitsLittle(t *testing.T) {
	ctx := middleware.WithPriority(context.Background())
	require.True(t, middleware.IsPriority(ctx))
	require.False(t, middleware.IsPriority(context.Background()))

	var w waits
	fake := llmtest.NewFake(llmtest.Reply{Err: status(503)})
	fake.Repeat = true
	_, err := middleware.WithRetry(fake, middleware.RetryPolicy{Sleep: w.sleep, Jitter: -1}).Generate(ctx, &llm.Request{})
	require.Error(t, err)
	assert.Equal(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}, w.got())

	p := middleware.RetryPolicy{WaitPriority: time.Second, Jitter: -1}
	assert.Equal(t, time.Second, p.BackoffPriority(1, status(503)))
	assert.Equal(t, 10*time.Second, p.Backoff(1, status(503)), "an autonomy call keeps the original's wait")
	assert.Equal(t, 3*time.Second, p.BackoffPriority(1, &llm.StatusError{StatusCode: 503, RetryAfter: 3 * time.Second}))
}
