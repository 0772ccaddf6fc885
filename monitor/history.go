package monitor

import (
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence/event"
)

// Point is one sample of an agent's suffering load.
type Point struct {
	// Time is when the load was observed (the event's time).
	Time time.Time `json:"t"`
	// Load is the suffering load, 0–1.
	Load float64 `json:"load"`
}

// Thought is one line of the thoughts log.
type Thought struct {
	// Time, AgentID and Agent say when and who.
	Time    time.Time `json:"time"`
	AgentID string    `json:"agent_id"`
	Agent   string    `json:"agent"`
	// Kind is the event kind; Line the thoughts-log line
	// ([event.Event.String]).
	Kind string `json:"kind"`
	Line string `json:"line"`
}

// history keeps, per agent, a bounded ring of load samples and the last
// thoughts, and a bounded ring of recent thoughts of every agent. Memory is
// bounded: points × agents samples.
//
// Slot events (slotKinds: anyone holding the API token can post slots by
// the thousand) are kept apart, in rings of a quarter of the size
// (slotShare), and merged with the other thoughts by time when read: a
// flood of slot posts can fill at most that share of what is shown, and
// never pushes the agents' own thoughts out.
type history struct {
	points, thoughts int

	mu     sync.Mutex
	agents map[string]*agentHistory
	recent thoughtRings
}

type agentHistory struct {
	loads    ring[Point]
	thoughts thoughtRings
}

// slotShare is the share of a thoughts history slot events may fill: a
// quarter (one in 4).
const slotShare = 4

// slotKinds are the thoughts kept in the slot rings.
var slotKinds = map[event.Kind]bool{event.Slot: true, event.SlotDropped: true}

// thoughtRings are a history of n thoughts: n of any kind but slot
// events, and n / slotShare (at least 1) slot events.
type thoughtRings struct {
	n           int
	other, slot ring[Thought]
}

func newThoughtRings(n int) thoughtRings {
	return thoughtRings{n: n, other: newRing[Thought](n), slot: newRing[Thought](max(n/slotShare, 1))}
}

func (r *thoughtRings) add(t Thought) {
	if slotKinds[event.Kind(t.Kind)] {
		r.slot.add(t)
	} else {
		r.other.add(t)
	}
}

// list returns the newest n thoughts of both rings, oldest first, by time
// (the order of arrival among equal times).
func (r *thoughtRings) list() []Thought {
	a, b := r.other.list(), r.slot.list()
	out := make([]Thought, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && !b[0].Time.Before(a[0].Time)) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out[max(len(out)-r.n, 0):]
}

func newHistory(points, perAgent, recent int) *history {
	return &history{points: points, thoughts: perAgent, agents: map[string]*agentHistory{}, recent: newThoughtRings(recent)}
}

// thoughtKinds are the events the thoughts stream shows.
var thoughtKinds = map[event.Kind]bool{
	event.GoalChosen: true, event.GoalEnded: true, event.Worldview: true,
	event.Question: true, event.Opinion: true, event.StressorAdded: true,
	event.StressorResolved: true, event.Fallback: true, event.Crisis: true,
	event.CrisisReset: true, event.Message: true, event.Task: true,
	event.Error: true, event.ToolCall: true, event.Anticipation: true,
	event.ContextOverflow: true, event.ContextCompacted: true,
	event.Slot: true, event.SlotDropped: true, event.MindFailed: true,
	event.BudgetExhausted: true,
	// agents defined in files (docs/agents.md): workflow steps, working
	// memory, commissioning
	event.Step: true, event.WorkingMemory: true, event.Commissioning: true,
}

// loadKinds are the events whose Load is the agent's load at that time.
var loadKinds = map[event.Kind]bool{
	event.GoalChosen: true, event.StressorAdded: true,
	event.StressorResolved: true, event.Crisis: true,
}

func (h *history) observe(e event.Event) {
	load, thought := loadKinds[e.Kind], thoughtKinds[e.Kind]
	if !load && !thought {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ah := h.agents[e.AgentID]
	if ah == nil {
		ah = &agentHistory{loads: newRing[Point](h.points), thoughts: newThoughtRings(h.thoughts)}
		h.agents[e.AgentID] = ah
	}
	if load {
		ah.loads.add(Point{Time: e.Time, Load: e.Load})
	}
	if thought {
		t := Thought{Time: e.Time, AgentID: e.AgentID, Agent: e.Agent, Kind: string(e.Kind), Line: e.String()}
		ah.thoughts.add(t)
		h.recent.add(t)
	}
}

// loads returns the agent's load samples, oldest first.
func (h *history) loads(id string) []Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ah := h.agents[id]; ah != nil {
		return ah.loads.list()
	}
	return []Point{}
}

// agentThoughts returns the agent's last thoughts, oldest first.
func (h *history) agentThoughts(id string) []Thought {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ah := h.agents[id]; ah != nil {
		return ah.thoughts.list()
	}
	return []Thought{}
}

func (h *history) recentThoughts() []Thought {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.recent.list()
}

// ring is a bounded FIFO: adding beyond its capacity drops the oldest.
type ring[T any] struct {
	buf   []T
	start int
	cap   int
}

func newRing[T any](n int) ring[T] { return ring[T]{cap: max(n, 1)} }

func (r *ring[T]) add(v T) {
	if len(r.buf) < r.cap {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % r.cap
}

func (r *ring[T]) list() []T {
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}
