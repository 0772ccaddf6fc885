package mcpserver

import (
	"slices"
	"sync"

	"github.com/existence-loop/sdk/existence/event"
)

// DefaultEventsPerAgent is how many recent events an [EventLog] keeps per
// agent.
const DefaultEventsPerAgent = 200

// EventLog keeps each agent's most recent events in a bounded ring, for the
// agent_events tool (an agent's recent thoughts: goals chosen and ended,
// worldview changes, stressors, tool calls, messages). Feed it by adding
// [EventLog.Observe] to the runner's or agent's Observer, e.g.
// event.Observers(print, log.Observe). It is safe for concurrent use.
type EventLog struct {
	max int

	mu     sync.Mutex
	agents map[string]*ring
}

// NewEventLog returns an EventLog keeping the last perAgent events of each
// agent (0 or less means [DefaultEventsPerAgent]).
func NewEventLog(perAgent int) *EventLog {
	if perAgent <= 0 {
		perAgent = DefaultEventsPerAgent
	}
	return &EventLog{max: perAgent, agents: map[string]*ring{}}
}

// Observe records e; it is an [event.Observer]. Model-call events are
// kept too, so that a person can see an outage. On a nil EventLog it does
// nothing.
func (l *EventLog) Observe(e event.Event) {
	if l == nil {
		return
	}
	if e.Err != nil && e.Error == "" {
		e.Error = e.Err.Error()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.agents[e.AgentID]
	if r == nil {
		r = &ring{buf: make([]event.Event, l.max)}
		l.agents[e.AgentID] = r
	}
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
}

// Recent returns up to limit of agentID's most recent events, oldest first,
// keeping only the given kinds when kinds is not empty (limit 0 or less:
// all that are kept).
func (l *EventLog) Recent(agentID string, limit int, kinds ...event.Kind) []event.Event {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.agents[agentID]
	if r == nil {
		return nil
	}
	var out []event.Event
	for i := 0; i < r.n; i++ {
		e := r.buf[(r.next-1-i+2*len(r.buf))%len(r.buf)]
		if len(kinds) > 0 && !slices.Contains(kinds, e.Kind) {
			continue
		}
		out = append(out, e)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	slices.Reverse(out)
	return out
}

type ring struct {
	buf  []event.Event
	next int // where the next event goes
	n    int // how many are kept
}
