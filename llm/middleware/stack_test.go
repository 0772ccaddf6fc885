package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

type markKey struct{}

// recordMeter is a Meter that logs each attempt it sees, innermost.
type recordMeter struct {
	mu  sync.Mutex
	log *[]string
}

func (r *recordMeter) Observe(m llm.Model, now func() time.Time) llm.Model {
	return meterModel{next: m, r: r}
}

type meterModel struct {
	next llm.Model
	r    *recordMeter
}

func (x meterModel) Unwrap() llm.Model { return x.next }

func (x meterModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	x.r.mu.Lock()
	*x.r.log = append(*x.r.log, "meter")
	x.r.mu.Unlock()
	return x.next.Generate(ctx, req)
}

func checkContent(text string) (any, error) {
	if !strings.Contains(text, `"content"`) {
		return nil, errors.New("jsonschema: '/content' is missing")
	}
	return text, nil
}

// TestStackOrder: the stack's layers stand in their one order. A 503,
// then a reply that fails validation, then a valid one: retry waits the
// priority lane's short wait (the context hook is outside retry), the
// observer and the meter see every attempt, the repair follow-up
// included (repair is outside retry), the observer sees the context the
// hook prepared, and the meter runs inside the observer.
func TestStackOrder(t *testing.T) {
	fake := llmtest.NewFake(
		llmtest.Reply{Err: llm.StatusError{Provider: "test", StatusCode: 503, Message: "busy"}},
		llmtest.Reply{Text: `{"thought": "x"}`},
		llmtest.Reply{Text: `{"content": "y"}`},
	)
	var log []string
	var waits []time.Duration
	m := middleware.Stack(fake, middleware.StackConfig{
		Context: func(ctx context.Context) context.Context {
			return middleware.WithPriority(context.WithValue(ctx, markKey{}, "marked"))
		},
		Repair: checkContent,
		Retry: middleware.RetryPolicy{
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
			Rand:  func() float64 { return 0.5 },
		},
		Limiter: middleware.NewLimiter(1),
		Meter:   &recordMeter{log: &log},
		Observe: func(ctx context.Context, a middleware.Attempt) {
			log = append(log, fmt.Sprintf("observe %s %v", a.Outcome, ctx.Value(markKey{})))
		},
	})
	resp, err := m.Generate(t.Context(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "goal?"}},
		Format:   json.RawMessage(`{"type":"object"}`),
	})
	require.NoError(t, err)
	assert.Equal(t, `{"content": "y"}`, resp.Text)
	assert.Equal(t, `{"content": "y"}`, resp.Parsed, "the parsed value of the repaired reply")
	assert.Equal(t, []string{
		"meter", "observe http_503 marked",
		"meter", "observe ok marked",
		"meter", "observe ok marked", // the repair follow-up
	}, log)
	assert.Equal(t, []time.Duration{middleware.DefaultWaitPriority}, waits, "the context hook runs before retry")
	assert.Equal(t, 3, fake.Calls())
}

// TestStackAdmit: a call Admit refuses fails with Admit's error, and the
// model is not called.
func TestStackAdmit(t *testing.T) {
	hold := errors.New("budget spent")
	for _, tt := range []struct {
		name  string
		admit error
		calls int
	}{
		{"admitted", nil, 1},
		{"held", hold, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewFake(llmtest.Reply{Text: "ok"})
			m := middleware.Stack(fake, middleware.StackConfig{Admit: func(context.Context) error { return tt.admit }})
			_, err := m.Generate(t.Context(), &llm.Request{})
			assert.ErrorIs(t, err, tt.admit)
			if tt.admit == nil {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.calls, fake.Calls())
		})
	}
}

// TestStackPassesTheWindow: every layer passes the context window
// through, so that llm.ContextWindowOf finds the adapter's.
func TestStackPassesTheWindow(t *testing.T) {
	m := middleware.Stack(windowed{llmtest.NewFake()}, middleware.StackConfig{
		Admit:   func(context.Context) error { return nil },
		Context: func(ctx context.Context) context.Context { return ctx },
		Repair:  checkContent,
		Limiter: middleware.NewLimiter(2),
		Observe: func(context.Context, middleware.Attempt) {},
		Meter:   middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{}),
	})
	n, _, err := llm.ContextWindowOf(t.Context(), m)
	require.NoError(t, err)
	assert.Equal(t, 8192, n)
}

type windowed struct{ llm.Model }

func (windowed) ContextWindow(context.Context) (int, *llm.TokenEstimator, error) {
	return 8192, nil, nil
}
