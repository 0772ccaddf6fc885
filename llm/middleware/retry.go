package middleware

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/existence-loop/sdk/internal/backoff"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/internal/callnote"
)

// Retry defaults. Attempts, Wait503 and Wait copy the original system
// (spec §7): up to 3 attempts, 10 s after a 503, 5 s after other errors.
const (
	DefaultAttempts = 3
	DefaultWait503  = 10 * time.Second
	DefaultWait     = 5 * time.Second
	DefaultMaxWait  = 60 * time.Second
	DefaultJitter   = 0.2
	// DefaultWaitPriority is the base wait before retrying a priority
	// call ([WithPriority]): about the time a loaded server takes to free
	// a slot, not the original's 10 s meant to relieve it.
	DefaultWaitPriority = 250 * time.Millisecond
)

// RetryPolicy configures [WithRetry]. The zero value is the default policy:
// 3 attempts, 10 s after a 503 and 5 s after other retryable errors, doubled
// on each further retry, ±20 % jitter, no single wait over 60 s.
//
// The wait before retry n (n = 1 for the first retry) is
//
//	base × 2^(n−1) × (1 + Jitter × (2×Rand() − 1)), capped at MaxWait
//
// where base is Wait503 after an HTTP 503 and Wait after any other retryable
// error, or WaitPriority after any retryable error of a priority call (a
// context marked with [WithPriority]). A [llm.StatusError] with RetryAfter > 0 (the server's Retry-After
// header) replaces the computed wait, without jitter, still capped at
// MaxWait.
type RetryPolicy struct {
	// Attempts is the total number of attempts, first call included.
	// 0 means DefaultAttempts (3); 1 disables retrying.
	Attempts int
	// Wait503 is the base wait after an HTTP 503. 0 means DefaultWait503
	// (10 s); a negative value means no wait.
	Wait503 time.Duration
	// Wait is the base wait after any other retryable error. 0 means
	// DefaultWait (5 s); a negative value means no wait.
	Wait time.Duration
	// WaitPriority is the base wait after any retryable error, 503
	// included, of a priority call (ctx marked with [WithPriority]): a
	// person waits for it, and the server refused it only because of the
	// autonomy calls already queued there, which a concurrency limit
	// is cutting. 0 means DefaultWaitPriority (250 ms); a negative value
	// means no wait. An SDK rule: the original (spec §7) has one policy.
	WaitPriority time.Duration
	// MaxWait caps one wait, Retry-After included. 0 means DefaultMaxWait
	// (60 s); a negative value means no cap.
	MaxWait time.Duration
	// Jitter is the ± fraction applied to computed waits. 0 means
	// DefaultJitter (0.2); a negative value disables jitter. Values over 1
	// are treated as 1.
	Jitter float64
	// Sleep waits for d or until ctx ends, returning ctx's error in that
	// case. Nil means a timer that stops when ctx ends. Tests inject a
	// function that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for jitter. Nil means math/rand/v2's
	// Float64. It must be safe for concurrent use.
	Rand func() float64
}

// withDefaults resolves the zero values of p.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.Wait503 == 0 {
		p.Wait503 = DefaultWait503
	}
	if p.Wait == 0 {
		p.Wait = DefaultWait
	}
	if p.WaitPriority == 0 {
		p.WaitPriority = DefaultWaitPriority
	}
	if p.MaxWait == 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.Jitter == 0 {
		p.Jitter = DefaultJitter
	}
	if p.Jitter > 1 {
		p.Jitter = 1
	}
	if p.Sleep == nil {
		p.Sleep = sleepContext
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Backoff returns the wait before retry number retry (1 for the first
// retry) after err, following the formula on [RetryPolicy]. It applies the
// policy's defaults, so it works on the zero value. A result is never
// negative.
func (p RetryPolicy) Backoff(retry int, err error) time.Duration {
	return p.backoff(retry, err, false)
}

// BackoffPriority is [RetryPolicy.Backoff] for a priority call
// ([WithPriority]): the base is WaitPriority whatever the error.
func (p RetryPolicy) BackoffPriority(retry int, err error) time.Duration {
	return p.backoff(retry, err, true)
}

func (p RetryPolicy) backoff(retry int, err error, priority bool) time.Duration {
	p = p.withDefaults()
	if se, ok := asStatus(err); ok && se.RetryAfter > 0 {
		return p.capWait(float64(se.RetryAfter))
	}
	base := p.Wait
	if se, ok := asStatus(err); ok && se.StatusCode == 503 {
		base = p.Wait503
	}
	if priority {
		base = p.WaitPriority
	}
	if base <= 0 {
		return 0
	}
	d := float64(backoff.Nth(retry, base, 0))
	if p.Jitter > 0 {
		r := p.Rand()
		if r < 0 || r >= 1 || math.IsNaN(r) {
			r = 0.5
		}
		d *= 1 + p.Jitter*(2*r-1)
	}
	return p.capWait(d)
}

// capWait converts d (nanoseconds) to a Duration, capped at MaxWait and at
// the largest Duration, and floored at 0.
func (p RetryPolicy) capWait(d float64) time.Duration {
	if p.MaxWait > 0 && d > float64(p.MaxWait) {
		return p.MaxWait
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	if d <= 0 || math.IsNaN(d) {
		return 0
	}
	return time.Duration(d)
}

// RetryError is returned by [WithRetry] when it gives up: Err is the last
// attempt's error (or the context error that interrupted a wait, joined
// with the last attempt's error) and Attempts is how many calls were made.
// It unwraps to Err, so [errors.Is], [errors.As], [Classify] and
// [Retryable] see the cause.
type RetryError struct {
	Attempts int
	Err      error
}

// Error reads "llm: failed after N attempts: " and the last error.
func (e *RetryError) Error() string {
	s := "s"
	if e.Attempts == 1 {
		s = ""
	}
	return fmt.Sprintf("llm: failed after %d attempt%s: %v", e.Attempts, s, e.Err)
}

// Unwrap returns the last error.
func (e *RetryError) Unwrap() error { return e.Err }

// WithRetry returns a Model that retries m with exponential backoff and
// jitter while the error is [Retryable] (HTTP 429, 502, 503, 504,
// unreachable server, per-attempt timeout), up to p.Attempts calls in all.
// Permanent errors (HTTP 400, 404, model not found, truncation, empty reply,
// invalid output) and the caller's cancellation return at once. A priority
// call ([WithPriority]) waits WaitPriority-based backoffs. Over a [Pool],
// a retry that goes to another server waits no backoff (the backoff
// spares the server that failed): none when the failed attempt's server
// is down and the agent's calls go to another, and the wait ends when
// that server is marked down during it (by other agents' calls).
//
// Every failure is returned as a *[RetryError] carrying the attempt count and
// wrapping the last error. If ctx ends during an attempt or a wait, the
// error wraps both ctx.Err() and the last attempt's error. The same *Request is passed to
// every attempt; m must not modify it.
//
// Wrap each attempt in [WithTimeout] inside WithRetry, so that a slow
// attempt times out and is retried:
//
//	m = WithRetry(WithTimeout(adapter, DefaultTimeout), RetryPolicy{})
func WithRetry(m llm.Model, p RetryPolicy) llm.Model {
	return &retryModel{next: m, p: p.withDefaults()}
}

type retryModel struct {
	next llm.Model
	p    RetryPolicy
}

var _ llm.Model = (*retryModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *retryModel) Unwrap() llm.Model { return x.next }

func (r *retryModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	actx, note := callnote.WithFailover(ctx)
	for attempt := 1; ; attempt++ {
		note.Reset()
		resp, err := r.next.Generate(actx, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, &RetryError{Attempts: attempt, Err: withContextErr(ctx, err)}
		}
		if attempt >= r.p.Attempts || !Retryable(err) {
			return nil, &RetryError{Attempts: attempt, Err: err}
		}
		wait := r.p.backoff(attempt, err, IsPriority(ctx))
		if serr := note.Sleep(ctx, wait, r.p.Sleep); serr != nil {
			return nil, &RetryError{
				Attempts: attempt,
				Err:      fmt.Errorf("%w (waiting %s to retry after: %w)", serr, wait, err),
			}
		}
	}
}

// Name returns the wrapped model's name, if it has one.
func (r *retryModel) Name() string { return nameOf(r.next) }

// withContextErr makes sure an error returned after ctx ended matches
// ctx.Err(), as the [llm.Model] contract requires, keeping err in the chain.
func withContextErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w (after: %w)", cerr, err)
}

// sleepContext waits for d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
