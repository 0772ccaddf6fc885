package clock_test

import (
	"fmt"
	"time"

	"github.com/existence-loop/sdk/clock"
)

// A virtual clock fires timers only when the test moves it: no sleeps.
func ExampleVirtual() {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	c := clock.NewVirtual(start)
	fired := make(chan time.Time, 1)
	c.AfterFunc(6*time.Second, func() { fired <- c.Now() }) // f runs on a goroutine of its own, as with time.AfterFunc
	c.Advance(5 * time.Second)
	fmt.Println("pending:", c.Pending())
	c.Advance(time.Second)
	fmt.Println("heartbeat at", (<-fired).Format("15:04:05"))
	fmt.Println("pending:", len(c.Pending()))
	// Output:
	// pending: [1s]
	// heartbeat at 12:00:06
	// pending: 0
}
