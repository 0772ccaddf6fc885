package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

func TestTimeoutFires(t *testing.T) {
	fake := llmtest.NewFake(llmtest.Reply{Hang: true})
	_, err := middleware.WithTimeout(fake, 10*time.Millisecond).Generate(context.Background(), &llm.Request{})
	require.ErrorIs(t, err, llm.ErrTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var te *middleware.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 10*time.Millisecond, te.Timeout)
	assert.Equal(t, "timeout", middleware.Classify(err))
	assert.True(t, middleware.Retryable(err), "a per-attempt timeout is retried")
	assert.Contains(t, err.Error(), "timed out after 10ms")
}

func TestTimeoutCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, err := middleware.WithTimeout(m, time.Hour).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, llm.ErrTimeout)
	assert.Equal(t, "canceled", middleware.Classify(err))
	assert.False(t, middleware.Retryable(err))
}

func TestTimeoutCallerDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	fake := llmtest.NewFake(llmtest.Reply{Hang: true})
	_, err := middleware.WithTimeout(fake, time.Hour).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, llm.ErrTimeout, "the caller's deadline is not our timeout")
	assert.False(t, middleware.Retryable(err))
}

func TestTimeoutCallerCancelWithOtherError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return nil, status(503)
	})
	_, err := middleware.WithTimeout(m, time.Hour).Generate(ctx, &llm.Request{})
	require.ErrorIs(t, err, context.Canceled, "the caller's ctx error is returned")
	assert.ErrorIs(t, err, status(503))
	assert.False(t, middleware.Retryable(err))
}

func TestTimeoutDefaultAndPassThrough(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		var left time.Duration
		m := llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
			dl, ok := ctx.Deadline()
			require.True(t, ok, "a deadline is set")
			left = time.Until(dl)
			return &llm.Response{Text: "ok"}, nil
		})
		resp, err := middleware.WithTimeout(m, d).Generate(context.Background(), &llm.Request{})
		require.NoError(t, err)
		assert.Equal(t, "ok", resp.Text)
		assert.Greater(t, left, middleware.DefaultTimeout-time.Minute)
		assert.LessOrEqual(t, left, middleware.DefaultTimeout)
	}
	assert.Equal(t, 180*time.Second, middleware.DefaultTimeout)

	fake := llmtest.NewFake(llmtest.Reply{Err: status(400)})
	_, err := middleware.WithTimeout(fake, time.Hour).Generate(context.Background(), &llm.Request{})
	assert.Equal(t, status(400), err, "other errors pass through unchanged")
}

func TestRetryAfterTimeout(t *testing.T) {
	var w waits
	fake := llmtest.NewFake(llmtest.Reply{Hang: true}, llmtest.Reply{Text: "second"})
	m := middleware.WithRetry(middleware.WithTimeout(fake, 5*time.Millisecond), middleware.RetryPolicy{Sleep: w.sleep, Rand: fixedRand(0.5)})
	resp, err := m.Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, "second", resp.Text)
	assert.Equal(t, []time.Duration{5 * time.Second}, w.got(), "5 s after a timeout")
}
