package middleware_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

func TestLimitCapsConcurrency(t *testing.T) {
	const limit, callers = 2, 6
	var inflight, peak atomic.Int32
	entered := make(chan struct{})
	release := make(chan struct{})
	inner := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		entered <- struct{}{}
		<-release
		inflight.Add(-1)
		return &llm.Response{Text: "ok"}, nil
	})
	lim := middleware.NewLimiter(limit)
	assert.Equal(t, limit, lim.Size())
	m := lim.Limit(inner)

	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Generate(context.Background(), &llm.Request{})
			errs <- err
		}()
	}
	// Let the first `limit` calls in, then release one call per entry.
	for range limit {
		<-entered
	}
	assert.Equal(t, int32(limit), inflight.Load())
	for range callers - limit {
		release <- struct{}{}
		<-entered
		assert.LessOrEqual(t, inflight.Load(), int32(limit))
	}
	for range limit {
		release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, int32(limit), peak.Load())
}

func TestLimitRespectsContext(t *testing.T) {
	lim := middleware.NewLimiter(0) // < 1 means 1
	require.Equal(t, 1, lim.Size())
	block := make(chan struct{})
	entered := make(chan struct{})
	holder := lim.Limit(llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		close(entered)
		<-block
		return &llm.Response{Text: "held"}, nil
	}))
	done := make(chan struct{})
	go func() { defer close(done); holder.Generate(context.Background(), &llm.Request{}) }()
	<-entered // the only slot is taken

	fake := llmtest.NewFake(llmtest.Reply{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := lim.Limit(fake).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, fake.Calls(), "the model is not called without a slot")

	close(block)
	<-done
	resp, err := lim.Limit(fake).Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, "never", resp.Text)

	var none *middleware.Limiter
	assert.Same(t, fake, none.Limit(fake))
}
