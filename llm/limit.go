package llm

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
)

// Limit returns a Model that holds one unit of sem for the duration of each
// call of m, so that several agents sharing sem have at most its size in
// calls in flight. Waiting for a unit respects ctx: if ctx ends first, the
// error wraps ctx.Err() and m is not called.
//
// Place Limit inside [WithRetry] so that no unit is held while waiting to
// retry, and outside [WithTimeout] so that the time spent waiting for a unit
// does not count against the per-call timeout. A nil sem returns m
// unchanged (no limit).
//
//	sem := semaphore.NewWeighted(2)
//	m := llm.WithRetry(llm.Limit(llm.WithTimeout(adapter, 0), sem), llm.RetryPolicy{})
func Limit(m Model, sem *semaphore.Weighted) Model {
	if sem == nil {
		return m
	}
	return &limitModel{next: m, sem: sem}
}

type limitModel struct {
	next Model
	sem  *semaphore.Weighted
}

var _ Model = (*limitModel)(nil)

func (l *limitModel) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := l.sem.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("llm: waiting for a call slot: %w", err)
	}
	defer l.sem.Release(1)
	return l.next.Generate(ctx, req)
}

// Name returns the wrapped model's name, if it has one.
func (l *limitModel) Name() string { return nameOf(l.next) }
