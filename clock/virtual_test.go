package clock_test

import (
	"testing"
	"time"

	"github.com/existence-loop/sdk/clock"
)

func TestVirtual(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		move        func(c *clock.Virtual)
		wantNow     time.Time
		wantTicks   int
		wantFired   bool
		wantPending int
	}{
		{"nothing", func(*clock.Virtual) {}, t0, 0, false, 1},
		{"advance past the ticker only", func(c *clock.Virtual) { c.Advance(time.Second) }, t0.Add(time.Second), 1, false, 1},
		{"advance past both", func(c *clock.Virtual) { c.Advance(3 * time.Second) }, t0.Add(3 * time.Second), 1, true, 0},
		{"set fires timers, not tickers", func(c *clock.Virtual) { c.Set(t0.Add(3 * time.Second)) }, t0.Add(3 * time.Second), 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewVirtual(t0)
			ticks, stop := c.NewTicker(time.Second)
			defer stop()
			fired := make(chan struct{})
			c.AfterFunc(2*time.Second, func() { close(fired) })
			tt.move(c)
			if got := c.Now(); !got.Equal(tt.wantNow) {
				t.Errorf("Now() = %v, want %v", got, tt.wantNow)
			}
			if got := len(ticks); got != tt.wantTicks {
				t.Errorf("ticks pending = %d, want %d", got, tt.wantTicks)
			}
			if tt.wantFired {
				<-fired
			}
			if got := len(c.Pending()); got != tt.wantPending {
				t.Errorf("Pending() has %d timers, want %d", got, tt.wantPending)
			}
		})
	}
}

func TestVirtualOnSet(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := clock.NewVirtual(t0)
	var seen []time.Time
	c.OnSet(func(t time.Time) { seen = append(seen, t) })
	c.Set(t0.Add(time.Minute))
	c.Advance(time.Minute)
	if len(seen) != 1 || !seen[0].Equal(t0.Add(time.Minute)) {
		t.Fatalf("OnSet saw %v, want one call at %v", seen, t0.Add(time.Minute))
	}
}
