package runner_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
	"github.com/stretchr/testify/require"
)

// Helpers copied from existence's tests (package existence_test), which
// a test of another package cannot import.

var t0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// reply builds a valid model reply.
func reply(t testing.TB, r map[string]any) llmtest.Reply {
	t.Helper()
	if _, ok := r["action"]; !ok {
		r["action"] = "goal"
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return llmtest.Reply{Text: string(b), PromptTokens: 900, OutputTokens: 120}
}

func goalReply(t testing.TB, goal string) llmtest.Reply {
	return reply(t, map[string]any{"content": goal, "reasoning": "because " + goal})
}

// blockingExecutor pursues goals until canceled.
func blockingExecutor() existence.Executor {
	return existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
		<-ctx.Done()
		return existence.Outcome{}, ctx.Err()
	})
}

// recModel records every cycle's prompt with the time it was asked, by
// the agent's clock (runner.ClockFrom) or its own. It advances a
// virtual clock by latency; started, when set, receives each call as it
// starts, and release, when set, must deliver a value before a call
// answers.
type recModel struct {
	clock   clock.Clock
	latency time.Duration
	started chan recCall
	release chan struct{}

	mu    sync.Mutex
	calls []recCall
}

type recCall struct {
	at     time.Time
	prompt string
}

func (m *recModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	c := runner.ClockFrom(ctx)
	if c == nil {
		c = m.clock
	}
	call := recCall{at: c.Now(), prompt: req.Messages[len(req.Messages)-1].Content}
	m.mu.Lock()
	m.calls = append(m.calls, call)
	m.mu.Unlock()
	if m.started != nil {
		m.started <- call
	}
	if m.release != nil {
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if sc, ok := c.(*clock.Virtual); ok && m.latency > 0 {
		sc.Advance(m.latency)
	}
	return &llm.Response{Text: `{"action":"goal","content":"look around","reasoning":"r"}`}, nil
}

func (m *recModel) Calls() []recCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]recCall(nil), m.calls...)
}

// slotsPrompt is an assembler that shows slots.
func slotsPrompt(t *testing.T) *prompt.Assembler {
	t.Helper()
	a := prompt.New(prompt.Config{World: "A small world."})
	require.NoError(t, a.InsertAfter(prompt.SectionDiscoveries, prompt.SlotsSection()))
	return a
}
