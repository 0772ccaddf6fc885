package simulate_test

import (
	"context"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/simulate"
)

// BenchmarkTenThousandAgents simulates 10,000 agents for one day sharing a
// model server of 8 slots with the default latency (log-normal around
// 8 s): about 80,000 existence cycles, each through the real prompt
// assembly, structured-output parsing and validation, suffering and goal
// bookkeeping. It reports the cycles and the wall time per simulated day.
//
// heartbeats is the Heartbeats driver, whose cost grows with the cycles
// run; scheduler is the runner's virtual driver, whose scheduler also
// processes every agent's every heartbeat (10,000 agents × 14,400
// heartbeats a day, coalesced while the agents wait for a worker): it runs
// one simulated hour, and its figure is per simulated day (× 24).
func BenchmarkTenThousandAgents(b *testing.B) {
	for _, d := range []struct {
		driver simulate.Driver
		dur    time.Duration
	}{{simulate.Heartbeats, 24 * time.Hour}, {simulate.Scheduler, time.Hour}} {
		b.Run(d.driver.String(), func(b *testing.B) { benchAgents(b, d.driver, d.dur) })
	}
}

func benchAgents(b *testing.B, driver simulate.Driver, dur time.Duration) {
	cfg := simulate.Config{
		Agents:     simulate.Agents(10000),
		Duration:   dur,
		Seed:       1,
		Driver:     driver,
		ModelSlots: 8,
		Model:      simulate.Stochastic{FailureRate: 0.35, AbandonShare: 0.3},
	}
	var cycles int
	for b.Loop() {
		res, err := simulate.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		cycles = 0
		for _, a := range res.Agents {
			cycles += a.Cycles
		}
	}
	days := dur.Hours() / 24
	b.ReportMetric(float64(cycles)/days, "cycles/day")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/days, "s/simulated-day")
}
