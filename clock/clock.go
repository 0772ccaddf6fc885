package clock

import "time"

// Clock tells the time, makes tickers and one-shot timers. Inject a
// [Virtual] for deterministic tests; [System] is the default everywhere.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTicker returns a channel that delivers a tick every d, and a
	// function that stops it.
	NewTicker(d time.Duration) (<-chan time.Time, func())
	// AfterFunc calls f on its own goroutine once d has passed, and
	// returns a function that cancels the call, reporting whether it
	// stopped it before it ran.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// System is the real clock (package time).
var System Clock = system{}

type system struct{}

func (system) Now() time.Time { return time.Now() }

func (system) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

func (system) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
