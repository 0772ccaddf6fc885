package sched

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/internal/heap"
)

// Lane is one of the scheduler's two bounded worker pools (after GLaDOS's
// GLaDOS design): a [Runner] queues each agent's due cycle in one of them,
// and a cycle runs only on a free worker of its lane.
type Lane uint8

const (
	// LaneAutonomy runs ordinary existence cycles, the ones heartbeats
	// bring due. Its size is [RunnerConfig].AutonomyWorkers (default 1).
	LaneAutonomy Lane = iota
	// LanePriority runs the cycles that answer someone: a host message
	// ([Agent.SayAsHost], [Runner.SayAsHost]), an assigned task announced with
	// [Runner.Wake], and the cycles of an agent in crisis (load ≥ 0.90).
	// Autonomy work never delays it. Its size is
	// [RunnerConfig].PriorityWorkers (default 1); under [AdaptiveWorkers]
	// it has a reserved share of the limit and grows to the whole limit.
	LanePriority
)

// String returns "autonomy" or "priority".
func (l Lane) String() string {
	if l == LanePriority {
		return "priority"
	}
	return "autonomy"
}

// slotState is where an agent stands in the scheduler.
type slotState uint8

const (
	slotIdle     slotState = iota // no cycle wanted: waiting for a heartbeat
	slotDeferred                  // a cycle is wanted but the cooldown has not passed
	slotQueued                    // a cycle waits in a lane
	slotRunning                   // a cycle runs on a worker
)

// schedEntry is one agent as the scheduler sees it: pure data, no
// goroutine. Heartbeats are due times in the timer heap.
//
// An entry is in the timer heap only while idle or deferred. While its
// cycle is queued or running, every heartbeat falling due can only be
// merged into that cycle (coalescing), so it stays out of the heap and its
// heartbeats due by the core's time (next, next+hb, … ≤ schedCore.now) are
// counted in one division when the cycle is dispatched or ends (settle):
// O(1) per cycle, not per heartbeat (10,000 agents waiting for 8 workers
// see 134 M such heartbeats a simulated day).
type schedEntry struct {
	id string
	hb time.Duration

	next     time.Time // next heartbeat
	timerAt  time.Time // key in the timer heap: next, or the end of a deferral
	timerIdx int       // index in the timer heap, -1 when out
	timerSeq uint64    // tie-break among equal timerAt: the order of add

	st        slotState
	lane      Lane
	due       time.Time // of the wanted, queued or running cycle
	seq       uint64    // FIFO tie-break among equal due times
	queueIdx  int       // index in its lane's queue, -1 when out
	runIdx    int       // 1 + index in schedCore.running, 0 when out
	coalesced int       // heartbeats merged into the wanted cycle
	urgent    bool      // a priority wake arrived while the cycle ran
	again     bool      // a trigger arrived while the cycle ran (see trigger)
	lateBeat  time.Time // the latest heartbeat seen while the cycle ran
	coolUntil time.Time // no autonomy cycle starts before this
	lastEnd   time.Time // when the last cycle ended
	removed   bool

	node *node // the runner's agent; nil in the core's own tests
	// lend, for an entry that lends an autonomy worker to a mind's model
	// call (see Runner.borrow), is closed when a worker is granted; the
	// entry is never a cycle.
	lend chan struct{}
}

// dispatched is one cycle handed to a worker.
type dispatched struct {
	e         *schedEntry
	lane      Lane
	due       time.Time
	start     time.Time
	coalesced int

	// ctx and cancel are the cycle's context, set by the real-time driver
	// (a host message preempts an autonomy cycle by cancelling it).
	ctx    context.Context
	cancel context.CancelFunc
}

// lateness is how late the cycle started against its due time.
func (d dispatched) lateness() time.Duration {
	if l := d.start.Sub(d.due); l > 0 {
		return l
	}
	return 0
}

// schedCore is the scheduler as a pure data structure: a heap of
// heartbeat due times, one queue per lane ordered by due time, and worker
// slots. It runs nothing and knows no clock: drivers (the real-time one of
// [Runner.Run] and [Agent.Run], the virtual one of [Runner.RunVirtual]) feed
// it the time and run what it dispatches. It is not safe for concurrent
// use; drivers hold a mutex.
type schedCore struct {
	cooldown time.Duration
	workers  [2]int
	busy     [2]int
	// reserve is the priority lane's reserved share: priority cycles
	// running beyond it take autonomy workers (the autonomy lane starts
	// no cycle until they end), so that the two lanes together stay
	// within workers[LaneAutonomy] + reserve. It equals
	// workers[LanePriority] unless the lane may grow past its share
	// (under AdaptiveWorkers: up to the whole limit).
	reserve int
	timers  heap.Heap[*schedEntry]    // by timerAt, then insertion
	queues  [2]heap.Heap[*schedEntry] // by due time, then arrival (fairness)
	seq     uint64
	// classify picks the lane of a cycle a heartbeat brings due; nil means
	// always the autonomy lane.
	classify func(e *schedEntry) Lane
	// hold returns when a cycle of e in lane may start (a spent token
	// budget), if later than now; zero means now. nil never holds.
	hold func(e *schedEntry, lane Lane, now time.Time) time.Time
	// held counts the cycles hold deferred ([RunnerStats].Held).
	held int64

	// now is the latest time given to advance: every heartbeat due by
	// then counts as seen, those of queued and running entries lazily
	// (see settle).
	now time.Time
	// running are the entries whose cycle runs, for coalesced.
	running []*schedEntry
	// coalescedTotal counts the heartbeats merged so far, not counting
	// those of queued and running entries not settled yet (see
	// coalesced).
	coalescedTotal int64
	// timerOps counts the timer heap's pushes, fixes and removals (tests).
	timerOps int
	// triggers counts the triggers seen (RunnerStats.Triggers).
	triggers int64
	// triggerGap is the least time between a cycle's end and a cycle a
	// trigger asks for (RunnerConfig.TriggerGap).
	triggerGap time.Duration
}

func newSchedCore(autonomy, priority int, cooldown time.Duration) *schedCore {
	s := &schedCore{workers: [2]int{max(autonomy, 1), max(priority, 1)}, cooldown: max(cooldown, 0)}
	s.reserve = s.workers[LanePriority]
	s.timers = heap.Heap[*schedEntry]{Less: timerBefore, SetIndex: func(e *schedEntry, i int) { e.timerIdx = i }}
	for l := range s.queues {
		s.queues[l] = heap.Heap[*schedEntry]{Less: dueBefore, SetIndex: func(e *schedEntry, i int) { e.queueIdx = i }}
	}
	return s
}

// timerBefore orders the timer heap: by timerAt, then insertion.
func timerBefore(a, b *schedEntry) bool {
	if !a.timerAt.Equal(b.timerAt) {
		return a.timerAt.Before(b.timerAt)
	}
	return a.timerSeq < b.timerSeq
}

// dueBefore orders a lane's queue: by due time, then arrival (fairness).
func dueBefore(a, b *schedEntry) bool {
	if !a.due.Equal(b.due) {
		return a.due.Before(b.due)
	}
	return a.seq < b.seq
}

// stagger returns the offset of an agent's first heartbeat within one
// heartbeat: FNV-1a of its id, modulo the heartbeat, so that agents added
// together are spread over one heartbeat, the same way at every start.
func stagger(id string, hb time.Duration) time.Duration {
	if hb <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(hb))
}

// add puts e in the scheduler with its first heartbeat at first.
func (s *schedCore) add(e *schedEntry, first time.Time) {
	if e.hb <= 0 {
		e.hb = wire.DefaultHeartbeat
	}
	e.st, e.removed, e.next = slotIdle, false, first
	e.timerIdx, e.queueIdx = -1, -1
	s.seq++
	e.timerSeq = s.seq
	s.setTimer(e, first)
}

// remove takes e out of the scheduler. A running cycle keeps its worker
// until [schedCore.done].
func (s *schedCore) remove(e *schedEntry) {
	if !e.removed {
		s.settle(e) // its heartbeats seen so far stay counted
	}
	s.dropTimer(e)
	if e.queueIdx >= 0 {
		s.queues[e.lane].Remove(e.queueIdx)
	}
	if e.st != slotRunning {
		e.st = slotIdle
	}
	e.removed = true
}

// setTimer puts e in the timer heap at at, or moves it there. e keeps the
// tie-break of its add, so that entries due together are seen in the same
// order whether or not they left the heap meanwhile.
func (s *schedCore) setTimer(e *schedEntry, at time.Time) {
	s.timerOps++
	e.timerAt = at
	if e.timerIdx >= 0 {
		s.timers.Fix(e.timerIdx)
		return
	}
	s.timers.Push(e)
}

// dropTimer takes e out of the timer heap.
func (s *schedCore) dropTimer(e *schedEntry) {
	if e.timerIdx >= 0 {
		s.timerOps++
		s.timers.Remove(e.timerIdx)
	}
}

// rearm puts e back in the timer heap after its cycle ended: at its next
// heartbeat, or at the end of its cooldown when that comes first.
func (s *schedCore) rearm(e *schedEntry) {
	if e.removed || (e.st != slotIdle && e.st != slotDeferred) {
		return
	}
	at := e.next
	if e.st == slotDeferred && e.due.Before(at) {
		at = e.due
	}
	s.setTimer(e, at)
}

// pending returns how many heartbeats of e fell due by s.now and are not
// counted yet: those of a queued or running cycle (out of the timer heap).
func (s *schedCore) pending(e *schedEntry) int {
	if e.lend != nil || e.removed || (e.st != slotQueued && e.st != slotRunning) || e.next.After(s.now) {
		return 0
	}
	return int(s.now.Sub(e.next)/e.hb) + 1
}

// settle counts at once the heartbeats of a queued or running e that fell
// due by s.now: each is merged into its cycle, as [schedCore.beat] would
// have merged it one at a time; the latest seen while running is
// remembered for done.
func (s *schedCore) settle(e *schedEntry) {
	n := s.pending(e)
	if n == 0 {
		return
	}
	last := e.next.Add(time.Duration(n-1) * e.hb)
	if e.st == slotRunning && last.After(e.lateBeat) {
		e.lateBeat = last
	}
	e.coalesced += n
	s.coalescedTotal += int64(n)
	e.next = last.Add(e.hb)
}

// coalesced returns the heartbeats merged into a cycle so far
// ([RunnerStats].Coalesced), those of queued and running cycles included.
// It is O(queued + running).
func (s *schedCore) coalesced() int64 {
	n := s.coalescedTotal
	for l := range s.queues {
		for i := range s.queues[l].Len() {
			n += int64(s.pending(s.queues[l].At(i)))
		}
	}
	for _, e := range s.running {
		if e.st == slotRunning {
			n += int64(s.pending(e))
		}
	}
	return n
}

// coalescedOf returns the heartbeats merged into e's next cycle so far.
func (s *schedCore) coalescedOf(e *schedEntry) int {
	return e.coalesced + s.pending(e)
}

// nextAt returns the earliest time at which [schedCore.advance] has work.
func (s *schedCore) nextAt() (time.Time, bool) {
	if s.timers.Len() == 0 {
		return time.Time{}, false
	}
	return s.timers.Min().timerAt, true
}

// advance processes every heartbeat and deferral due at or before now:
// those of idle and deferred entries at once, those of queued and running
// ones when their cycle is dispatched or ends (see settle).
func (s *schedCore) advance(now time.Time) {
	if now.After(s.now) {
		s.now = now
	}
	for s.timers.Len() > 0 && !s.timers.Min().timerAt.After(now) {
		e := s.timers.Min()
		for e.st == slotIdle && !e.next.After(now) {
			if e.next.Before(e.lastEnd) {
				// Heartbeats that fell due while the last cycle ran,
				// seen only now: merged, in one count.
				lim := now
				if !e.lastEnd.After(lim) {
					lim = e.lastEnd.Add(-1)
				}
				n := int(lim.Sub(e.next)/e.hb) + 1
				e.coalesced += n
				s.coalescedTotal += int64(n)
				e.next = e.next.Add(time.Duration(n) * e.hb)
				continue
			}
			s.beat(e, e.next)
			e.next = e.next.Add(e.hb)
		}
		if e.st == slotDeferred && !e.due.After(now) {
			lane := LaneAutonomy
			if s.classify != nil {
				lane = s.classify(e) // a host message may have come meanwhile
			}
			if h := s.holdUntil(e, lane, now); !h.IsZero() {
				e.due = h // still held: the budget was spent again
			} else {
				s.enqueue(e, lane, e.due) // out of the heap
			}
		}
		if e.st == slotDeferred {
			// Merged into the deferred cycle, in one count.
			if !e.next.After(now) {
				n := int(now.Sub(e.next)/e.hb) + 1
				e.coalesced += n
				s.coalescedTotal += int64(n)
				e.next = e.next.Add(time.Duration(n) * e.hb)
			}
			s.rearm(e)
		} else if e.st == slotIdle {
			s.rearm(e)
		}
	}
}

// beat is one heartbeat of e falling due at at: it wants a cycle, or is
// merged into the one already wanted, queued or running (coalescing).
func (s *schedCore) beat(e *schedEntry, at time.Time) {
	if e.st == slotRunning && at.After(e.lateBeat) {
		// Whether it fell due while the cycle ran is known when the cycle
		// ends (see done): a manual clock can move past the cycle's end
		// before the driver sees that end.
		e.lateBeat = at
	}
	if e.st != slotIdle || (!e.lastEnd.IsZero() && at.Before(e.lastEnd)) {
		// Queued or running, or it fell due while the last cycle ran (and
		// is seen only now): merged, counted, no model call.
		e.coalesced++
		s.coalescedTotal++
		return
	}
	lane := LaneAutonomy
	if s.classify != nil {
		lane = s.classify(e)
	}
	until := time.Time{}
	if lane == LaneAutonomy {
		until = e.coolUntil
	}
	if h := s.holdUntil(e, lane, at); h.After(until) {
		until = h
	}
	if at.Before(until) {
		e.st, e.due = slotDeferred, until
		return
	}
	s.enqueue(e, lane, at)
}

// holdUntil returns when a cycle of e in lane may start by s.hold, if
// later than now (zero: now), and counts the hold.
func (s *schedCore) holdUntil(e *schedEntry, lane Lane, now time.Time) time.Time {
	if s.hold == nil {
		return time.Time{}
	}
	h := s.hold(e, lane, now)
	if !h.After(now) {
		return time.Time{}
	}
	s.held++
	return h
}

// defer_ takes e out of any queue and makes its cycle wait until until
// (a deferral: its heartbeats meanwhile are merged into it).
func (s *schedCore) defer_(e *schedEntry, until time.Time) {
	if e.queueIdx >= 0 {
		s.queues[e.lane].Remove(e.queueIdx)
	}
	e.st, e.due = slotDeferred, until
	s.rearm(e)
}

func (s *schedCore) enqueue(e *schedEntry, lane Lane, due time.Time) {
	s.dropTimer(e)
	if e.queueIdx >= 0 {
		s.queues[e.lane].Remove(e.queueIdx)
	}
	s.seq++
	e.st, e.lane, e.due, e.seq = slotQueued, lane, due, s.seq
	s.queues[lane].Push(e)
}

// wake asks for a priority cycle of e at now (a host message, an assigned
// task): an idle or deferred agent is queued in the priority lane, ignoring
// the cooldown; an agent queued in the autonomy lane moves to the priority
// lane; a running one runs again in the priority lane as soon as its cycle
// ends.
func (s *schedCore) wake(e *schedEntry, now time.Time) {
	if e.removed {
		return
	}
	switch e.st {
	case slotIdle, slotDeferred:
		if h := s.holdUntil(e, LanePriority, now); !h.IsZero() {
			s.defer_(e, h)
			return
		}
		s.enqueue(e, LanePriority, now)
	case slotQueued:
		if e.lane != LanePriority {
			s.enqueue(e, LanePriority, now)
		}
	case slotRunning:
		e.urgent = true
	}
}

// dispatch hands queued cycles to free workers, the priority lane first
// and, in each lane, the earliest due first (fairness).
func (s *schedCore) dispatch(now time.Time) []dispatched {
	var out []dispatched
	for _, lane := range [...]Lane{LanePriority, LaneAutonomy} {
		q := &s.queues[lane]
		for s.busy[lane] < s.capacity(lane) && q.Len() > 0 {
			e := q.Pop()
			if e.lend != nil {
				// A worker lent to a mind's model call (lend.go): held
				// until the call returns it.
				s.busy[lane]++
				e.st = slotRunning
				close(e.lend)
				continue
			}
			if h := s.holdUntil(e, lane, now); !h.IsZero() {
				// The budget was spent while it waited (by its goal's
				// executor, or by the runner's other agents).
				e.queueIdx = -1
				s.settle(e) // its heartbeats so far are merged into it
				s.defer_(e, h)
				continue
			}
			s.settle(e)
			s.busy[lane]++
			e.st = slotRunning
			s.running = append(s.running, e)
			e.runIdx = len(s.running)
			out = append(out, dispatched{e: e, lane: lane, due: e.due, start: now, coalesced: e.coalesced})
			e.coalesced = 0
		}
	}
	return out
}

// capacity returns how many cycles lane may run now: its workers, less,
// for the autonomy lane, the priority cycles running beyond the priority
// lane's reserve.
func (s *schedCore) capacity(lane Lane) int {
	if lane == LanePriority {
		return s.workers[LanePriority]
	}
	return s.workers[LaneAutonomy] - max(0, s.busy[LanePriority]-s.reserve)
}

// done frees the worker of e's cycle, which ended at end; the cooldown
// counts from end.
func (s *schedCore) done(e *schedEntry, lane Lane, end time.Time) {
	s.busy[lane]--
	if i := e.runIdx - 1; i >= 0 {
		last := len(s.running) - 1
		s.running[i] = s.running[last]
		s.running[i].runIdx = i + 1
		s.running[last] = nil
		s.running = s.running[:last]
		e.runIdx = 0
	}
	if e.removed {
		return
	}
	s.settle(e) // the heartbeats that fell due while it ran
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
		// A heartbeat seen while the cycle ran but falling due at or
		// after its end (a manual clock) did not fall due during it: it
		// is a heartbeat of its own, not merged.
		e.coalesced--
		s.coalescedTotal--
		s.beat(e, late)
	}
	if e.again {
		// A trigger that arrived while the cycle ran (after its prompt
		// was built, perhaps): one more cycle, which a cycle already
		// wanted absorbs.
		e.again = false
		s.trigger(e, end)
	}
	// Back in the timer heap at the next heartbeat, or at the end of the
	// cooldown when deferred; a queued cycle stays out.
	s.rearm(e)
}

// ready reports whether a lane has a queued cycle and a free worker.
func (s *schedCore) ready() bool {
	for l := range s.queues {
		if s.queues[l].Len() > 0 && s.busy[l] < s.capacity(Lane(l)) {
			return true
		}
	}
	return false
}

// queued returns the number of cycles waiting in each lane.
func (s *schedCore) queued() [2]int { return [2]int{s.queues[0].Len(), s.queues[1].Len()} }
