package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/store/memstore"
)

func main() {
	agents := flag.Int("agents", 1000, "number of agents")
	heartbeat := flag.Duration("heartbeat", time.Second, "heartbeat (tick interval)")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	workers := flag.Int("autonomy-workers", 8, "autonomy lane workers (existence cycles running at once)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *agents, *heartbeat, *duration, *workers, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "swarm:", err)
		os.Exit(1)
	}
}

// run runs n agents for d and prints the cycles they lived per second.
func run(ctx context.Context, n int, heartbeat, d time.Duration, workers int, w io.Writer) error {
	var cycles atomic.Int64
	rn, err := runner.New(runner.Config{
		Store:           memstore.New(),
		Heartbeat:       heartbeat,
		AutonomyWorkers: workers,
		Observer: func(e event.Event) {
			if e.Kind == event.Cycle {
				cycles.Add(1)
			}
		},
	})
	if err != nil {
		return err
	}
	defer rn.Close()
	for i, spec := range simulate.Agents(n) {
		model, err := simulate.Stochastic{}.Model(spec, uint64(i)) // seeded goals, stressors and outcomes
		if err != nil {
			return err
		}
		cfg := existence.Config{ID: spec.ID, Name: spec.Name, Traits: spec.Traits, Domains: spec.Domains, Model: model}
		if _, err := rn.Add(ctx, cfg); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	if err := rn.Run(ctx); err != nil { // until d has passed, then every agent is saved
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintf(w, "%d agents, %d existence cycles in %.1f s: %.1f cycles/s (heartbeat %v, %d autonomy workers)\n",
		n, cycles.Load(), elapsed.Seconds(), float64(cycles.Load())/elapsed.Seconds(), heartbeat, workers)
	return nil
}
