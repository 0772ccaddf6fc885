package runner_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/memstore"
)

// fakeLeases hands out the agents of pool, records renewals and releases,
// and loses the leases the test says.
type fakeLeases struct {
	mu       sync.Mutex
	pool     []string
	held     []string
	lose     []string
	released []string
	claims   []int
	renewed  chan struct{}
}

func (f *fakeLeases) Claim(ctx context.Context, max int) ([]lease.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims = append(f.claims, max)
	var out []lease.Lease
	for len(f.pool) > 0 && len(out) < max {
		id := f.pool[0]
		f.pool = f.pool[1:]
		f.held = append(f.held, id)
		out = append(out, lease.Lease{AgentID: id, Epoch: int64(7 + len(f.held)), Owner: "test:1", Expires: t0.Add(15 * time.Second)})
	}
	return out, nil
}

func (f *fakeLeases) Renew(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	lost := f.lose
	f.lose = nil
	for _, id := range lost {
		f.held = slices.DeleteFunc(f.held, func(h string) bool { return h == id })
	}
	f.mu.Unlock()
	select {
	case f.renewed <- struct{}{}:
	default:
	}
	return lost, nil
}

func (f *fakeLeases) Release(ctx context.Context, ids ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, ids...)
	return nil
}

// countingStore counts saves per agent.
type countingStore struct {
	*memstore.Store
	mu    sync.Mutex
	saves map[string]int
}

func newCountingStore() *countingStore {
	return &countingStore{Store: memstore.New(), saves: map[string]int{}}
}

func (s *countingStore) Save(ctx context.Context, st *identity.AgentState) error {
	s.mu.Lock()
	s.saves[st.Identity.AgentID]++
	s.mu.Unlock()
	return s.Store.Save(ctx, st)
}

func (s *countingStore) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves[id]
}

func TestRunnerLeases(t *testing.T) {
	clock := existencetest.NewClock(t0)
	store := newCountingStore()
	leases := &fakeLeases{pool: []string{"a1", "a2", "a3"}, renewed: make(chan struct{}, 1)}
	rec := &existencetest.Recorder{}
	fast := llmtest.NewFake(goalReply(t, "g"))
	fast.Repeat = true
	var epochs sync.Map
	r, err := runner.New(runner.Config{
		Clock: clock, Leases: leases, MaxAgents: 2, NoStagger: true, RenewEvery: 5 * time.Second, Observer: rec.Observe, Logger: discardLogger(),
		NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			epochs.Store(l.AgentID, l.Epoch)
			return existence.Config{ID: l.AgentID, Name: l.AgentID, Model: fast, Store: store, Executor: blockingExecutor(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}}, nil
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	<-leases.renewed // the first round: renew, then claim two
	waitFor(t, func() bool { return r.Len() == 2 })
	a1 := r.Agent("a1")
	require.NotNil(t, a1)
	l, ok := a1.Lease()
	require.True(t, ok)
	assert.EqualValues(t, 8, l.Epoch)
	st := a1.Status()
	require.NotNil(t, st.Lease, "Status shows the lease the runner claimed")
	assert.Equal(t, "test:1", st.Lease.Owner)
	assert.Nil(t, r.Agent("a3"), "MaxAgents is 2")

	// a1's lease is lost: it stops without a final save, and a3 is claimed
	// in its place.
	waitFor(t, func() bool { return store.count("a1") > 0 }) // its first cycle saved
	saves := store.count("a1")
	leases.mu.Lock()
	leases.lose = []string{"a1"}
	leases.mu.Unlock()
	clock.Advance(5 * time.Second)
	<-leases.renewed
	waitFor(t, func() bool { return r.Agent("a1") == nil })
	roundsUntilClaim(t, clock, leases, 1)
	waitFor(t, func() bool { return r.Agent("a3") != nil })
	lost := rec.Kind(event.LeaseLost)
	require.Len(t, lost, 1)
	assert.Equal(t, "a1", lost[0].AgentID)

	waitFor(t, func() bool { return store.count("a2") > 0 }) // a2's first cycle saved
	a2saves := store.count("a2")
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, saves, store.count("a1"), "no save after the lease was lost")
	assert.ElementsMatch(t, []string{"a2", "a3"}, leases.released, "released at once on shutdown")
	assert.Equal(t, a2saves+1, store.count("a2"), "saved once more on shutdown")
}

// waitFor waits until cond holds, for at most 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			require.Fail(t, "condition not met in 10 s")
		}
		runtime.Gosched()
	}
}

func TestAHeartbeatThatChangesNothingSavesNothing(t *testing.T) {
	store := newCountingStore()
	clock := existencetest.NewClock(t0)
	ctx := context.Background()
	a, err := existence.New(ctx, existence.Config{ID: "scout", Name: "Cedar", Store: store, Timing: existence.TimingConfig{Clock: clock}, Model: llmtest.NewFake(goalReply(t, "g")), Executor: blockingExecutor(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	require.NoError(t, a.Tick(ctx))
	assert.Equal(t, 1, store.count("scout"), "a cycle saves once")
	for range 3 {
		clock.Advance(6 * time.Second)
		require.NoError(t, a.Tick(ctx)) // the goal is still being pursued
	}
	assert.Equal(t, 1, store.count("scout"), "heartbeats that changed nothing saved nothing")
}

// lateLeases is a fakeLeases that reports late renewals
// (lease.LateReporter).
type lateLeases struct {
	*fakeLeases
	late []lease.LateRenewal
}

func (l *lateLeases) LateRenewals() []lease.LateRenewal {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.late
	l.late = nil
	return out
}

// renewedWithin waits for the next renewal of f, failing the test after
// 10 s.
func renewedWithin(t *testing.T, f *fakeLeases) {
	t.Helper()
	select {
	case <-f.renewed:
	case <-time.After(10 * time.Second):
		require.Fail(t, "no renewal in 10 s")
	}
}

// roundsUntilClaim runs lease rounds, each moving clock by a renewal
// period (5 s) and waiting for its renewal, until f has had more than n
// claims, for at most 10 s. A round claims nothing while an agent claimed
// earlier is being adopted, and the adoption counts as done just after its
// agent is added (r.Len counts it a moment before): a round started in
// that moment claims nothing, and the next one claims. Rounds run one
// after another, so a round's renewal shows that the round before it,
// and its claim, ended.
func roundsUntilClaim(t *testing.T, clock *existencetest.Clock, f *fakeLeases, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		claimed := len(f.claims) > n
		f.mu.Unlock()
		if claimed {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "no claim in 10 s of lease rounds")
		}
		clock.Advance(5 * time.Second)
		renewedWithin(t, f)
	}
}

// TestRunnerReportsLateRenewals: a late renewal of a lease the runner
// runs becomes a lease_late event of its agent, with the margin left; a
// report about an earlier lease of the agent, or about an agent it does
// not run, is not.
func TestRunnerReportsLateRenewals(t *testing.T) {
	clock := existencetest.NewClock(t0)
	leases := &lateLeases{fakeLeases: &fakeLeases{pool: []string{"a1", "a2"}, renewed: make(chan struct{}, 1)}}
	rec := &existencetest.Recorder{}
	fast := llmtest.NewFake(goalReply(t, "g"))
	fast.Repeat = true
	r, err := runner.New(runner.Config{
		Clock: clock, Leases: leases, MaxAgents: 2, NoStagger: true, RenewEvery: 5 * time.Second, Observer: rec.Observe, Logger: discardLogger(),
		NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			return existence.Config{ID: l.AgentID, Name: l.AgentID, Model: fast, Store: memstore.New(), Executor: blockingExecutor(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}}, nil
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	renewedWithin(t, leases.fakeLeases)
	waitFor(t, func() bool { return r.Len() == 2 })
	l1, ok := r.Agent("a1").Lease()
	require.True(t, ok)

	leases.mu.Lock()
	leases.late = []lease.LateRenewal{
		{AgentID: "a2", Epoch: 99, Left: time.Second, TTL: 15 * time.Second, Margin: 5 * time.Second, Renewed: true},   // an earlier lease
		{AgentID: "ghost", Epoch: 1, Left: time.Second, TTL: 15 * time.Second, Margin: 5 * time.Second, Renewed: true}, // not run here
		{AgentID: "a1", Epoch: l1.Epoch, Left: 3200 * time.Millisecond, TTL: 15 * time.Second, Margin: 5 * time.Second, Renewed: true},
	}
	leases.mu.Unlock()
	clock.Advance(5 * time.Second)
	renewedWithin(t, leases.fakeLeases)
	waitFor(t, func() bool { return len(rec.Kind(event.LeaseLate)) > 0 })
	late := rec.Kind(event.LeaseLate)
	require.Len(t, late, 1, "only the report about a lease the runner holds is an event")
	e := late[0]
	assert.Equal(t, "a1", e.AgentID)
	require.NotNil(t, e.Lease)
	assert.Equal(t, event.LeaseStats{Epoch: l1.Epoch, Left: 3200 * time.Millisecond, TTL: 15 * time.Second, Margin: 5 * time.Second, Renewed: true}, *e.Lease)
	assert.Contains(t, e.String(), "lease late: renewed with 3.2 s of its 15 s left, under the 5.0 s alarm margin")
	assert.Empty(t, rec.Kind(event.LeaseLost), "a late lease is not lost")

	cancel()
	require.NoError(t, <-done)
}

// TestRunnerRenewsWhileAdopting: loading the agents just claimed never
// holds up the renewals (a process claiming thousands of agents loads
// them for longer than a TTL), and no more agents are claimed until the
// claimed ones are adopted.
func TestRunnerRenewsWhileAdopting(t *testing.T) {
	clock := existencetest.NewClock(t0)
	leases := &fakeLeases{pool: []string{"a1", "a2", "a3"}, renewed: make(chan struct{}, 1)}
	fast := llmtest.NewFake(goalReply(t, "g"))
	fast.Repeat = true
	release := make(chan struct{})
	r, err := runner.New(runner.Config{
		Clock: clock, Leases: leases, MaxAgents: 3, NoStagger: true, RenewEvery: 5 * time.Second, Logger: discardLogger(),
		NewAgent: func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			if l.AgentID == "a2" {
				<-release // a slow load
			}
			return existence.Config{ID: l.AgentID, Name: l.AgentID, Model: fast, Store: memstore.New(), Executor: blockingExecutor(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}}, nil
		},
	})
	require.NoError(t, err)
	leases.mu.Lock()
	leases.pool = leases.pool[:2] // a3 enrolled later
	leases.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	renewedWithin(t, leases)
	waitFor(t, func() bool { return r.Len() == 1 }) // a1 adopted, a2 loading
	leases.mu.Lock()
	leases.pool = append(leases.pool, "a3")
	leases.mu.Unlock()
	for range 3 {
		clock.Advance(5 * time.Second)
		renewedWithin(t, leases) // renewed while a2 is still loading
	}
	leases.mu.Lock()
	assert.Equal(t, []int{3}, leases.claims, "no claim while the claimed agents are being adopted")
	leases.mu.Unlock()
	close(release)
	waitFor(t, func() bool { return r.Len() == 2 })
	roundsUntilClaim(t, clock, leases, 1)
	waitFor(t, func() bool { return r.Agent("a3") != nil })
	leases.mu.Lock()
	assert.Equal(t, []int{3, 1}, leases.claims, "claims again once the claimed agents are adopted, up to MaxAgents")
	leases.mu.Unlock()
	cancel()
	require.NoError(t, <-done)
}
