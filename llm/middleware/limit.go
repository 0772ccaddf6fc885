package middleware

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/llm"
	"golang.org/x/sync/semaphore"
)

// Limiter bounds the number of model calls in flight across every [llm.Model]
// it wraps (a concurrency limit of n slots), for example the models of
// several agents sharing one local GPU; runner.Runner uses one for the
// calls made outside its lanes (runner.Config.MaxInFlight). It is safe for
// concurrent use.
type Limiter struct {
	sem *semaphore.Weighted
	n   int
}

// NewLimiter returns a Limiter that allows n calls in flight (n < 1 means
// 1).
func NewLimiter(n int) *Limiter {
	n = max(n, 1)
	return &Limiter{sem: semaphore.NewWeighted(int64(n)), n: n}
}

// Size returns the number of calls the Limiter allows in flight.
func (l *Limiter) Size() int { return l.n }

// Limit returns a Model that holds one of l's slots for the duration of
// each call of m. Waiting for a slot respects ctx: if ctx ends first, the
// error wraps ctx.Err() and m is not called. A nil Limiter returns m
// unchanged (no limit).
//
// Place Limit inside [WithRetry], so that no slot is held while waiting to
// retry, and outside [WithTimeout] and [Instrument], so that the time spent
// waiting for a slot counts neither against the per-call timeout nor in the
// reported duration:
//
//	lim := NewLimiter(1)
//	m := WithRetry(lim.Limit(WithTimeout(Instrument(adapter, "", report), 0)), RetryPolicy{})
func (l *Limiter) Limit(m llm.Model) llm.Model {
	if l == nil {
		return m
	}
	return &limitModel{next: m, sem: l.sem}
}

type limitModel struct {
	next llm.Model
	sem  *semaphore.Weighted
}

var _ llm.Model = (*limitModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *limitModel) Unwrap() llm.Model { return x.next }

func (l *limitModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := l.sem.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("llm: waiting for a call slot: %w", err)
	}
	defer l.sem.Release(1)
	return l.next.Generate(ctx, req)
}

// Name returns the wrapped model's name, if it has one.
func (l *limitModel) Name() string { return nameOf(l.next) }
