package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var st0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// coreOf returns a core and n entries with heartbeat hb, all first due at
// st0 (no stagger).
func coreOf(n, autonomy, priority int, cooldown, hb time.Duration) (*schedCore, []*schedEntry) {
	s := newSchedCore(autonomy, priority, cooldown)
	es := make([]*schedEntry, n)
	for i := range es {
		es[i] = &schedEntry{id: fmt.Sprintf("a%d", i), hb: hb, timerIdx: -1, queueIdx: -1}
		s.add(es[i], st0)
	}
	return s, es
}

func ids(ds []dispatched) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.e.id + "/" + d.lane.String()
	}
	return out
}

func TestCoreLanesOrder(t *testing.T) {
	s, es := coreOf(4, 1, 1, 0, 6*time.Second)
	s.advance(st0)
	// A host message for the last agent: it overtakes the three queued
	// before it, in the priority lane; the autonomy lane takes the
	// earliest due.
	s.wake(es[3], st0.Add(time.Second))
	got := s.dispatch(st0.Add(time.Second))
	assert.Equal(t, []string{"a3/priority", "a0/autonomy"}, ids(got))
	assert.Equal(t, time.Second, got[1].lateness())
	assert.Equal(t, time.Duration(0), got[0].lateness())
	assert.Empty(t, s.dispatch(st0.Add(time.Second)), "both lanes busy")
	s.done(es[0], LaneAutonomy, st0.Add(2*time.Second))
	assert.Equal(t, []string{"a1/autonomy"}, ids(s.dispatch(st0.Add(2*time.Second))))
}

func TestCoreCoalescing(t *testing.T) {
	s, es := coreOf(1, 1, 1, 0, 6*time.Second)
	s.advance(st0)
	d := s.dispatch(st0)
	require.Len(t, d, 1)
	// The model takes 20 s: heartbeats at 6, 12 and 18 s are merged into
	// the running cycle, and none queues another.
	s.advance(st0.Add(20 * time.Second))
	assert.Empty(t, s.dispatch(st0.Add(20*time.Second)))
	assert.Equal(t, 3, s.coalescedOf(es[0]))
	assert.EqualValues(t, 3, s.coalesced())
	s.done(es[0], LaneAutonomy, st0.Add(20*time.Second))
	// The next cycle comes with the 24 s heartbeat, carrying the count.
	s.advance(st0.Add(24 * time.Second))
	d = s.dispatch(st0.Add(24 * time.Second))
	require.Len(t, d, 1)
	assert.Equal(t, 3, d[0].coalesced)
	assert.Equal(t, st0.Add(24*time.Second), d[0].due)
	assert.Equal(t, 0, s.coalescedOf(es[0]))
}

func TestCoreCoalescingWhileQueued(t *testing.T) {
	s, es := coreOf(2, 1, 1, 0, 6*time.Second)
	s.advance(st0)
	require.Len(t, s.dispatch(st0), 1) // a0 runs, a1 waits
	s.advance(st0.Add(13 * time.Second))
	assert.Equal(t, 2, s.coalescedOf(es[1]), "a1's heartbeats at 6 and 12 s merge into its queued cycle")
	assert.Equal(t, [2]int{1, 0}, s.queued(), "one entry per agent")
	s.done(es[0], LaneAutonomy, st0.Add(13*time.Second))
	d := s.dispatch(st0.Add(13 * time.Second))
	require.Len(t, d, 1)
	assert.Equal(t, "a1", d[0].e.id)
	assert.Equal(t, st0, d[0].due, "due at its first heartbeat")
	assert.Equal(t, 13*time.Second, d[0].lateness())
	assert.Equal(t, 2, d[0].coalesced)
}

func TestCoreCooldown(t *testing.T) {
	s, es := coreOf(1, 1, 1, 20*time.Second, 6*time.Second)
	s.advance(st0)
	require.Len(t, s.dispatch(st0), 1)
	s.done(es[0], LaneAutonomy, st0.Add(time.Second)) // cooldown until 21 s
	for _, at := range []time.Duration{6, 12, 18} {
		now := st0.Add(at * time.Second)
		s.advance(now)
		assert.Empty(t, s.dispatch(now), "at %v s, in cooldown", at)
	}
	next, ok := s.nextAt()
	require.True(t, ok)
	assert.Equal(t, st0.Add(21*time.Second), next, "the deferred cycle falls due when the cooldown ends")
	s.advance(next)
	d := s.dispatch(next)
	require.Len(t, d, 1)
	assert.Equal(t, next, d[0].due)
	assert.Equal(t, 2, d[0].coalesced, "the 12 and 18 s heartbeats merged into the one deferred at 6 s")
	// A host message ignores the cooldown.
	s.done(es[0], LaneAutonomy, next)
	s.wake(es[0], next.Add(time.Second))
	d = s.dispatch(next.Add(time.Second))
	require.Len(t, d, 1)
	assert.Equal(t, LanePriority, d[0].lane)
}

func TestCoreFairness(t *testing.T) {
	// 10 agents, one worker, a model slower than the heartbeat: every
	// agent runs once per round, in the order they fell due, and none
	// waits more than one full round of the queue.
	const n = 10
	s, es := coreOf(n, 1, 1, 0, 6*time.Second)
	for i, e := range es {
		s.remove(e)
		s.add(e, st0.Add(time.Duration(i)*time.Second))
	}
	now := st0
	var order []string
	last := map[string]int{}
	for step := range 5 * n {
		s.advance(now)
		d := s.dispatch(now)
		require.Len(t, d, 1, "step %d", step)
		id := d[0].e.id
		if prev, ok := last[id]; ok {
			assert.LessOrEqual(t, step-prev, n, "%s waited more than a round", id)
		}
		last[id] = step
		order = append(order, id)
		now = now.Add(7 * time.Second)
		s.done(d[0].e, LaneAutonomy, now)
	}
	for i := range order {
		assert.Equal(t, fmt.Sprintf("a%d", i%n), order[i], "step %d", i)
	}
}

func TestStagger(t *testing.T) {
	hb := 6 * time.Second
	seen := map[time.Duration]bool{}
	for i := range 1000 {
		id := fmt.Sprintf("agent-%05d", i)
		d := stagger(id, hb)
		assert.GreaterOrEqual(t, d, time.Duration(0))
		assert.Less(t, d, hb)
		assert.Equal(t, d, stagger(id, hb), "deterministic")
		seen[d/(hb/10)] = true
	}
	assert.Len(t, seen, 10, "spread over the whole heartbeat")
	assert.Equal(t, time.Duration(0), stagger("x", 0))
}

func TestCoreRemoveWhileRunning(t *testing.T) {
	s, es := coreOf(2, 1, 1, 0, 6*time.Second)
	s.advance(st0)
	d := s.dispatch(st0)
	require.Len(t, d, 1)
	s.remove(es[0])
	s.remove(es[1])
	s.done(es[0], LaneAutonomy, st0.Add(time.Second))
	s.advance(st0.Add(time.Minute))
	assert.Empty(t, s.dispatch(st0.Add(time.Minute)))
	assert.Equal(t, [2]int{0, 0}, s.busy)
}

// TestCoreLateBeatCooldown: a heartbeat seen while the cycle ran but
// falling due at its end is a heartbeat of its own; deferred by a 2 s
// cooldown, its cycle is queued when the cooldown ends, not at the next
// heartbeat.
func TestCoreLateBeatCooldown(t *testing.T) {
	s, es := coreOf(1, 1, 1, 2*time.Second, 6*time.Second)
	s.advance(st0)
	require.Len(t, s.dispatch(st0), 1)
	end := st0.Add(6 * time.Second)
	s.advance(end) // the manual clock reached the cycle's end first
	s.done(es[0], LaneAutonomy, end)
	assert.EqualValues(t, 0, s.coalesced())
	at, ok := s.nextAt()
	require.True(t, ok)
	assert.Equal(t, end.Add(2*time.Second), at, "the end of the cooldown")
	s.advance(at)
	got := s.dispatch(at)
	require.Len(t, got, 1)
	assert.Equal(t, time.Duration(0), got[0].lateness(), "started when due")
	assert.Equal(t, end.Add(2*time.Second), got[0].due)
}

// TestCorePriorityShare pins why host replies waited seconds beyond their
// model call under load: with one priority worker, host messages arriving
// faster than one model call (which a loaded server's queue lengthens)
// queued behind each other. Under an adaptive limit the priority lane has
// a reserved share and may grow to the whole limit; its cycles beyond the
// share take autonomy workers as they free up, not the reverse.
func TestCorePriorityShare(t *testing.T) {
	s, es := coreOf(20, 1, 1, 0, 6*time.Second)
	s.workers[LaneAutonomy], s.workers[LanePriority], s.reserve = laneShares(8, 1)
	require.Equal(t, [2]int{6, 8}, s.workers)
	require.Equal(t, 2, s.reserve)
	s.advance(st0)
	got := s.dispatch(st0)
	require.Len(t, got, 6, "the autonomy lane runs the limit less the reserve")

	// Three host messages, one after another, while the autonomy lane is
	// full and its backlog waits: none waits for another's cycle.
	at := st0.Add(time.Second)
	for _, e := range es[17:] {
		s.wake(e, at)
		got := s.dispatch(at)
		require.Len(t, got, 1)
		assert.Equal(t, LanePriority, got[0].lane)
		assert.Zero(t, got[0].lateness())
	}

	// Three priority cycles run, one beyond the reserve: the autonomy lane
	// gives that worker up when one of its cycles ends.
	s.done(es[0], LaneAutonomy, at.Add(time.Second))
	assert.Empty(t, s.dispatch(at.Add(time.Second)), "the freed worker is the priority lane's now")
	s.done(es[17], LanePriority, at.Add(time.Second))
	assert.Equal(t, []string{"a6/autonomy"}, ids(s.dispatch(at.Add(time.Second))))
}

func TestLaneShares(t *testing.T) {
	for _, c := range []struct{ n, prio, a, p, r int }{
		{1, 1, 1, 1, 1},
		{2, 1, 1, 2, 1},
		{4, 1, 3, 4, 1},
		{8, 1, 6, 8, 2},
		{9, 1, 6, 9, 3},
		{8, 4, 4, 8, 4},
		{2, 4, 1, 4, 4},
	} {
		a, p, r := laneShares(c.n, c.prio)
		assert.Equal(t, [3]int{c.a, c.p, c.r}, [3]int{a, p, r}, "limit %d, PriorityWorkers %d", c.n, c.prio)
	}
}
