package middleware

import (
	"context"
	"testing"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type modelFunc func(ctx context.Context, req *llm.Request) (*llm.Response, error)

func (f modelFunc) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return f(ctx, req)
}

func TestObserveDuration(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inner := modelFunc(func(context.Context, *llm.Request) (*llm.Response, error) {
		clock = clock.Add(1500 * time.Millisecond) // the call takes 1.5 s
		return &llm.Response{Text: "x", PromptTokens: 3, OutputTokens: 4}, nil
	})
	var got []Attempt
	m := Instrument(inner, "m", func(a Attempt) { got = append(got, a) }).(*observeModel)
	m.now = func() time.Time { return clock }
	_, err := m.Generate(context.Background(), &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, []Attempt{{Model: "m", Duration: 1500 * time.Millisecond, PromptTokens: 3, OutputTokens: 4, Outcome: "ok"}}, got)
}

func TestSleepContext(t *testing.T) {
	assert.NoError(t, sleepContext(context.Background(), 0))
	assert.NoError(t, sleepContext(context.Background(), time.Nanosecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, sleepContext(ctx, time.Hour), context.Canceled)
	assert.ErrorIs(t, sleepContext(ctx, 0), context.Canceled)
}
