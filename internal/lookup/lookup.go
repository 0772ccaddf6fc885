// Package lookup runs a one-time lookup (a model's context window, a
// server's version) shared by many callers, so that a server that hangs
// holds up no caller beyond its own context.
//
// The rule: one lookup is in flight at a time; a caller waits for it at
// most until its own context ends; the lookup runs under a deadline (the
// first caller's, capped at the Once's timeout) and not under that
// caller's cancellation, so that one caller giving up does not fail the
// others; a lookup that fails is forgotten, and the next caller runs it
// again; one that succeeds is kept for good.
package lookup

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// DefaultTimeout bounds a lookup whose caller set no earlier deadline:
// 30 s.
const DefaultTimeout = 30 * time.Second

// Once holds the result of a lookup that succeeded, or the lookup in
// flight. The zero value is ready for use; it must not be copied after
// first use.
type Once[T any] struct {
	// Timeout caps each lookup's run; 0 means [DefaultTimeout].
	Timeout time.Duration

	mu     sync.Mutex
	ok     bool
	val    T
	flight *flight[T]
}

type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// Get returns the value of the lookup f: the kept value when one
// succeeded before, else that of the lookup in flight, else of a new one
// run with f. f gets a context without ctx's cancellation, with ctx's
// deadline capped at the Once's timeout (its cause is
// context.DeadlineExceeded). Errors: f's error (the lookup is then run
// again by a later call), or, when ctx ends first (or has ended: no
// lookup is started then), an error wrapping context.Cause(ctx) (the
// lookup goes on for the callers after it).
func (o *Once[T]) Get(ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	o.mu.Lock()
	if o.ok {
		v := o.val
		o.mu.Unlock()
		return v, nil
	}
	fl := o.flight
	if fl == nil && ctx.Err() != nil {
		o.mu.Unlock()
		var zero T
		return zero, fmt.Errorf("before a shared lookup: %w", context.Cause(ctx))
	}
	if fl == nil {
		fl = &flight[T]{done: make(chan struct{})}
		o.flight = fl
		go o.run(ctx, fl, f)
	}
	o.mu.Unlock()
	select {
	case <-fl.done:
		return fl.val, fl.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("waiting for a shared lookup: %w", context.Cause(ctx))
	}
}

// run runs f for the flight fl.
func (o *Once[T]) run(ctx context.Context, fl *flight[T], f func(ctx context.Context) (T, error)) {
	limit := o.Timeout
	if limit <= 0 {
		limit = DefaultTimeout
	}
	deadline := time.Now().Add(limit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	v, err := f(lctx)
	o.mu.Lock()
	fl.val, fl.err = v, err
	if err == nil {
		o.ok, o.val = true, v
	}
	o.flight = nil
	o.mu.Unlock()
	close(fl.done)
}

// Done reports whether a lookup succeeded and its value is kept.
func (o *Once[T]) Done() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ok
}

// inFlight reports whether a lookup is running (tests).
func (o *Once[T]) inFlight() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flight != nil
}
