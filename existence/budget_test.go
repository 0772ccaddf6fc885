package existence_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/memstore"
)

// tokenModel answers every call with 900 prompt and 100 output tokens, as
// the server counts them, after latency of virtual time.
type tokenModel struct{ latency time.Duration }

func (m tokenModel) Generate(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
	if c, ok := runner.ClockFrom(ctx).(*clock.Virtual); ok {
		c.Advance(m.latency)
	}
	return &llm.Response{Model: "qwen3.5:9b", Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`, PromptTokens: 900, OutputTokens: 100}, nil
}

// budgetRun runs n agents with cfg on tokenModel in virtual time.
func budgetRun(t *testing.T, n int, cfg runner.Config, agent existence.Config) (*runner.Runner, *existencetest.Clock, *existencetest.Recorder) {
	t.Helper()
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	cfg.Store, cfg.Clock, cfg.Observer, cfg.Logger = memstore.New(), clock, rec.Observe, discardLogger()
	cfg.Heartbeat, cfg.NoStagger = 6*time.Second, true
	r, err := runner.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for i := range n {
		c := agent
		c.ID, c.Name = fmt.Sprintf("a%d", i), fmt.Sprintf("A%d", i)
		c.Model, c.Calls.Retry = tokenModel{latency: 2 * time.Second}, middleware.RetryPolicy{Attempts: 1}
		_, err := r.Add(context.Background(), c)
		require.NoError(t, err)
	}
	return r, clock, rec
}

// maxInWindow returns the most tokens the calls ending within any window
// of length w used, per agent.
func maxInWindow(calls []event.Event, w time.Duration) map[string]int {
	out := map[string]int{}
	for i, c := range calls {
		sum := 0
		for _, d := range calls[i:] {
			if d.AgentID == c.AgentID && d.Time.Sub(c.Time) < w {
				sum += d.Call.PromptTokens + d.Call.OutputTokens
			}
		}
		out[c.AgentID] = max(out[c.AgentID], sum)
	}
	return out
}

// TestBudgetHoldsAutonomyUntilTheWindowRefills: with 3,000 tokens a minute
// and 1,000 tokens a cycle, an agent runs 3 cycles, reports the budget
// spent once, waits with its heartbeats coalesced, and resumes by itself
// as the window refills; no minute holds more than the budget and one call.
func TestBudgetHoldsAutonomyUntilTheWindowRefills(t *testing.T) {
	budget := budget.Budget{Tokens: 3000, Window: time.Minute}
	r, clock, rec := budgetRun(t, 1, runner.Config{Budget: budget}, existence.Config{})
	require.NoError(t, r.RunVirtual(context.Background(), t0.Add(30*time.Second)))

	calls := rec.Kind(event.ModelCall)
	require.Len(t, calls, 3, "cycles at 0, 6 and 12 s; then held")
	ex := rec.Kind(event.BudgetExhausted)
	require.Len(t, ex, 1)
	b := ex[0].Budget
	require.NotNil(t, b)
	assert.Equal(t, "agent", b.Scope)
	assert.Equal(t, int64(3000), b.Used)
	assert.True(t, b.Exhausted)
	assert.Equal(t, t0.Add(63*time.Second), b.RefillsAt, "the first call's tokens (at 2 s) leave the window a minute after their second")
	st := r.Agents()[0].Status()
	require.NotNil(t, st.Budget)
	assert.True(t, st.Budget.Exhausted)
	assert.Equal(t, int64(3000), st.Usage.Total())
	assert.Zero(t, st.Usage.EstimatedTokens, "the server's counts")
	require.Len(t, st.UsageByModel, 1)
	assert.Equal(t, "qwen3.5:9b", st.UsageByModel[0].Model)
	stats := r.Stats()
	assert.Positive(t, stats.Held)
	assert.Positive(t, stats.Coalesced, "the held heartbeats are merged into the waiting cycle")

	require.NoError(t, r.RunVirtual(context.Background(), t0.Add(10*time.Minute)))
	calls = rec.Kind(event.ModelCall)
	assert.GreaterOrEqual(t, len(calls), 28, "about 3 calls a minute: the agent resumed by itself")
	assert.LessOrEqual(t, len(calls), 31)
	for id, most := range maxInWindow(calls, time.Minute) {
		assert.LessOrEqual(t, most, 3000+1000, "%s: the budget and one call", id)
	}
	first := rec.Kind(event.Cycle)[3]
	assert.False(t, first.Time.Before(t0.Add(63*time.Second)), "the fourth cycle waited for the refill")
	assert.Greater(t, len(rec.Kind(event.BudgetExhausted)), 1, "one event each time it is spent again")
	_ = clock
}

// TestBudgetReserveForHostMessages: a person's message to an agent whose
// budget is spent waits for the refill without a reserve, and is answered
// at once from the reserve.
func TestBudgetReserveForHostMessages(t *testing.T) {
	for _, tt := range []struct {
		reserve int
		answer  time.Duration // when the priority cycle starts, after t0
	}{
		{0, 63 * time.Second},
		{2000, 20 * time.Second},
	} {
		t.Run(fmt.Sprintf("reserve %d", tt.reserve), func(t *testing.T) {
			budget := budget.Budget{Tokens: 3000, Window: time.Minute, Reserve: tt.reserve}
			r, _, rec := budgetRun(t, 1, runner.Config{Budget: budget}, existence.Config{})
			ctx := context.Background()
			require.NoError(t, r.RunVirtual(ctx, t0.Add(20*time.Second)))
			require.Len(t, rec.Kind(event.ModelCall), 3)
			require.NoError(t, r.SayAsHost(ctx, "are you there?"))
			require.NoError(t, r.RunVirtual(ctx, t0.Add(2*time.Minute)))
			var answered time.Time
			for _, e := range rec.Kind(event.Cycle) {
				if e.Cycle.Lane == "priority" {
					answered = e.Time.Add(-2 * time.Second) // the cycle's start: its call took 2 s
					break
				}
			}
			require.False(t, answered.IsZero(), "the message was answered")
			assert.Equal(t, t0.Add(tt.answer), answered)
		})
	}
}

// TestSharedBudget: the runner-wide budget holds every agent once their
// calls together spent it, with one runner-scoped event.
func TestSharedBudget(t *testing.T) {
	r, _, rec := budgetRun(t, 3, runner.Config{AutonomyWorkers: 3, SharedBudget: budget.Budget{Tokens: 3000, Window: time.Minute}}, existence.Config{})
	require.NoError(t, r.RunVirtual(context.Background(), t0.Add(50*time.Second)))
	assert.Len(t, rec.Kind(event.ModelCall), 3, "one cycle each, then all held")
	ex := rec.Kind(event.BudgetExhausted)
	require.Len(t, ex, 1)
	assert.Equal(t, "runner", ex[0].Budget.Scope)
	st := r.Stats()
	require.NotNil(t, st.Budget)
	assert.True(t, st.Budget.Exhausted)
	assert.Equal(t, int64(3000), st.Budget.Used)
	for _, a := range r.Agents() {
		assert.Nil(t, a.Status().Budget, "no budget of its own")
	}
}

// TestBudgetExecutorWaits: an executor's model call waits while the
// budget is spent, and goes on when the window refills.
func TestBudgetExecutorWaits(t *testing.T) {
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"action":"goal","content":"write notes","reasoning":"r"}`, PromptTokens: 900, OutputTokens: 100},
		llmtest.Reply{Text: "done", PromptTokens: 400, OutputTokens: 10},
	)
	var mu sync.Mutex
	var answered time.Time
	exec := existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		if _, err := asg.Model.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}}); err != nil {
			return existence.Outcome{}, err
		}
		mu.Lock()
		answered = clock.Now()
		mu.Unlock()
		return existence.Outcome{Status: identity.Done, Summary: "notes written"}, nil
	})
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: fake, Timing: existence.TimingConfig{Clock: clock}, Executor: exec,
		Observer: rec.Observe, Calls: existence.CallConfig{Budget: budget.Budget{Tokens: 1000, Window: time.Minute}, Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Tick(context.Background()))
	require.Len(t, rec.Kind(event.BudgetExhausted), 1)
	// The status flag is set just before the wait's timer is scheduled:
	// the clock moves only once the timer is there, or it would be set
	// from after the move.
	require.Eventually(t, func() bool {
		return a.Status().WaitingForBudget && slices.Contains(clock.Pending(), 61*time.Second)
	}, 10*time.Second, time.Millisecond, "the executor waits 61 s for the budget")
	clock.Advance(30 * time.Second)
	assert.True(t, a.Status().WaitingForBudget, "still spent")
	clock.Advance(31 * time.Second)
	require.NoError(t, a.WaitGoal(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, t0.Add(61*time.Second), answered)
	assert.False(t, a.Status().WaitingForBudget)
	assert.Equal(t, int64(1410), a.Status().Usage.Total())
}

func TestParseBudget(t *testing.T) {
	tests := []struct {
		in   string
		want budget.Budget
		bad  bool
	}{
		{"", budget.Budget{}, false},
		{"4000/1m", budget.Budget{Tokens: 4000, Window: time.Minute}, false},
		{" 50000/1h+5000 ", budget.Budget{Tokens: 50000, Window: time.Hour, Reserve: 5000}, false},
		{"4000", budget.Budget{}, true},
		{"0/1m", budget.Budget{}, true},
		{"4000/0s", budget.Budget{}, true},
		{"4000/fortnight", budget.Budget{}, true},
		{"4000/1m+-3", budget.Budget{}, true},
	}
	for _, tt := range tests {
		got, err := budget.Parse(tt.in)
		if tt.bad {
			assert.ErrorIs(t, err, budget.ErrInvalid, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got)
		if got.Tokens > 0 {
			back, err := budget.Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "String round-trips")
		}
	}
	_, err := existence.New(context.Background(), existence.Config{ID: "x", Name: "X", Model: llmtest.NewFake(), Calls: existence.CallConfig{Budget: budget.Budget{Tokens: 5}}})
	assert.ErrorIs(t, err, budget.ErrInvalid)
}

// TestUsageEstimatedWhenTheServerGivesNoCounts: a server that reports no
// token counts is counted by estimate, and says so.
func TestUsageEstimatedWhenTheServerGivesNoCounts(t *testing.T) {
	fake := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`})
	rec := &existencetest.Recorder{}
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: fake, Observer: rec.Observe, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Tick(context.Background()))
	calls := rec.Kind(event.ModelCall)
	require.Len(t, calls, 1)
	c := calls[0].Call
	assert.True(t, c.PromptEstimated)
	assert.True(t, c.OutputEstimated)
	assert.Equal(t, llm.RawRequestTokens(fake.Requests()[0]), c.PromptTokens)
	u := a.Status().Usage
	assert.Equal(t, int64(1), u.Calls)
	assert.Positive(t, u.Total())
	assert.Equal(t, u.Total(), u.EstimatedTokens)
}

// TestBudgetWaitIsNotAStall: the time an executor waits for its token
// budget does not count toward the goal-span stall rule.
func TestBudgetWaitIsNotAStall(t *testing.T) {
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"action":"goal","content":"write notes","reasoning":"r"}`, PromptTokens: 900, OutputTokens: 100},
		llmtest.Reply{Text: "done", PromptTokens: 400, OutputTokens: 10},
	)
	resumed, release := make(chan struct{}), make(chan struct{})
	exec := existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		if _, err := asg.Model.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}}); err != nil {
			return existence.Outcome{}, err
		}
		close(resumed)
		<-release // still working after the wait
		return existence.Outcome{Status: identity.Done, Summary: "notes written"}, nil
	})
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: fake, Timing: existence.TimingConfig{
		Clock:           clock,
		MaxGoalDuration: 30 * time.Second,
	}, Executor: exec,
		Observer: rec.Observe, Calls: existence.CallConfig{
			Budget: budget.Budget{Tokens: 1000, Window: time.Minute},
			Retry:  middleware.RetryPolicy{Attempts: 1},
		}})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Tick(context.Background()))
	// The status flag is set just before the wait's timer is scheduled:
	// the clock moves only once the timer is there, or it would be set
	// from after the move.
	require.Eventually(t, func() bool {
		return a.Status().WaitingForBudget && slices.Contains(clock.Pending(), 61*time.Second)
	}, 10*time.Second, time.Millisecond, "the executor waits 61 s for the budget")
	clock.Advance(40 * time.Second)
	require.NoError(t, a.Tick(context.Background()), "a heartbeat while it waits")
	clock.Advance(21 * time.Second)
	<-resumed
	clock.Advance(5 * time.Second)
	require.NoError(t, a.Tick(context.Background()), "66 s after the start, 5 s of it working")
	assert.Empty(t, rec.Kind(event.Stall), "the wait is not a stall")
	assert.NotEmpty(t, a.Status().Goal)
	close(release)
	require.NoError(t, a.WaitGoal(context.Background()))
	clock.Advance(time.Second)
	require.NoError(t, a.Tick(context.Background()))
	ended := rec.Kind(event.GoalEnded)
	require.Len(t, ended, 1)
	assert.Equal(t, identity.Done, ended[0].GoalStatus)
}

// TestBudgetExhaustedOnceEachTime: outside a scheduler (Agent.Tick called
// directly, which no budget holds), each exhaustion after a refill is
// reported again, and only once.
func TestBudgetExhaustedOnceEachTime(t *testing.T) {
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	reply := llmtest.Reply{Text: `{"action":"goal","content":"write notes","reasoning":"r"}`, PromptTokens: 900, OutputTokens: 100}
	fake := llmtest.NewFake(reply, reply, reply, reply, reply)
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: fake, Timing: existence.TimingConfig{Clock: clock}, Observer: rec.Observe,
		Calls: existence.CallConfig{Budget: budget.Budget{Tokens: 1500, Window: time.Minute}, Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	exhausted := func() int { return len(rec.Kind(event.BudgetExhausted)) }
	// Each tick records the last goal's outcome (Immediate: done at once)
	// and, no goal being active, runs a cycle: one call of 1,000 tokens.
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, {6 * time.Second, 1}, {12 * time.Second, 1}, // spent at 6 s, reported once
		{90 * time.Second, 1}, {96 * time.Second, 2}, // refilled, spent again: reported again
	} {
		clock.Set(t0.Add(tt.at))
		require.NoError(t, a.WaitGoal(ctx))
		require.NoError(t, a.Tick(ctx))
		assert.Equal(t, tt.want, exhausted(), "at %v", tt.at)
	}
	assert.Equal(t, 5, fake.Calls(), "a direct Tick is never held")
}
