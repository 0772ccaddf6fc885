package middleware_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

type attempts struct {
	mu sync.Mutex
	a  []middleware.Attempt
}

func (r *attempts) record(a middleware.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.a = append(r.a, a)
}

func (r *attempts) got() []middleware.Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]middleware.Attempt(nil), r.a...)
}

func TestObserveEveryRetryAttempt(t *testing.T) {
	var rec attempts
	var w waits
	e503 := status(503)
	fake := llmtest.NewFake(
		llmtest.Reply{Err: e503},
		llmtest.Reply{Err: &llm.TruncatedError{Response: &llm.Response{PromptTokens: 50, OutputTokens: 4096}}},
		llmtest.Reply{Text: "{}", PromptTokens: 812, OutputTokens: 64},
	)
	m := middleware.WithRetry(middleware.Instrument(fake, "qwen3.5:9b", rec.record), middleware.RetryPolicy{Sleep: w.sleep})
	_, err := m.Generate(context.Background(), &llm.Request{})
	require.Error(t, err, "truncation is not retried")

	got := rec.got()
	require.Len(t, got, 2)
	assert.Equal(t, "qwen3.5:9b", got[0].Model)
	assert.Equal(t, "http_503", got[0].Outcome)
	assert.Equal(t, e503, got[0].Err)
	assert.Equal(t, "truncated", got[1].Outcome)
	assert.Equal(t, 50, got[1].PromptTokens, "tokens of a truncated reply are counted")
	assert.Equal(t, 4096, got[1].OutputTokens)
}

func TestObserveSuccessAndRepair(t *testing.T) {
	var rec attempts
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"thought":"x"}`, PromptTokens: 800, OutputTokens: 20},
		llmtest.Reply{Text: `{"content":"y"}`, PromptTokens: 840, OutputTokens: 9},
	)
	fake.Model = "reported-by-server"
	m := middleware.WithRepair(middleware.Instrument(fake, "", rec.record), checkGoal)
	_, err := m.Generate(context.Background(), goalRequest())
	require.NoError(t, err)
	got := rec.got()
	require.Len(t, got, 2, "the repair follow-up is an attempt too")
	for i, want := range []struct{ p, o int }{{800, 20}, {840, 9}} {
		assert.Equal(t, "reported-by-server", got[i].Model)
		assert.Equal(t, "ok", got[i].Outcome)
		assert.NoError(t, got[i].Err)
		assert.Equal(t, want.p, got[i].PromptTokens)
		assert.Equal(t, want.o, got[i].OutputTokens)
		assert.GreaterOrEqual(t, got[i].Duration, time.Duration(0))
	}
}

func TestObserveNames(t *testing.T) {
	var rec attempts
	fail := llmtest.NewFake(llmtest.Reply{Err: status(400)}, llmtest.Reply{Err: status(400)})
	req := &llm.Request{Model: "override"}
	_, _ = middleware.Instrument(fail, "", rec.record).Generate(context.Background(), req)
	_, _ = middleware.Instrument(named{fail, "adapter-name"}, "", rec.record).Generate(context.Background(), &llm.Request{})
	got := rec.got()
	require.Len(t, got, 2)
	assert.Equal(t, "override", got[0].Model)
	assert.Equal(t, "adapter-name", got[1].Model)
	assert.Equal(t, "http_400", got[1].Outcome)

	assert.Equal(t, "label", nameOfModel(middleware.Instrument(fail, "label", rec.record)))
	assert.Equal(t, "adapter-name", nameOfModel(middleware.WithRetry(middleware.WithTimeout(named{fail, "adapter-name"}, 0), middleware.RetryPolicy{})))

	fake := llmtest.NewFake()
	assert.Same(t, fake, middleware.Instrument(fake, "x", nil), "a nil fn returns the model unchanged")
}

func nameOfModel(m llm.Model) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
