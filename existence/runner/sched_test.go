package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/pool"
	"github.com/existence-loop/sdk/store/memstore"
)

// simModel answers every cycle after latency of virtual time, read from
// the agent's clock (runner.ClockFrom), and counts its calls.
type simModel struct {
	mu      sync.Mutex
	latency func(agent string, call int) time.Duration
	calls   int
	prompts []string // each call's last message
}

func (m *simModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	if len(req.Messages) > 0 {
		m.prompts = append(m.prompts, req.Messages[len(req.Messages)-1].Content)
	}
	m.mu.Unlock()
	c, ok := runner.ClockFrom(ctx).(*clock.Virtual)
	if !ok {
		return nil, fmt.Errorf("no virtual clock in the context")
	}
	if m.latency != nil {
		c.Advance(m.latency("", n))
	}
	return &llm.Response{Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`}, nil
}

func (m *simModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func fixed(d time.Duration) func(string, int) time.Duration {
	return func(string, int) time.Duration { return d }
}

// swarm is a runner of n agents on a manual clock with a simulated model.
type swarm struct {
	r     *runner.Runner
	clock *existencetest.Clock
	model *simModel
	rec   *existencetest.Recorder
}

func newSwarm(t *testing.T, n int, cfg runner.Config, latency time.Duration) *swarm {
	t.Helper()
	s := &swarm{clock: existencetest.NewClock(t0), model: &simModel{latency: fixed(latency)}, rec: &existencetest.Recorder{}}
	cfg.Store = memstore.New()
	cfg.Clock = s.clock
	cfg.Observer = s.rec.Observe
	cfg.Logger = discardLogger()
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 6 * time.Second
	}
	r, err := runner.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for i := range n {
		id := fmt.Sprintf("a%03d", i)
		_, err := r.Add(context.Background(), existence.Config{ID: id, Name: id, Model: s.model, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	s.r = r
	return s
}

// cycles returns the cycle events, in order.
func (s *swarm) cycles() []event.Event { return s.rec.Kind(event.Cycle) }

func TestRunVirtualIsDeterministic(t *testing.T) {
	run := func() []byte {
		s := newSwarm(t, 20, runner.Config{AutonomyWorkers: 2}, 0)
		s.model.latency = func(_ string, call int) time.Duration { return time.Duration(1000+call*37%3000) * time.Millisecond }
		ctx := context.Background()
		require.NoError(t, s.r.RunVirtual(ctx, t0.Add(30*time.Second)))
		require.NoError(t, s.r.SayAsHost(ctx, "hello", "a007"))
		require.NoError(t, s.r.RunVirtual(ctx, t0.Add(60*time.Second)))
		var out []byte
		for _, e := range s.rec.Events() {
			if e.Cycle != nil {
				// wall-clock durations differ from run to run
				c := *e.Cycle
				c.Assemble, c.Generate, c.Apply, c.Total = 0, 0, 0, 0
				e.Cycle = &c
			}
			if e.Call != nil {
				c := *e.Call
				c.Duration = 0
				e.Call = &c
			}
			e.Text, e.Goal = "", "" // goal ids are random
			b, err := json.Marshal(e)
			require.NoError(t, err)
			out = append(append(out, b...), '\n')
		}
		assert.Equal(t, t0.Add(60*time.Second), s.clock.Now())
		assert.Greater(t, len(s.cycles()), 20)
		assert.Equal(t, s.model.Calls(), len(s.cycles()))
		st := s.r.Stats()
		t.Logf("cycles %v coalesced %d", st.Dispatched, st.Coalesced)
		return out
	}
	first := run()
	assert.NotEmpty(t, first)
	assert.Equal(t, string(first), string(run()))
}

func TestRunVirtualNeedsASettableClock(t *testing.T) {
	r, err := runner.New(runner.Config{Store: memstore.New()})
	require.NoError(t, err)
	assert.ErrorIs(t, r.RunVirtual(context.Background(), t0), runner.ErrNotVirtual)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestPriorityLaneOvertakesAFullAutonomyBacklog(t *testing.T) {
	// 100 agents, one autonomy worker and a 2 s model: the autonomy backlog
	// is far longer than a heartbeat.
	s := newSwarm(t, 100, runner.Config{}, 2*time.Second)
	ctx := context.Background()
	require.NoError(t, s.r.RunVirtual(ctx, t0.Add(30*time.Second)))
	st := s.r.Stats()
	require.Greater(t, st.Queued[runner.LaneAutonomy], 50, "a full autonomy backlog")
	require.NoError(t, s.r.SayAsHost(ctx, "hello", "a099"))
	said := s.clock.Now()
	require.NoError(t, s.r.RunVirtual(ctx, t0.Add(40*time.Second)))
	var got []event.Event
	for _, e := range s.cycles() {
		if e.AgentID == "a099" && e.Cycle.Lane == "priority" {
			got = append(got, e)
		}
	}
	require.Len(t, got, 1)
	assert.Equal(t, time.Duration(0), got[0].Cycle.Lateness, "the priority worker was free")
	assert.Equal(t, said.Add(2*time.Second), got[0].Time, "answered after the model latency")
}

func TestHungModelBlocksOnlyItsWorker(t *testing.T) {
	clock := existencetest.NewClock(t0)
	cycles := make(chan string, 100)
	r, err := runner.New(runner.Config{
		Store: memstore.New(), Clock: clock, AutonomyWorkers: 2, NoStagger: true, Logger: discardLogger(),
		Observer: func(e event.Event) {
			if e.Kind == event.Cycle {
				cycles <- e.AgentID
			}
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fast := llmtest.NewFake(goalReply(t, "g"))
	fast.Repeat = true
	entered := make(chan struct{})
	hung := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		close(entered)
		<-ctx.Done() // a model that never answers
		return nil, ctx.Err()
	})
	for _, id := range []string{"a1", "a2"} {
		_, err := r.Add(ctx, existence.Config{ID: id, Name: id, Model: fast, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	_, err = r.Add(ctx, existence.Config{ID: "stuck", Name: "stuck", Model: hung, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}, Timing: existence.TimingConfig{CallTimeout: time.Hour, CycleTimeout: time.Hour}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	wait := func(want ...string) {
		t.Helper()
		var got []string
		for len(got) < len(want) {
			select {
			case id := <-cycles:
				got = append(got, id)
			case <-time.After(10 * time.Second):
				require.Fail(t, "cycles missing", "only %v of %v cycles", got, want)
			}
		}
		slices.Sort(got)
		assert.Equal(t, want, got)
		for _, id := range want { // so that the next heartbeat runs a cycle
			require.NoError(t, r.Agent(id).WaitGoal(ctx))
		}
		// and their workers are free again (else the next heartbeat is
		// coalesced into the cycle that is ending).
		waitFor(t, func() bool { return r.Stats().Running[runner.LaneAutonomy] <= 1 })
	}
	wait("a1", "a2")
	<-entered
	for range 3 {
		clock.Advance(6 * time.Second)
		wait("a1", "a2") // the other worker keeps serving them
	}
	assert.Equal(t, 1, r.Stats().Running[runner.LaneAutonomy], "only the stuck agent's cycle is running")
	cancel()
	require.NoError(t, <-done)
}

func TestPeersAtScale(t *testing.T) {
	ctx := context.Background()
	s := newSwarm(t, 20, runner.Config{MaxPeersShown: 3}, 0)
	a := s.r.Agent("a000")
	require.NotNil(t, a)
	p, err := a.Preview(ctx)
	require.NoError(t, err)
	assert.Contains(t, p.Text, "YOUR PEERS:\n  a001: (no history yet)\n  a002: (no history yet)\n  a003: (no history yet)\n  (and 16 others)\n")

	// A peer that messaged the agent comes first.
	require.NoError(t, s.r.Send(ctx, "a015", "a000", "hello"))
	p, err = a.Preview(ctx)
	require.NoError(t, err)
	assert.Contains(t, p.Text, "YOUR PEERS:\n  a015: (no history yet)\n  a001: (no history yet)\n  a002: (no history yet)\n  (and 16 others)\n")

	// The rotation moves on by MaxPeersShown with every cycle.
	require.NoError(t, s.r.RunVirtual(ctx, t0.Add(7*time.Second)))
	p, err = s.r.Agent("a001").Preview(ctx)
	require.NoError(t, err)
	assert.Contains(t, p.Text, "  (and 16 others)\n")
	assert.NotContains(t, p.Text, "  a002: ", "a001 has had a cycle: its rotation moved past a002")
}

// TestSharedPeers: with SharedPeers, agents outside the rotation's
// window are shown the same peers, an agent inside it the window without
// itself, and the window moves on by MaxPeersShown once a sweep (as many
// cycles as agents).
func TestSharedPeers(t *testing.T) {
	ctx := context.Background()
	s := newSwarm(t, 20, runner.Config{MaxPeersShown: 3, SharedPeers: true}, 0)
	section := func(text string) string {
		t.Helper()
		_, after, ok := strings.Cut(text, "YOUR PEERS:\n")
		require.True(t, ok, text)
		section, _, _ := strings.Cut(after, "\n\n")
		return section
	}
	peers := func(id string) string {
		t.Helper()
		p, err := s.r.Agent(id).Preview(ctx)
		require.NoError(t, err)
		return section(p.Text)
	}
	window := "  a000: (no history yet)\n  a001: (no history yet)\n  a002: (no history yet)\n  (and 16 others)"
	assert.Equal(t, window, peers("a010"))
	assert.Equal(t, window, peers("a019"), "the same peers for agents outside the window")
	assert.Equal(t, "  a000: (no history yet)\n  a002: (no history yet)\n  a003: (no history yet)\n  (and 16 others)", peers("a001"))

	// One sweep: every agent has had a cycle, and every cycle's prompt
	// showed the sweep's window (the last one's too).
	require.NoError(t, s.r.RunVirtual(ctx, t0.Add(6*time.Second)))
	require.Len(t, s.cycles(), 20)
	s.model.mu.Lock()
	prompts := slices.Clone(s.model.prompts)
	s.model.mu.Unlock()
	require.Len(t, prompts, 20)
	for i, p := range prompts {
		assert.Contains(t, section(p), "  (and 16 others)", "cycle %d", i+1)
		// a003 stands in for a window agent that skips itself; a004 is
		// the next sweep's.
		assert.NotContains(t, section(p), "  a004: ", "cycle %d shows the sweep's window", i+1)
	}
	moved := peers("a010")
	assert.Equal(t, moved, peers("a019"))
	assert.Contains(t, moved, "  a003: ", "the window moved on by MaxPeersShown")
	assert.NotContains(t, moved, "  a000: ")
}

func TestRunnerAgentLookupAndLen(t *testing.T) {
	s := newSwarm(t, 50, runner.Config{}, 0)
	assert.Equal(t, 50, s.r.Len())
	assert.Equal(t, "a049", s.r.Agent("a049").ID())
	assert.Nil(t, s.r.Agent("nobody"))
	assert.Error(t, s.r.Wake("nobody"))
}

func TestEveryAgentGetsACycleInDueOrder(t *testing.T) {
	// 50 agents, one worker, a model far too slow (5 s for a 6 s
	// heartbeat): every agent still gets its cycle, in the order of
	// their (staggered) due times.
	s := newSwarm(t, 50, runner.Config{}, 5*time.Second)
	require.NoError(t, s.r.RunVirtual(context.Background(), t0.Add(50*5*time.Second)))
	evs := s.cycles()
	require.GreaterOrEqual(t, len(evs), 50)
	seen := map[string]bool{}
	for _, e := range evs[:50] {
		seen[e.AgentID] = true
	}
	assert.Len(t, seen, 50, "each agent once in the first round")
	var lateness []time.Duration
	for _, e := range evs[:50] {
		lateness = append(lateness, e.Cycle.Lateness)
	}
	// In due order: each start is 5 s after the previous one, while due
	// times are less than 6 s apart in all, so lateness grows.
	assert.True(t, slices.IsSorted(lateness[1:]), "%v", lateness)
	st := s.r.Stats()
	assert.Greater(t, st.Coalesced, int64(0))
	assert.Equal(t, s.model.Calls(), len(evs), "no coalesced heartbeat called the model")
}

// TestPriorityCallsAreMarked: the model calls of a priority-lane cycle
// carry middleware.WithPriority, autonomy cycles' do not, and a priority call the
// server refuses with a 503 is retried after WaitPriority (250 ms), not the
// 10 s wait after a 503 that kept host replies waiting seconds beyond their
// model call under load.
func TestPriorityCallsAreMarked(t *testing.T) {
	clock := existencetest.NewClock(t0)
	var mu sync.Mutex
	var marked []bool
	refused := false
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		marked = append(marked, middleware.IsPriority(ctx))
		if middleware.IsPriority(ctx) && !refused {
			refused = true
			return nil, &llm.StatusError{StatusCode: 503, Message: "server busy"}
		}
		return &llm.Response{Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`}, nil
	})
	var waitsMu sync.Mutex
	var waits []time.Duration
	retry := middleware.RetryPolicy{Jitter: -1, Sleep: func(ctx context.Context, d time.Duration) error {
		waitsMu.Lock()
		defer waitsMu.Unlock()
		waits = append(waits, d)
		return nil
	}}
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, NoStagger: true, Logger: discardLogger(),
		Heartbeat: 6 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		_, err := r.Add(ctx, existence.Config{ID: id, Name: id, Model: model, Calls: existence.CallConfig{Retry: retry}})
		require.NoError(t, err)
	}
	require.NoError(t, r.RunVirtual(ctx, t0.Add(time.Second)))
	mu.Lock()
	assert.Equal(t, []bool{false, false}, marked, "autonomy cycles")
	marked = nil
	mu.Unlock()
	require.NoError(t, r.SayAsHost(ctx, "hello", "b"))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(2*time.Second)))
	mu.Lock()
	assert.Equal(t, []bool{true, true}, marked, "the host message's cycle: refused, then retried")
	mu.Unlock()
	waitsMu.Lock()
	assert.Equal(t, []time.Duration{middleware.DefaultWaitPriority}, waits)
	waitsMu.Unlock()
}

// TestCallsCarryTheAgentID: every model call of an agent carries its id
// (pool.WithAgent), by which a pool.Pool pins the agent to one server.
func TestCallsCarryTheAgentID(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		seen[pool.AgentFrom(ctx)] = true
		mu.Unlock()
		return &llm.Response{Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`}, nil
	})
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: existencetest.NewClock(t0), NoStagger: true, Logger: discardLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, id := range []string{"a", "b"} {
		_, err := r.Add(context.Background(), existence.Config{ID: id, Name: id, Model: model, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	require.NoError(t, r.RunVirtual(context.Background(), t0.Add(time.Second)))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]bool{"a": true, "b": true}, seen)
}
