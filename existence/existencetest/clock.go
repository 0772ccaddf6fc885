package existencetest

import (
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/memory"
)

// Clock is the manual clock of the module's tests: a [clock.Virtual].
type Clock = clock.Virtual

// NewClock returns a Clock set to start ([clock.NewVirtual]).
func NewClock(start time.Time) *Clock { return clock.NewVirtual(start) }

// Recorder collects events; its Observe method is an [event.Observer].
// It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
}

// Observe records e.
func (r *Recorder) Observe(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Events returns the recorded events, oldest first.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Kind returns the recorded events of one kind.
func (r *Recorder) Kind(k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range r.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Memory returns the recorded [event.Memory] events whose memory
// event is of kind k.
func (r *Recorder) Memory(k memory.EventKind) []event.Event {
	var out []event.Event
	for _, e := range r.Events() {
		if e.Kind == event.Memory && e.Memory != nil && e.Memory.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Reset forgets the recorded events.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}
