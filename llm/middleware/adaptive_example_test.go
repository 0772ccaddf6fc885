package middleware_test

import (
	"fmt"
	"time"

	"github.com/existence-loop/sdk/llm/middleware"
)

// An adaptive limit learns from the calls it measures: here a server with
// 4 slots and 500 ms a call, kept busy by as many calls as the limit says.
// The limit doubles while the latency stays at its minimum, then settles
// where the server holds a short queue.
func ExampleAdaptiveLimit() {
	l := middleware.NewAdaptiveLimit(middleware.AdaptiveConfig{})
	now := time.Unix(0, 0)
	for range 200 {
		n := l.Limit()
		// n calls at once on 4 slots: beyond 4, each waits its turn,
		// and a call takes 500 ms × n/4 on average.
		rtt := time.Duration(float64(500*time.Millisecond) * max(1, float64(n)/4))
		var inFlight []int
		for range n {
			inFlight = append(inFlight, l.Begin())
		}
		now = now.Add(rtt)
		for _, f := range inFlight {
			l.Record(now, middleware.Sample{RTT: rtt, InFlight: f})
		}
	}
	st := l.Stats()
	fmt.Println("limit", st.Limit, "no-load latency", st.MinRTT)
	// Output:
	// limit 6 no-load latency 500ms
}
