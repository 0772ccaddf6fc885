package simulate_test

import (
	"context"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/simulate"
)

// BenchmarkTenThousandAgents simulates 10,000 agents for one day on the
// scheduler driver, sharing a model server of 8 slots (the runner's
// autonomy workers) with the default latency (log-normal around 8 s), so
// that about 80,000 existence cycles run, each through the real prompt
// assembly, structured-output parsing and validation, suffering and goal
// bookkeeping. It reports the cycles and the wall time per simulated day.
func BenchmarkTenThousandAgents(b *testing.B) {
	cfg := simulate.Config{
		Agents:     simulate.Agents(10000),
		Duration:   24 * time.Hour,
		Seed:       1,
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
	b.ReportMetric(float64(cycles), "cycles/day")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/simulated-day")
}
