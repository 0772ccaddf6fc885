package simulate_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/existence-loop/sdk/existence/simulate"
)

// Three agents share one model slot (one GPU) for two simulated hours.
// Every goal fails, so the assessment adds repeated_failure to each, and it
// escalates at 0.040 a day.
func ExampleRun() {
	res, err := simulate.Run(context.Background(), simulate.Config{
		Agents:     simulate.Agents(3), // Cedar, Cipher, Vault
		Duration:   2 * time.Hour,
		Seed:       1,
		ModelSlots: 1,
		Model:      simulate.Stochastic{FailureRate: 1, StressorRate: -1},
		// Trajectory: a file, for the plots (simulate.LoadPlot, ...)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range res.Agents {
		fmt.Printf("%s: %d goals failed, peak load %.3f\n", a.Name, a.Failed, a.PeakLoad)
	}
	_ = res.WriteSummary(os.Stdout, 0)
	// Output:
	// Cedar: 268 goals failed, peak load 0.203
	// Cipher: 267 goals failed, peak load 0.203
	// Vault: 267 goals failed, peak load 0.203
	//     agent      name  none h  prominent h  constrained h  dominant h  crisis h  peak  crises  resets  done  failed  abandoned  active  cycles  fallbacks  calls  max late  tokens
	//     scout     Cedar     2.0          0.0            0.0         0.0       0.0  0.20       0       0     0     268          0       0     269          0    538   40.556s  296.1k
	//   analyst    Cipher     2.0          0.0            0.0         0.0       0.0  0.20       0       0     0     267          0       0     268          0    536    41.82s  294.7k
	//   builder     Vault     2.0          0.0            0.0         0.0       0.0  0.20       0       0     0     267          0       0     268          0    536   40.023s  288.5k
	//     TOTAL  3 agents     6.0          0.0            0.0         0.0       0.0  0.20       0       0     0     802          0       0     805          0   1610    41.82s  879.3k
}
