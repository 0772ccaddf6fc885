package clock

import (
	"sync"
	"time"
)

// Virtual is a manual [Clock]: Now returns the set time; tickers and
// AfterFunc timers fire only when [Virtual.Advance] or [Virtual.Set] moves
// the time past them. A runner driven in virtual time (runner.RunVirtual)
// needs one. It is safe for concurrent use.
type Virtual struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*ticker
	timers  []*timer
	onSet   func(time.Time)
}

var _ Clock = (*Virtual)(nil)

type timer struct {
	at      time.Time
	f       func()
	stopped bool
}

type ticker struct {
	c       chan time.Time
	every   time.Duration
	next    time.Time
	stopped bool
}

// NewVirtual returns a Virtual clock set to start.
func NewVirtual(start time.Time) *Virtual { return &Virtual{now: start} }

// Now returns the clock's time.
func (c *Virtual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// OnSet makes every later [Virtual.Set] call f with the new time first
// (on the caller's goroutine, before the time changes): how a simulation
// learns when the virtual driver moves an agent's clock. Nil removes it.
func (c *Virtual) OnSet(f func(time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onSet = f
}

// NewTicker returns a ticker that fires every d of manual time. Like
// [time.Ticker], its channel holds one pending tick; ticks are dropped
// while it is full.
func (c *Virtual) NewTicker(d time.Duration) (<-chan time.Time, func()) {
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

// AfterFunc calls f on its own goroutine once [Virtual.Advance] (or
// [Virtual.Set]) has moved the time d past now; a d ≤ 0 calls it at once.
// The returned function cancels the call, reporting whether it stopped it.
func (c *Virtual) AfterFunc(d time.Duration, f func()) func() bool {
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
func (c *Virtual) Pending() []time.Duration {
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
func (c *Virtual) fireTimersLocked() {
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
func (c *Virtual) Advance(d time.Duration) {
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
// the AfterFunc timers that are then due. The OnSet function, if any, is
// called first.
func (c *Virtual) Set(t time.Time) {
	c.mu.Lock()
	f := c.onSet
	c.mu.Unlock()
	if f != nil {
		f(t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	c.fireTimersLocked()
}
