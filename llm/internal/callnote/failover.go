package callnote

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Failover is how a pool below a retry tells it where the retry
// of a failed call will go: the retry waits no backoff once the pool
// sends the agent's calls to another server (the one that failed is
// down), since the backoff is meant to spare the server that failed. The
// retry puts one in the call's context; the pool notes the server it
// failed on.
type Failover struct {
	mu    sync.Mutex
	down  <-chan struct{} // closed once the failed server is marked down
	moved func() bool     // whether a call now goes to another server
}

type failoverKey struct{}

// errFailedOver ends a backoff early: the next attempt goes to another
// server.
var errFailedOver = errors.New("callnote: the next attempt goes to another server")

// NoteFailover records, for a retry above, that the call failed on a
// server of a pool: down is closed once that server is marked down, and
// moved reports whether the call's next attempt goes to another server.
func NoteFailover(ctx context.Context, down <-chan struct{}, moved func() bool) {
	if f, ok := ctx.Value(failoverKey{}).(*Failover); ok {
		f.mu.Lock()
		f.down, f.moved = down, moved
		f.mu.Unlock()
	}
}

// Reset forgets the previous attempt's note.
func (f *Failover) Reset() {
	f.mu.Lock()
	f.down, f.moved = nil, nil
	f.mu.Unlock()
}

// Sleep waits d with sleep, or less: nothing when the attempt's pool
// already sends the next attempt to another server, and until the
// failed server is marked down, if the next attempt then goes to another
// server. Errors: sleep's, ctx's.
func (f *Failover) Sleep(ctx context.Context, d time.Duration, sleep func(context.Context, time.Duration) error) error {
	f.mu.Lock()
	down, moved := f.down, f.moved
	f.mu.Unlock()
	if moved == nil || d <= 0 {
		return sleep(ctx, d)
	}
	if moved() {
		return sleep(ctx, 0)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-down:
			if moved() {
				cancel(errFailedOver)
			}
		case <-wctx.Done():
		}
	}()
	err := sleep(wctx, d)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(wctx), errFailedOver) {
		return nil
	}
	return err
}

// WithFailover returns ctx carrying a fresh failover note, and the note,
// for a retry to read after each attempt.
func WithFailover(ctx context.Context) (context.Context, *Failover) {
	f := &Failover{}
	return context.WithValue(ctx, failoverKey{}, f), f
}
