package existencetest

import (
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/memory"
)

// Clock is a manual [existence.Clock]. Now returns the set time; tickers
// fire only when [Clock.Advance] moves the time past their next tick. It is
// safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*ticker
	timers  []*timer
}

type timer struct {
	at      time.Time
	f       func()
	stopped bool
}

var (
	_ existence.Clock         = (*Clock)(nil)
	_ existence.TimerClock    = (*Clock)(nil)
	_ existence.SettableClock = (*Clock)(nil)
)

type ticker struct {
	c       chan time.Time
	every   time.Duration
	next    time.Time
	stopped bool
}

// NewClock returns a Clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTicker returns a ticker that fires every d of manual time. Like
// [time.Ticker], its channel holds one pending tick; ticks are dropped
// while it is full.
func (c *Clock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &ticker{c: make(chan time.Time, 1), every: d, next: c.now.Add(d)}
	c.tickers = append(c.tickers, t)
	return t.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.stopped = true
	}
}

// AfterFunc calls f on its own goroutine once [Clock.Advance] (or
// [Clock.Set]) has moved the time d past now; a d ≤ 0 calls it at once.
// The returned function cancels the call, reporting whether it stopped it.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), f: f}
	if d <= 0 {
		t.stopped = true
		go f()
		return func() bool { return false }
	}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Pending returns the delays, from now, of the AfterFunc calls not yet
// run nor cancelled, in the order they were scheduled: what a test checks
// to see a backoff (for example memory's backfill) waiting.
func (c *Clock) Pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if !t.stopped {
			out = append(out, t.at.Sub(c.now))
		}
	}
	return out
}

// fireTimersLocked runs the due timers; c.mu must be held.
func (c *Clock) fireTimersLocked() {
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			go t.f()
		default:
			kept = append(kept, t)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
}

// Advance moves the time forward by d, fires every ticker whose next tick
// is due and runs the due AfterFunc timers.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireTimersLocked()
	for _, t := range c.tickers {
		if t.stopped || t.every <= 0 {
			continue
		}
		for !t.next.After(c.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.every)
		}
	}
}

// Set sets the time (it may go backwards) without firing tickers; it runs
// the AfterFunc timers that are then due.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	c.fireTimersLocked()
}

// Recorder collects events; its Observe method is an [existence.Observer].
// It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []existence.Event
}

// Observe records e.
func (r *Recorder) Observe(e existence.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Events returns the recorded events, oldest first.
func (r *Recorder) Events() []existence.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Kind returns the recorded events of one kind.
func (r *Recorder) Kind(k existence.EventKind) []existence.Event {
	var out []existence.Event
	for _, e := range r.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Memory returns the recorded [existence.EventMemory] events whose memory
// event is of kind k.
func (r *Recorder) Memory(k memory.EventKind) []existence.Event {
	var out []existence.Event
	for _, e := range r.Events() {
		if e.Kind == existence.EventMemory && e.Memory != nil && e.Memory.Kind == k {
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
