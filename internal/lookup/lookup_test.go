package lookup

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaiterHonoursItsContext: a caller waiting on a lookup that hangs
// returns when its own context ends, the lookup goes on, and the next
// caller after it fails runs it again; a success is kept.
func TestWaiterHonoursItsContext(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var runs atomic.Int64
	var o Once[int]
	hang := func(ctx context.Context) (int, error) {
		runs.Add(1)
		select {
		case <-release:
			return 0, errors.New("released")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	// The first caller's deadline bounds the lookup.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := o.Get(ctx, hang)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A second caller with a cancelled context does not wait.
	cctx, ccancel := context.WithCancel(t.Context())
	ccancel()
	_, err = o.Get(cctx, hang)
	require.ErrorIs(t, err, context.Canceled)

	// Once the hung lookup failed, a later caller runs it again.
	require.Eventually(t, func() bool { return !o.inFlight() }, 5*time.Second, time.Millisecond)
	v, err := o.Get(t.Context(), func(context.Context) (int, error) { runs.Add(1); return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.True(t, o.Done())
	v, err = o.Get(t.Context(), func(context.Context) (int, error) { t.Error("a kept value is not looked up again"); return 0, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.GreaterOrEqual(t, runs.Load(), int64(2))
}

// TestSharedLookup: concurrent callers share the one lookup in flight.
func TestSharedLookup(t *testing.T) {
	var o Once[string]
	started := make(chan struct{})
	release := make(chan struct{})
	var runs atomic.Int64
	f := func(context.Context) (string, error) {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-release
		return "v", nil
	}
	results := make(chan string, 3)
	for range 3 {
		go func() {
			v, _ := o.Get(t.Context(), f)
			results <- v
		}()
	}
	<-started
	require.Eventually(t, func() bool { return o.inFlight() }, time.Second, time.Millisecond)
	close(release)
	for range 3 {
		assert.Equal(t, "v", <-results)
	}
	assert.LessOrEqual(t, runs.Load(), int64(3))
	assert.True(t, o.Done())
}

// TestLookupTimeout: without a deadline of the caller's, the Once's
// Timeout bounds the lookup.
func TestLookupTimeout(t *testing.T) {
	o := Once[int]{Timeout: 10 * time.Millisecond}
	_, err := o.Get(t.Context(), func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, o.Done())
}
