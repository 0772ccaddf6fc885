package existence

import (
	"container/heap"
	"context"
	"hash/fnv"
	"time"
)

// Lane is one of the scheduler's two bounded worker pools (issue 9, after
// seed 003's GLaDOS design).
type Lane uint8

const (
	// LaneAutonomy runs ordinary existence cycles, the ones heartbeats
	// bring due. Its size is [RunnerConfig].AutonomyWorkers (default 1).
	LaneAutonomy Lane = iota
	// LanePriority runs the cycles that answer someone: a host message
	// ([Agent.SayAsHost], [Runner.SayAsHost]), an assigned task announced with
	// [Runner.Wake], and the cycles of an agent in crisis (load ≥ 0.90).
	// Autonomy work never delays it. Its size is
	// [RunnerConfig].PriorityWorkers (default 1).
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
type schedEntry struct {
	id string
	hb time.Duration

	next     time.Time // next heartbeat
	timerAt  time.Time // key in the timer heap: next, or the end of a deferral
	timerIdx int       // index in the timer heap, -1 when out
	timerSeq uint64

	st        slotState
	lane      Lane
	due       time.Time // of the wanted, queued or running cycle
	seq       uint64    // FIFO tie-break among equal due times
	queueIdx  int       // index in its lane's queue, -1 when out
	coalesced int       // heartbeats merged into the wanted cycle
	urgent    bool      // a priority wake arrived while the cycle ran
	lateBeat  time.Time // the latest heartbeat seen while the cycle ran
	coolUntil time.Time // no autonomy cycle starts before this
	lastEnd   time.Time // when the last cycle ended
	removed   bool

	node *node // the runner's agent; nil in the core's own tests
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

// schedCore is the scheduler as a pure data structure (issue 9): a heap of
// heartbeat due times, one queue per lane ordered by due time, and worker
// slots. It runs nothing and knows no clock: drivers (the real-time one of
// [Runner.Run] and [Agent.Run], the virtual one of [Runner.RunVirtual]) feed
// it the time and run what it dispatches. It is not safe for concurrent
// use; drivers hold a mutex.
type schedCore struct {
	cooldown time.Duration
	workers  [2]int
	busy     [2]int
	timers   timerHeap
	queues   [2]queueHeap
	seq      uint64
	// classify picks the lane of a cycle a heartbeat brings due; nil means
	// always the autonomy lane.
	classify func(e *schedEntry) Lane

	coalescedTotal int64
}

func newSchedCore(autonomy, priority int, cooldown time.Duration) *schedCore {
	return &schedCore{workers: [2]int{max(autonomy, 1), max(priority, 1)}, cooldown: max(cooldown, 0)}
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
		e.hb = DefaultHeartbeat
	}
	e.st, e.removed, e.next = slotIdle, false, first
	e.timerIdx, e.queueIdx = -1, -1
	s.setTimer(e, first)
}

// remove takes e out of the scheduler. A running cycle keeps its worker
// until [schedCore.done].
func (s *schedCore) remove(e *schedEntry) {
	if e.timerIdx >= 0 {
		heap.Remove(&s.timers, e.timerIdx)
	}
	if e.queueIdx >= 0 {
		heap.Remove(&s.queues[e.lane], e.queueIdx)
	}
	if e.st != slotRunning {
		e.st = slotIdle
	}
	e.removed = true
}

func (s *schedCore) setTimer(e *schedEntry, at time.Time) {
	e.timerAt = at
	if e.timerIdx >= 0 {
		heap.Fix(&s.timers, e.timerIdx)
		return
	}
	s.seq++
	e.timerSeq = s.seq
	heap.Push(&s.timers, e)
}

// nextAt returns the earliest time at which [schedCore.advance] has work.
func (s *schedCore) nextAt() (time.Time, bool) {
	if len(s.timers) == 0 {
		return time.Time{}, false
	}
	return s.timers[0].timerAt, true
}

// advance processes every heartbeat and deferral due at or before now.
func (s *schedCore) advance(now time.Time) {
	for len(s.timers) > 0 && !s.timers[0].timerAt.After(now) {
		e := s.timers[0]
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
	if lane == LaneAutonomy && at.Before(e.coolUntil) {
		e.st, e.due = slotDeferred, e.coolUntil
		return
	}
	s.enqueue(e, lane, at)
}

func (s *schedCore) enqueue(e *schedEntry, lane Lane, due time.Time) {
	if e.queueIdx >= 0 {
		heap.Remove(&s.queues[e.lane], e.queueIdx)
	}
	s.seq++
	e.st, e.lane, e.due, e.seq = slotQueued, lane, due, s.seq
	heap.Push(&s.queues[lane], e)
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
		for s.busy[lane] < s.workers[lane] && q.Len() > 0 {
			e := heap.Pop(q).(*schedEntry)
			s.busy[lane]++
			e.st = slotRunning
			out = append(out, dispatched{e: e, lane: lane, due: e.due, start: now, coalesced: e.coalesced})
			e.coalesced = 0
		}
	}
	return out
}

// done frees the worker of e's cycle, which ended at end; the cooldown
// counts from end.
func (s *schedCore) done(e *schedEntry, lane Lane, end time.Time) {
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
		// A heartbeat seen while the cycle ran but falling due at or
		// after its end (a manual clock) did not fall due during it: it
		// is a heartbeat of its own, not merged.
		e.coalesced--
		s.coalescedTotal--
		s.beat(e, late)
		if e.st == slotDeferred && e.due.Before(e.timerAt) {
			s.setTimer(e, e.due) // the end of the cooldown, not the next heartbeat
		}
	}
}

// ready reports whether a lane has a queued cycle and a free worker.
func (s *schedCore) ready() bool {
	for l := range s.queues {
		if s.queues[l].Len() > 0 && s.busy[l] < s.workers[l] {
			return true
		}
	}
	return false
}

// queued returns the number of cycles waiting in each lane.
func (s *schedCore) queued() [2]int { return [2]int{s.queues[0].Len(), s.queues[1].Len()} }

// timerHeap orders entries by timerAt, then insertion.
type timerHeap []*schedEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].timerAt.Equal(h[j].timerAt) {
		return h[i].timerAt.Before(h[j].timerAt)
	}
	return h[i].timerSeq < h[j].timerSeq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].timerIdx, h[j].timerIdx = i, j
}
func (h *timerHeap) Push(x any) {
	e := x.(*schedEntry)
	e.timerIdx = len(*h)
	*h = append(*h, e)
}
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.timerIdx = -1
	return e
}

// queueHeap orders a lane's cycles by due time, then arrival (fairness).
type queueHeap []*schedEntry

func (h queueHeap) Len() int { return len(h) }
func (h queueHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h queueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].queueIdx, h[j].queueIdx = i, j
}
func (h *queueHeap) Push(x any) {
	e := x.(*schedEntry)
	e.queueIdx = len(*h)
	*h = append(*h, e)
}
func (h *queueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.queueIdx = -1
	return e
}
