package existence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

// mindFunc is a Mind made of a name and a function.
type mindFunc struct {
	name string
	run  func(ctx context.Context, env existence.MindEnv) error
}

func (m mindFunc) Name() string { return m.name }
func (m mindFunc) Run(ctx context.Context, env existence.MindEnv) error {
	return m.run(ctx, env)
}

// events delivers the events of the given kinds on a channel.
func events(kinds ...event.Kind) (event.Observer, <-chan event.Event) {
	ch := make(chan event.Event, 64)
	return func(e event.Event) {
		for _, k := range kinds {
			if e.Kind == k {
				ch <- e
			}
		}
	}, ch
}

func next(t *testing.T, ch <-chan event.Event, what string) event.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no event: "+what)
	}
	return event.Event{}
}

// waitPending waits, for at most 10 s, until clock has a timer due d from
// now (an AfterFunc call not yet run): what a test checks before moving
// the clock past a timer that another goroutine arms.
func waitPending(t *testing.T, clock *existencetest.Clock, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(clock.Pending(), d) }, 10*time.Second, time.Millisecond,
		"no timer due in %s", d)
}

// TestFailingMindBacksOffAndNeverStopsTheAgent: a mind that fails (an
// error, a panic) is reported with a failed slot on its board and runs
// again after 1 s, then 2 s; once it posts, the backoff starts over; the
// agent goes on.
func TestFailingMindBacksOffAndNeverStopsTheAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := existencetest.NewClock(t0)
	obs, evs := events(event.MindFailed, event.Slot)
	var runs atomic.Int32
	mind := mindFunc{name: "weather", run: func(ctx context.Context, env existence.MindEnv) error {
		switch runs.Add(1) {
		case 1:
			return errors.New("forecast service: 503")
		case 2:
			panic("nil map")
		case 3:
			if err := env.Post(ctx, slot.Slot{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "sunny", Importance: 0.4}); err != nil {
				return err
			}
			return errors.New("lost the connection")
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	m := &recModel{clock: clock}
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: time.Hour, NoStagger: true, Observer: obs, Logger: discardLogger()})
	require.NoError(t, err)
	defer r.Close()
	a, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: m, Minds: []existence.Mind{mind}, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	failed := func(backoff time.Duration, cause string) {
		t.Helper()
		e := next(t, evs, "the failed slot")
		require.Equal(t, event.Slot, e.Kind)
		assert.Equal(t, slot.Failed, e.Slot.Status)
		assert.Contains(t, e.Slot.Summary, cause)
		assert.Equal(t, backoff.Seconds(), e.Slot.NextRun, "next_run says when it runs again")
		e = next(t, evs, "the failure")
		require.Equal(t, event.MindFailed, e.Kind)
		assert.Equal(t, "scout", e.AgentID)
		assert.Contains(t, e.Error, cause)
		assert.Contains(t, e.Text, fmt.Sprintf("mind weather failed; it runs again in %s", backoff))
	}
	failed(time.Second, "forecast service: 503")
	s, ok := slot.Find(a.Slots(), "weather")
	require.True(t, ok, "the failed slot is on the agent's board")
	assert.Equal(t, slot.Failed, s.Status)
	// The backoff's timer is armed after the failure is reported: the
	// clock moves only once it waits, or the timer would be set after
	// the move and never fire.
	waitPending(t, clock, time.Second)
	clock.Advance(time.Second)
	failed(2*time.Second, "mind weather panicked: nil map")
	waitPending(t, clock, 2*time.Second)
	clock.Advance(2 * time.Second)
	e := next(t, evs, "the mind's own slot")
	assert.Equal(t, "sunny", e.Slot.Summary)
	failed(time.Second, "lost the connection") // it posted: the backoff starts over
	waitPending(t, clock, time.Second)
	clock.Advance(time.Second)
	require.Eventually(t, func() bool { return runs.Load() == 4 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, 0, r.Stats().Agents-1, "the agent still runs")
	cancel()
	require.NoError(t, <-done)
}

// TestRunnerMindsPostToTheSharedBoard: a runner's mind posts to the shared
// board (in memory when none is configured); a mind that returns nil is
// not run again; names are checked.
func TestRunnerMindsPostToTheSharedBoard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs, evs := events(event.Slot)
	var runs atomic.Int32
	once := mindFunc{name: "hello", run: func(ctx context.Context, env existence.MindEnv) error {
		runs.Add(1)
		return env.Post(ctx, slot.Slot{ID: "hello", Status: slot.Completed, Summary: "posted once"})
	}}
	clock := existencetest.NewClock(t0)
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: time.Hour, Observer: obs, Logger: discardLogger(), Minds: []existence.Mind{once}})
	require.NoError(t, err)
	defer r.Close()
	require.NotNil(t, r.SharedSlots(), "a board in memory")
	_, err = r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: &recModel{clock: clock}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	e := next(t, evs, "the shared slot")
	assert.Equal(t, "(shared)", e.Agent)
	got, err := r.SharedSlots().List(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "posted once", got[0].Summary)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, int32(1), runs.Load(), "a mind that returned nil is not run again")

	for _, bad := range [][]existence.Mind{
		{mindFunc{name: "two words"}},
		{mindFunc{name: "same"}, mindFunc{name: "same"}},
		{nil},
	} {
		_, err := runner.New(runner.Config{Store: memstore.New(), Minds: bad})
		assert.Error(t, err)
		_, err = existence.New(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: &recModel{}, Minds: bad})
		assert.Error(t, err)
	}
}

// TestMindModelCallsUseTheAutonomyLane: a mind's model call (MindEnv.Lane)
// waits for a worker of the autonomy lane, behind a cycle that holds it,
// while a person's message is answered on the priority lane meanwhile.
func TestMindModelCallsUseTheAutonomyLane(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := existencetest.NewClock(t0)
	busy := &recModel{clock: clock, started: make(chan recCall, 4), release: make(chan struct{})}
	answer := &recModel{clock: clock, started: make(chan recCall, 4)}
	mindModel := &recModel{clock: clock, started: make(chan recCall, 4)}
	mindDone := make(chan error, 1)
	holding := make(chan struct{}) // closed once scout's cycle holds the autonomy worker
	mind := mindFunc{name: "summarizer", run: func(ctx context.Context, env existence.MindEnv) error {
		// The mind starts with Run, as scout's first cycle falls due: it
		// calls its model only once that cycle holds the worker, or it
		// could take the worker first.
		select {
		case <-holding:
		case <-ctx.Done():
			return nil
		}
		_, err := env.Lane(mindModel).Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "summarise the news"}}})
		mindDone <- err
		<-ctx.Done()
		return nil
	}}
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: time.Hour, NoStagger: true,
		AutonomyWorkers: 1, PriorityWorkers: 1, Logger: discardLogger(), Minds: []existence.Mind{mind}})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: busy, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	<-busy.started // scout's cycle holds the only autonomy worker
	close(holding)
	require.Eventually(t, func() bool { return r.Stats().Queued[runner.LaneAutonomy] == 1 }, 10*time.Second, time.Millisecond,
		"the mind's call waits in the autonomy lane")
	_, err = r.Add(ctx, existence.Config{ID: "analyst", Name: "Cipher", Model: answer, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	require.NoError(t, r.SayAsHost(ctx, "hello", "analyst"))
	select {
	case <-answer.started: // the person is answered on the priority lane
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the priority lane waited")
	}
	select {
	case <-mindModel.started:
		require.FailNow(t, "the mind's call passed the cycle holding the autonomy worker")
	default:
	}
	close(busy.release)
	select {
	case <-mindModel.started:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the mind's call never got the autonomy worker")
	}
	require.NoError(t, <-mindDone)
	cancel()
	require.NoError(t, <-done)
}
