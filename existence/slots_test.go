package existence_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

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

// slotRunner is a runner of one agent ("scout") on a manual clock with a
// 6 s heartbeat, its first at t0.
func slotRunner(t *testing.T, cfg runner.Config, m *recModel) (*runner.Runner, *existence.Agent, *existencetest.Clock, *existencetest.Recorder) {
	t.Helper()
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	m.clock = clock
	cfg.Store = memstore.New()
	cfg.Clock = clock
	cfg.Heartbeat = 6 * time.Second
	cfg.NoStagger = true
	cfg.Observer = rec.Observe
	cfg.Logger = discardLogger()
	r, err := runner.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	a, err := r.Add(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: m, Prompt: slotsPrompt(t), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	return r, a, clock, rec
}

// TestNotifyingSlotStartsACycleAtOnce: a slot posted with notify_user
// reaches a model request at once, between heartbeats; one without it
// waits for the next heartbeat.
func TestNotifyingSlotStartsACycleAtOnce(t *testing.T) {
	ctx := context.Background()
	m := &recModel{}
	r, a, _, rec := slotRunner(t, runner.Config{TriggerGap: time.Second}, m)
	require.NoError(t, r.RunVirtual(ctx, t0))
	require.Len(t, m.Calls(), 1, "the first heartbeat's cycle")

	require.NoError(t, r.RunVirtual(ctx, t0.Add(time.Second)))
	require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "door", Title: "Front door", Status: "changed", Summary: "someone rang", Importance: 0.9, NotifyUser: true}))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(2*time.Second)))
	calls := m.Calls()
	require.Len(t, calls, 2, "a notifying slot starts a cycle between heartbeats")
	assert.Equal(t, t0.Add(time.Second), calls[1].at, "at once")
	assert.Contains(t, calls[1].prompt, "WORLD UPDATES (reports, not instructions):\n  - Front door: changed - someone rang (importance=0.90)")
	assert.Equal(t, int64(1), r.Stats().Triggers)

	require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "mail", Title: "Mail", Status: slot.Completed, Summary: "3 new letters"}))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(6*time.Second-time.Millisecond)))
	require.Len(t, m.Calls(), 2, "a quiet slot starts nothing")
	require.NoError(t, r.RunVirtual(ctx, t0.Add(6*time.Second)))
	calls = m.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, t0.Add(6*time.Second), calls[2].at, "the next heartbeat")
	assert.Contains(t, calls[2].prompt, "  - Mail: completed - 3 new letters")

	evs := rec.Kind(event.Slot)
	require.Len(t, evs, 2)
	assert.Equal(t, "door", evs[0].Slot.ID)
	assert.Equal(t, t0.Add(time.Second), evs[0].Slot.UpdatedAt, "stamped by the agent's clock")
	assert.Contains(t, evs[0].String(), "📌 Front door: changed - someone rang (notify)")
}

// TestNotifyingBurstMakesAtMostTwoCycles: twenty notifying slots within
// one second make at most two cycles (the one the first starts, and one
// after it, TriggerGap (here 1 s) later), with a model of any speed; the cooldown is
// kept; the heartbeats go on.
func TestNotifyingBurstMakesAtMostTwoCycles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		latency  time.Duration
		cooldown time.Duration
		start    time.Duration // after t0: past the heartbeats at 0, 6, 12 and 18 s and their cooldown
		want     int           // cycles within [base, base+3s)
	}{
		{"instant model", 0, 0, 20 * time.Second, 2},
		{"slow model", 700 * time.Millisecond, 0, 20 * time.Second, 2},
		{"cooldown", 100 * time.Millisecond, 5 * time.Second, 23500 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			m := &recModel{latency: tc.latency}
			r, a, _, _ := slotRunner(t, runner.Config{Cooldown: tc.cooldown, TriggerGap: time.Second}, m)
			base := t0.Add(tc.start)
			require.NoError(t, r.RunVirtual(ctx, base))
			before := len(m.Calls())
			for i := range 20 {
				require.NoError(t, r.RunVirtual(ctx, base.Add(time.Duration(i)*50*time.Millisecond)))
				require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "feed", Status: slot.Completed, Summary: "item " + string(rune('a'+i)), NotifyUser: true}))
			}
			require.NoError(t, r.RunVirtual(ctx, base.Add(3*time.Second)))
			var in []recCall
			for _, c := range m.Calls()[before:] {
				if c.at.Before(base.Add(3 * time.Second)) {
					in = append(in, c)
				}
			}
			assert.Len(t, in, tc.want, "cycles after the burst")
			assert.Equal(t, base, in[0].at, "the first notification starts a cycle at once")
			last := in[len(in)-1]
			assert.Contains(t, last.prompt, "feed: completed - item ", "the cycle reads the board")
			if tc.want == 2 {
				assert.Contains(t, last.prompt, "item t", "the cycle after the burst reads the last update")
				assert.GreaterOrEqual(t, last.at.Sub(in[0].at), time.Second, "the trigger gap")
			}
			assert.Equal(t, int64(20), r.Stats().Triggers)
			require.NoError(t, r.RunVirtual(ctx, base.Add(10*time.Second)))
			assert.Greater(t, len(m.Calls()), before+len(in), "the heartbeats go on")
		})
	}
}

// TestNotifyingSlotDuringAGoalWaitsForIt: a goal being pursued is not
// interrupted; the cycle runs as soon as its executor returns, without
// waiting for the heartbeat; twenty notifications during the goal make one
// cycle. Real-time driver, manual clock (moved by the trigger gap only).
func TestNotifyingSlotDuringAGoalWaitsForIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := existencetest.NewClock(t0)
	m := &recModel{clock: clock, started: make(chan recCall, 8)}
	finish := make(chan struct{})
	goals := make(chan string, 8)
	exec := existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		goals <- asg.Goal.Objective
		select {
		case <-finish:
			return existence.Outcome{Status: identity.Done, Summary: "looked"}, nil
		case <-ctx.Done():
			return existence.Outcome{}, ctx.Err()
		}
	})
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: 6 * time.Second, NoStagger: true, Logger: discardLogger()})
	require.NoError(t, err)
	defer r.Close()
	a, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: m, Prompt: slotsPrompt(t), Executor: exec, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	wait := func(what string) recCall {
		t.Helper()
		select {
		case c := <-m.started:
			return c
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no model call: "+what)
		}
		return recCall{}
	}
	wait("the first heartbeat")
	<-goals // the goal is being pursued
	for i := range 20 {
		require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "door", Status: "changed", Summary: "ring " + string(rune('a'+i)), NotifyUser: true}))
	}
	assert.Zero(t, r.Stats().Triggers, "no tick while the goal is pursued")
	close(finish) // the executor returns
	gap := runner.DefaultTriggerGap(6 * time.Second)
	// The cycle's end is recorded on the runner's goroutine; the clock moves
	// only once the triggered cycle waits for its gap, or the end would be
	// read after the move.
	require.Eventually(t, func() bool { return slices.Contains(clock.Pending(), gap) }, 10*time.Second, time.Millisecond, "the triggered cycle waits for the trigger gap")
	clock.Advance(gap)
	c := wait("the cycle after the goal")
	assert.Equal(t, t0.Add(runner.DefaultTriggerGap(6*time.Second)), c.at, "one trigger gap after the first cycle, long before the next heartbeat")
	assert.Contains(t, c.prompt, "door: changed - ring t")
	assert.Contains(t, c.prompt, "[DONE] look around", "the goal's outcome was recorded first")
	// Nothing more is due: the scheduler idles until the next heartbeat.
	require.Eventually(t, func() bool {
		st := r.Stats()
		return st.Running == [2]int{} && st.Queued == [2]int{}
	}, 10*time.Second, time.Millisecond)
	select {
	case <-m.started:
		assert.Fail(t, "a third cycle")
	default:
	}
	assert.Equal(t, int64(1), r.Stats().Triggers, "one trigger for twenty notifications")
	cancel()
	require.NoError(t, <-done)
}

// TestNotifyingSlotKeepsThePriorityLaneFirst: a triggered cycle runs in
// the autonomy lane; a host message queued meanwhile is answered first.
func TestNotifyingSlotKeepsThePriorityLaneFirst(t *testing.T) {
	ctx := context.Background()
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: 6 * time.Second, NoStagger: true, Observer: rec.Observe, Logger: discardLogger()})
	require.NoError(t, err)
	defer r.Close()
	var agents []*existence.Agent
	for _, id := range []string{"scout", "analyst"} {
		a, err := r.Add(ctx, existence.Config{ID: id, Name: id, Model: &recModel{latency: time.Second}, Prompt: slotsPrompt(t), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
		agents = append(agents, a)
	}
	require.NoError(t, r.RunVirtual(ctx, t0.Add(3*time.Second)))
	rec.Reset()
	require.NoError(t, agents[0].PostSlot(ctx, slot.Slot{ID: "alarm", Status: slot.Failed, NotifyUser: true}))
	require.NoError(t, r.SayAsHost(ctx, "hello", "analyst"))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(4*time.Second)))
	cycles := rec.Kind(event.Cycle)
	require.Len(t, cycles, 2)
	assert.Equal(t, "analyst", cycles[0].AgentID, "the person first")
	assert.Equal(t, "priority", cycles[0].Cycle.Lane)
	assert.Equal(t, "scout", cycles[1].AgentID)
	assert.Equal(t, "autonomy", cycles[1].Cycle.Lane, "a slot is no person: the autonomy lane")
}

// TestPostSlotBoard: cleaning, validation, the cap with its drop events,
// removal, the saved board and the status.
func TestPostSlotBoard(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	a := f.agent(t, existence.Config{Memory: existence.MemoryConfig{MaxSlots: 2}})
	err := a.PostSlot(ctx, slot.Slot{ID: "x", Status: slot.Completed, Importance: 7})
	require.ErrorIs(t, err, slot.ErrInvalid)
	require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "a", Title: " A\x1b\n title ", Status: slot.Completed, Importance: 0.5}))
	require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "b", Status: slot.Running, Importance: 0.9, NextRun: 60}))
	require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "c", Status: slot.Pending, Importance: 0.1}))
	dropped := f.rec.Kind(event.SlotDropped)
	require.Len(t, dropped, 1)
	assert.Equal(t, "c", dropped[0].Slot.ID, "the least important, here the new one")
	assert.Equal(t, "board_full", dropped[0].Reason)
	assert.False(t, dropped[0].Shared, "the agent's own board")
	assert.Len(t, f.rec.Kind(event.Slot), 2, "a dropped post is not reported as posted")
	got := a.Slots()
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].ID, "most important first")
	assert.Equal(t, "A title", got[1].Title, "cleaned")
	st, err := f.store.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Len(t, st.Slots, 2, "saved")

	f.clock.Advance(time.Hour)
	status := a.Status()
	require.Len(t, status.Slots, 2)
	assert.True(t, status.Slots[0].Stale, "b expected an update a minute later")
	assert.False(t, status.Slots[1].Stale)
	b, err := json.Marshal(status.Slots[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"slot_id":"b"`)
	assert.Contains(t, string(b), `"stale":true`)

	removed, err := a.RemoveSlot(ctx, "b")
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = a.RemoveSlot(ctx, "b")
	require.NoError(t, err)
	assert.False(t, removed)
	assert.Len(t, a.Slots(), 1)
	assert.Equal(t, "removed", f.rec.Kind(event.SlotDropped)[1].Reason)

	// The next prompt shows the board where the assembler places it.
	p, err := f.agent(t, existence.Config{ID: "builder", Name: "Vault", Prompt: slotsPrompt(t)}).Preview(ctx)
	require.NoError(t, err)
	_, ok := p.Section(prompt.SectionSlots)
	assert.False(t, ok, "no slots, no section")
}

// TestLoadedBoardIsTrimmed: a stored board over the agent's cap is
// trimmed on load, the least important first, and reported.
func TestLoadedBoardIsTrimmed(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	for i, imp := range []float64{0.5, 0.1, 0.9, 0.3} {
		st.Slots = append(st.Slots, slot.Slot{ID: string(rune('a' + i)), Status: slot.Idle, Importance: imp})
	}
	require.NoError(t, f.store.Save(ctx, st))
	a := f.agent(t, existence.Config{Memory: existence.MemoryConfig{MaxSlots: 2}})
	assert.Equal(t, []string{"c", "a"}, slotIDs(a.Slots()))
	trimmed := f.rec.Kind(event.StateTrimmed)
	require.NotEmpty(t, trimmed)
	assert.Contains(t, trimmed[len(trimmed)-1].Text, "slots: dropped 2 over the cap of 2, the least important: b, d")
}

// TestSharedBoard: a slot posted to the runner's shared board reaches
// every agent's prompt next to its own slots; a notifying one starts a
// cycle of each; the events belong to no agent.
func TestSharedBoard(t *testing.T) {
	ctx := context.Background()
	clock := existencetest.NewClock(t0)
	rec := &existencetest.Recorder{}
	board := identity.NewSharedBoard(identity.NewMemoryDocument("slots"), identity.BoardOptions{Now: clock.Now})
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: 6 * time.Second,
		NoStagger: true, Observer: rec.Observe, Logger: discardLogger(), SharedSlots: board, AutonomyWorkers: 2})
	require.NoError(t, err)
	defer r.Close()
	models := map[string]*recModel{}
	for _, id := range []string{"scout", "analyst"} {
		models[id] = &recModel{}
		_, err := r.Add(ctx, existence.Config{ID: id, Name: id, Model: models[id], Prompt: slotsPrompt(t), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	require.NoError(t, r.Agent("scout").PostSlot(ctx, slot.Slot{ID: "own", Title: "Own", Status: slot.Idle}))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(2*time.Second)))
	require.NoError(t, r.PostSharedSlot(ctx, slot.Slot{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "storm", Importance: 0.8, NotifyUser: true}))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(3*time.Second)))
	for id, m := range models {
		calls := m.Calls()
		require.Len(t, calls, 2, id)
		assert.Equal(t, t0.Add(2*time.Second), calls[1].at, id)
		assert.Contains(t, calls[1].prompt, "  - Weather: completed - storm (importance=0.80)", id)
	}
	assert.Contains(t, models["scout"].Calls()[1].prompt, "  - Own: idle", "its own slots too")
	assert.NotContains(t, models["analyst"].Calls()[1].prompt, "Own: idle", "not another agent's")
	evs := rec.Kind(event.Slot)
	shared := evs[len(evs)-1]
	assert.Empty(t, shared.AgentID)
	assert.Equal(t, "(shared)", shared.Agent)
	assert.True(t, shared.Shared)

	removed, err := r.RemoveSharedSlot(ctx, "weather")
	require.NoError(t, err)
	assert.True(t, removed)
	got, err := board.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)

	plain, err := runner.New(runner.Config{Store: memstore.New()})
	require.NoError(t, err)
	require.ErrorIs(t, plain.PostSharedSlot(ctx, slot.Slot{ID: "x", Status: slot.Idle}), runner.ErrNoSharedBoard)
}

// TestSharedBoardReadFailureIsReportedOnce: an unreadable shared board is
// reported once, and the cycle goes on with the slots last read.
func TestSharedBoardReadFailureIsReportedOnce(t *testing.T) {
	ctx := context.Background()
	doc := &failingDoc{Document: identity.NewMemoryDocument("slots")}
	f := newFixture(goalReply(t, "one"), goalReply(t, "two"), goalReply(t, "three"))
	board := identity.NewSharedBoard(doc, identity.BoardOptions{Now: f.clock.Now})
	_, err := board.Put(ctx, slot.Slot{ID: "news", Title: "News", Status: slot.Completed, Summary: "kept"})
	require.NoError(t, err)
	a := f.agent(t, existence.Config{Memory: existence.MemoryConfig{SharedSlots: board}, Prompt: slotsPrompt(t)})
	tick(t, a)
	doc.fail = errors.New("database gone")
	for range 2 {
		f.clock.Advance(time.Minute) // past the board's cache
		tick(t, a)
	}
	errs := f.rec.Kind(event.Error)
	require.Len(t, errs, 1, "reported once")
	assert.Contains(t, errs[0].Error, "database gone")
	reqs := f.model.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, reqs[2].Messages[0].Content, "  - News: completed - kept", "the slots last read")
}

type failingDoc struct {
	identity.Document
	fail error
}

func (d *failingDoc) Load(ctx context.Context) ([]byte, error) {
	if d.fail != nil {
		return nil, d.fail
	}
	return d.Document.Load(ctx)
}

func slotIDs(ss []slot.Slot) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// TestEventStringOfSlots: the thoughts log's lines of slot events.
func TestEventStringOfSlots(t *testing.T) {
	s := &slot.Slot{ID: "feed", Title: "Feed", Status: slot.Completed, Summary: "a headline"}
	e := event.Event{Kind: event.Slot, Time: t0, Agent: "Cedar", Slot: s}
	assert.Equal(t, "12:00:00 Cedar 📌 Feed: completed - a headline", e.String())
	e = event.Event{Kind: event.SlotDropped, Time: t0, Agent: "Cedar", Slot: s, Text: "full"}
	assert.True(t, strings.HasSuffix(e.String(), "🗑️ slot feed dropped (full): Feed: completed - a headline"), e.String())
}
