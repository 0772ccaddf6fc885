package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoreBulkCoalescing: 1,000 heartbeats falling due during one long
// cycle are merged and counted exactly, with one timer-heap operation (the
// entry going back to the heap when the cycle ends), however often the
// driver advances meanwhile.
func TestCoreBulkCoalescing(t *testing.T) {
	const hb = 6 * time.Second
	s, es := coreOf(1, 1, 1, 0, hb)
	s.advance(st0)
	d := s.dispatch(st0)
	require.Len(t, d, 1)
	ops := s.timerOps
	for i := 1; i <= 1000; i++ {
		s.advance(st0.Add(time.Duration(i) * hb))
		assert.Empty(t, s.dispatch(st0.Add(time.Duration(i)*hb)))
	}
	assert.Equal(t, ops, s.timerOps, "no timer-heap operation while the cycle runs")
	assert.EqualValues(t, 1000, s.coalesced(), "Stats().Coalesced while it runs")
	end := st0.Add(1000*hb + time.Second)
	s.done(es[0], LaneAutonomy, end)
	assert.Equal(t, ops+1, s.timerOps, "one push when it ends")
	assert.EqualValues(t, 1000, s.coalesced())
	next, ok := s.nextAt()
	require.True(t, ok)
	assert.Equal(t, st0.Add(1001*hb), next)
	s.advance(next)
	d = s.dispatch(next)
	require.Len(t, d, 1)
	assert.Equal(t, 1000, d[0].coalesced, "CycleStats.Coalesced of the next cycle")
	assert.Equal(t, next, d[0].due)
}

// TestCoreBulkCoalescingQueued: the heartbeats of a cycle waiting in a
// lane are counted at once when it is dispatched.
func TestCoreBulkCoalescingQueued(t *testing.T) {
	const hb = 6 * time.Second
	s, es := coreOf(2, 1, 1, 0, hb)
	s.advance(st0)
	require.Len(t, s.dispatch(st0), 1) // a0 runs 1 h; a1 waits
	now := st0.Add(time.Hour)
	s.advance(now)
	assert.Equal(t, 600, s.coalescedOf(es[1]), "a1: 600 heartbeats after its first, up to 1 h included")
	assert.EqualValues(t, 1200, s.coalesced(), "a0's 600 too")
	s.done(es[0], LaneAutonomy, now.Add(time.Second))
	d := s.dispatch(now.Add(time.Second))
	require.Len(t, d, 1)
	assert.Equal(t, "a1", d[0].e.id)
	assert.Equal(t, 600, d[0].coalesced)
	assert.Equal(t, st0, d[0].due)
}

// TestCoreMatchesPerHeartbeat drives the core and a reference that
// processes every heartbeat one at a time (the scheduler before bulk
// coalescing) with the same random operations, and compares what they
// dispatch and count after each.
func TestCoreMatchesPerHeartbeat(t *testing.T) {
	const hb = 6 * time.Second
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 14))
		n := 1 + rng.IntN(5)
		aw, pw := 1+rng.IntN(2), 1+rng.IntN(2)
		cooldown := []time.Duration{0, 2 * time.Second, 6 * time.Second, 20 * time.Second}[rng.IntN(4)]
		s := newSchedCore(aw, pw, cooldown)
		ref := &refCore{newSchedCore(aw, pw, cooldown)}
		es := make([]*schedEntry, n)
		rs := make([]*schedEntry, n)
		now := st0
		for i := range n {
			es[i] = &schedEntry{id: fmt.Sprintf("a%d", i), hb: hb, timerIdx: -1, queueIdx: -1}
			rs[i] = &schedEntry{id: es[i].id, hb: hb, timerIdx: -1, queueIdx: -1}
			first := st0.Add(time.Duration(rng.IntN(6)) * time.Second)
			s.add(es[i], first)
			ref.add(rs[i], first)
		}
		var run, refRun []dispatched
		for step := range 200 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			switch op := rng.IntN(10); {
			case op < 4:
				now = now.Add([]time.Duration{0, time.Second, hb, 3 * hb, time.Minute, 7 * time.Second}[rng.IntN(6)])
				s.advance(now)
				ref.advance(now)
				d, rd := s.dispatch(now), ref.dispatch(now)
				require.Equal(t, view(rd), view(d), where)
				run, refRun = append(run, d...), append(refRun, rd...)
			case op < 7 && len(run) > 0:
				i := rng.IntN(len(run))
				end := now.Add([]time.Duration{0, -time.Second, time.Second, hb, -hb, 2 * hb, 20 * time.Second}[rng.IntN(7)])
				if end.Before(run[i].start) {
					end = run[i].start
				}
				s.done(run[i].e, run[i].lane, end)
				ref.done(refRun[i].e, refRun[i].lane, end)
				run, refRun = append(run[:i], run[i+1:]...), append(refRun[:i], refRun[i+1:]...)
			case op < 8:
				i := rng.IntN(n)
				s.wake(es[i], now)
				ref.wake(rs[i], now)
			case op < 9:
				i := rng.IntN(n)
				if es[i].removed && es[i].runIdx == 0 && rng.IntN(2) == 0 {
					// Re-added once its cycle ended (the runner never
					// re-adds an agent; the tests' fairness loop does).
					s.add(es[i], now.Add(time.Second))
					ref.add(rs[i], now.Add(time.Second))
				} else {
					s.remove(es[i])
					ref.remove(rs[i])
				}
			default:
				d, rd := s.dispatch(now), ref.dispatch(now)
				require.Equal(t, view(rd), view(d), where)
				run, refRun = append(run, d...), append(refRun, rd...)
			}
			require.Equal(t, ref.coalescedTotal, s.coalesced(), where)
			require.Equal(t, ref.queued(), s.queued(), where)
			require.Equal(t, ref.busy, s.busy, where)
			for i := range es {
				require.Equal(t, rs[i].coalesced, s.coalescedOf(es[i]), "%s: %s", where, es[i].id)
			}
		}
	}
}

func view(ds []dispatched) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s/%s due %s start %s coalesced %d", d.e.id, d.lane, d.due.Format(time.TimeOnly), d.start.Format(time.TimeOnly), d.coalesced)
	}
	return out
}

// refCore is the scheduler core as it was before bulk coalescing: every
// entry always in the timer heap, every heartbeat processed one at a time.
type refCore struct{ *schedCore }

func (s *refCore) add(e *schedEntry, first time.Time) {
	e.st, e.removed, e.next = slotIdle, false, first
	e.timerIdx, e.queueIdx = -1, -1
	s.setTimer(e, first)
}

func (s *refCore) remove(e *schedEntry) {
	if e.timerIdx >= 0 {
		s.timers.Remove(e.timerIdx)
	}
	if e.queueIdx >= 0 {
		s.queues[e.lane].Remove(e.queueIdx)
	}
	if e.st != slotRunning {
		e.st = slotIdle
	}
	e.removed = true
}

func (s *refCore) setTimer(e *schedEntry, at time.Time) {
	e.timerAt = at
	if e.timerIdx >= 0 {
		s.timers.Fix(e.timerIdx)
		return
	}
	s.seq++
	e.timerSeq = s.seq
	s.timers.Push(e)
}

func (s *refCore) advance(now time.Time) {
	for s.timers.Len() > 0 && !s.timers.Min().timerAt.After(now) {
		e := s.timers.Min()
		for !e.next.After(now) {
			s.beat(e, e.next)
			e.next = e.next.Add(e.hb)
		}
		if e.st == slotDeferred && !e.due.After(now) {
			s.enqueue(e, LaneAutonomy, e.due)
		}
		at := e.next
		if e.st == slotDeferred && e.due.Before(at) {
			at = e.due
		}
		s.setTimer(e, at)
	}
}

func (s *refCore) beat(e *schedEntry, at time.Time) {
	if e.st == slotRunning && at.After(e.lateBeat) {
		e.lateBeat = at
	}
	if e.st != slotIdle || (!e.lastEnd.IsZero() && at.Before(e.lastEnd)) {
		e.coalesced++
		s.coalescedTotal++
		return
	}
	if at.Before(e.coolUntil) {
		e.st, e.due = slotDeferred, e.coolUntil
		return
	}
	s.enqueue(e, LaneAutonomy, at)
}

func (s *refCore) enqueue(e *schedEntry, lane Lane, due time.Time) {
	if e.queueIdx >= 0 {
		s.queues[e.lane].Remove(e.queueIdx)
	}
	s.seq++
	e.st, e.lane, e.due, e.seq = slotQueued, lane, due, s.seq
	s.queues[lane].Push(e)
}

func (s *refCore) wake(e *schedEntry, now time.Time) {
	if e.removed {
		return
	}
	switch e.st {
	case slotIdle, slotDeferred:
		s.enqueue(e, LanePriority, now)
	case slotQueued:
		if e.lane != LanePriority {
			s.enqueue(e, LanePriority, now)
		}
	case slotRunning:
		e.urgent = true
	}
}

func (s *refCore) dispatch(now time.Time) []dispatched {
	var out []dispatched
	for _, lane := range [...]Lane{LanePriority, LaneAutonomy} {
		q := &s.queues[lane]
		for s.busy[lane] < s.workers[lane] && q.Len() > 0 {
			e := q.Pop()
			s.busy[lane]++
			e.st = slotRunning
			out = append(out, dispatched{e: e, lane: lane, due: e.due, start: now, coalesced: e.coalesced})
			e.coalesced = 0
		}
	}
	return out
}

func (s *refCore) done(e *schedEntry, lane Lane, end time.Time) {
	s.busy[lane]--
	if e.removed {
		return
	}
	e.st = slotIdle
	e.lastEnd = end
	e.coolUntil = end.Add(s.cooldown)
	late := e.lateBeat
	e.lateBeat = time.Time{}
	switch {
	case e.urgent:
		e.urgent = false
		s.enqueue(e, LanePriority, end)
	case !late.IsZero() && !late.Before(end):
		e.coalesced--
		s.coalescedTotal--
		s.beat(e, late)
		if e.st == slotDeferred && e.due.Before(e.timerAt) {
			s.setTimer(e, e.due)
		}
	}
}
