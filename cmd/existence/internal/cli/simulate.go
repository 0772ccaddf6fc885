package cli

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"

	"github.com/existence-loop/sdk/existence/simulate"
)

// simulateCommand is `existence simulate`.
var simulateCommand = &command{
	name:    "simulate",
	summary: "run agents for simulated days in seconds and write a trajectory, plots and a summary",
	about: `It runs existence-loop agents on the real agent and scheduler code with a
virtual clock and a simulated model, and writes, in -out:

  trajectory.jsonl.gz  one JSON line per agent per heartbeat that changed something
                       (simulate.Row; -gzip=false: trajectory.jsonl)
  load.png, .svg       suffering load over time per agent, with the 0.35/0.55/0.75/0.90 thresholds
                       (over a day: in buckets of time, the mean over a least-to-most band)
  stressors.png, .svg  one row per stressor from onset to resolution, shaded by severity
  outcomes.png, .svg   goal outcomes per simulated day
  summary.txt          the summary table it also prints

  {prog} -agents 3 -days 30 -seed 1 -out sim/

The same flags give the same bytes on every run. -replay FILE replays
recorded replies (JSON Lines of simulate.Record); -hollow DIR derives them
from a hollow-agentOS memory directory (its goals and outcomes).`,
	setup: func(fs *flag.FlagSet) action {
		o := &simOptions{}
		o.flags(fs)
		return func(ctx context.Context, e *env, _ []string) error {
			if err := o.check(); err != nil {
				return usageErr(err)
			}
			return runSimulate(ctx, o, e.stdout)
		}
	},
}

// simOptions are the simulate command's flags.
type simOptions struct {
	agents       int
	days         float64
	seed         uint64
	out          string
	heartbeat    time.Duration
	failure      float64
	abandon      float64
	stressor     float64
	resolve      float64
	modelFailure float64
	repeat       float64
	slots        int
	driver       string
	executor     string
	replay       string
	hollow       string
	every        bool
	noPlots      bool
	gzip         bool
	maxRows      int

	world       int           // -world: sources of slot updates (simulate.RandomWorld)
	worldEvery  time.Duration // -world-every
	worldNotify float64       // -world-notify
}

// flags registers the simulate command's flags on fs.
func (o *simOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&o.agents, "agents", 3, "number of agents (the first three are Cedar/scout, Cipher/analyst, Vault/builder)")
	fs.Float64Var(&o.days, "days", 30, "simulated days")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same files")
	fs.StringVar(&o.out, "out", "sim", "output directory")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "heartbeat interval")
	fs.Float64Var(&o.failure, "failure", 0.35, "probability that a goal does not succeed")
	fs.Float64Var(&o.abandon, "abandon", 0.3, "share of unsuccessful goals that are abandoned rather than failed")
	fs.Float64Var(&o.stressor, "stressor", 0.003, "probability that a cycle self-reports a stressor")
	fs.Float64Var(&o.resolve, "resolve", 0.002, "probability that a cycle reports a visible stressor resolved")
	fs.Float64Var(&o.modelFailure, "model-failure", 0.02, "probability that a cycle's model call fails (fallback goal)")
	fs.Float64Var(&o.repeat, "repeat", 0, "probability that a cycle repeats the previous goal word for word (going round in circles: counts toward repeated_failure)")
	fs.IntVar(&o.slots, "slots", 1, "cycles' model calls run at once across agents, the scheduler's autonomy workers (1: one local GPU, as the trio; 0: no limit)")
	fs.StringVar(&o.driver, "driver", "scheduler", "scheduler (the runner's virtual driver: lanes, workers, coalescing; goals take no simulated time) or heartbeats (Agent.Tick per heartbeat; goals take their simulated time)")
	fs.StringVar(&o.executor, "executor", "report", "how goals are pursued: report (the model reports the outcome), mix (drawn without a model), immediate, toolloop (the real tool loop over a temporary workspace)")
	fs.StringVar(&o.replay, "replay", "", "replay recorded replies from this JSON Lines file instead of drawing them")
	fs.StringVar(&o.hollow, "hollow", "", "replay the goals and outcomes of this hollow-agentOS memory directory")
	fs.BoolVar(&o.every, "every-heartbeat", false, "tick every heartbeat instead of skipping quiet ones (slower, same behaviour)")
	fs.BoolVar(&o.noPlots, "no-plots", false, "write no plots")
	fs.BoolVar(&o.gzip, "gzip", true, "compress the trajectory (trajectory.jsonl.gz; zcat reads it)")
	fs.IntVar(&o.maxRows, "summary-rows", 20, "agents shown in the summary table (0: all)")
	fs.IntVar(&o.world, "world", 0, "sources of a simulated world feeding the agents slot updates (0: none); drawn from -seed, with the scheduler driver")
	fs.DurationVar(&o.worldEvery, "world-every", time.Hour, "with -world, about how often each source posts")
	fs.Float64Var(&o.worldNotify, "world-notify", 0.2, "with -world, the share of updates posted with notify_user (a cycle at once)")
}

// check validates the parsed flags.
func (o *simOptions) check() error {
	if o.agents < 1 || o.days <= 0 {
		return errors.New("-agents must be at least 1 and -days positive")
	}
	if o.replay != "" && o.hollow != "" {
		return errors.New("-replay and -hollow exclude each other")
	}
	switch o.driver {
	case "scheduler", "heartbeats":
	default:
		return fmt.Errorf("-driver %q: want scheduler or heartbeats", o.driver)
	}
	switch o.executor {
	case "report", "mix", "immediate", "toolloop":
	default:
		return fmt.Errorf("-executor %q: want report, mix, immediate or toolloop", o.executor)
	}
	switch {
	case o.world < 0 || o.worldEvery <= 0 || o.worldNotify < 0 || o.worldNotify > 1:
		return errors.New("-world must be 0 or more, -world-every positive and -world-notify from 0 to 1")
	case o.world > 0 && o.driver != "scheduler":
		return errors.New("-world needs -driver scheduler")
	}
	return nil
}

// parseSimulateFlags parses the simulate command's arguments (tests use
// it). The error is flag.ErrHelp for -h.
func parseSimulateFlags(args []string) (*simOptions, error) {
	fs := newFlagSet("simulate")
	o := &simOptions{}
	o.flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, o.check()
}

// runSimulate runs the simulation o describes and writes its files.
func runSimulate(ctx context.Context, o *simOptions, stdout io.Writer) error {
	cfg := simulate.Config{
		Agents:         simulate.Agents(o.agents),
		Duration:       time.Duration(o.days * 24 * float64(time.Hour)),
		Seed:           o.seed,
		Heartbeat:      o.heartbeat,
		ModelSlots:     o.slots,
		EveryHeartbeat: o.every,
		Model: simulate.Stochastic{
			FailureRate: o.failure, AbandonShare: o.abandon,
			StressorRate: neg(o.stressor), ResolveRate: neg(o.resolve), ModelFailureRate: o.modelFailure,
			RepeatRate: o.repeat,
		},
	}
	switch {
	case o.replay != "":
		cfg.Model = simulate.Replay{File: o.replay}
	case o.hollow != "":
		recs, err := simulate.RecordsFromHollow(o.hollow, simulate.DefaultStart)
		if err != nil {
			return err
		}
		cfg.Model = simulate.Replay{Records: recs}
	}
	switch o.driver {
	case "scheduler":
		cfg.Driver = simulate.Scheduler
	case "heartbeats":
		cfg.Driver = simulate.Heartbeats
	}
	switch o.executor {
	case "report":
		cfg.Executor = simulate.Report{}
	case "mix":
		cfg.Executor = simulate.Mix{FailureRate: o.failure, AbandonShare: o.abandon}
	case "immediate":
		cfg.Executor = simulate.Immediate{}
	case "toolloop":
		cfg.Executor = simulate.ToolLoop{}
	}
	if o.world > 0 {
		cfg.World = simulate.RandomWorld{Sources: o.world, Every: o.worldEvery, Notify: o.worldNotify}
	}

	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	trajPath := filepath.Join(o.out, "trajectory.jsonl")
	if o.gzip {
		trajPath += ".gz"
	}
	f, err := os.Create(trajPath)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := newBufWriter(f)
	var zw *gzip.Writer
	cfg.Trajectory = bw
	if o.gzip {
		zw = gzip.NewWriter(bw)
		cfg.Trajectory = zw
	}
	wall := time.Now()
	res, err := simulate.Run(ctx, cfg)
	if zw != nil {
		if zerr := zw.Close(); err == nil {
			err = zerr
		}
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	elapsed := time.Since(wall)

	summaryPath := filepath.Join(o.out, "summary.txt")
	sf, err := os.Create(summaryPath)
	if err != nil {
		return err
	}
	if err := res.WriteSummary(io.MultiWriter(stdout, sf), o.maxRows); err != nil {
		sf.Close()
		return err
	}
	if err := sf.Close(); err != nil {
		return err
	}
	cycles := 0
	for _, a := range res.Agents {
		cycles += a.Cycles
	}
	fmt.Fprintf(stdout, "\n%d agents, %s simulated (%s driver) in %.1fs: %d cycles, %d heartbeats run, %d coalesced or skipped, %d trajectory rows\n",
		len(res.Agents), res.End.Sub(res.Start), cfg.Driver, elapsed.Seconds(), cycles, res.Ticks, res.Skipped, res.Rows)
	if o.world > 0 {
		own := 0
		for _, a := range res.Agents {
			own += a.SlotUpdates
		}
		fmt.Fprintf(stdout, "world: %d slot updates from %d sources (%d to the shared board), %d notifications\n", res.SharedUpdates+own, o.world, res.SharedUpdates, res.Triggers)
	}
	fmt.Fprintf(stdout, "trajectory: %s\nsummary:    %s\n", trajPath, summaryPath)
	if o.noPlots {
		return nil
	}
	return plots(trajPath, o.out, stdout)
}

// neg maps a requested probability of 0 to the policy's "none" (-1).
func neg(p float64) float64 {
	if p == 0 {
		return -1
	}
	return p
}

// plots writes the three plots of the trajectory at trajPath, as PNG and
// SVG, in dir and prints where they are.
func plots(trajPath, dir string, stdout io.Writer) error {
	f, err := os.Open(trajPath)
	if err != nil {
		return err
	}
	rows, err := simulate.ReadTrajectory(f)
	f.Close()
	if err != nil {
		return err
	}
	for _, pl := range []struct {
		name string
		make func([]simulate.Row) (*plot.Plot, error)
	}{
		{"load", simulate.LoadPlot},
		{"stressors", simulate.TimelinePlot},
		{"outcomes", simulate.OutcomePlot},
	} {
		p, err := pl.make(rows)
		if errors.Is(err, simulate.ErrNoData) {
			fmt.Fprintf(stdout, "%-11s (nothing to plot)\n", pl.name+":")
			continue
		}
		if err != nil {
			return err
		}
		for _, format := range []simulate.Format{simulate.PNG, simulate.SVG} {
			path := filepath.Join(dir, pl.name+"."+string(format))
			if err := writeBuffered(path, func(w io.Writer) error { return simulate.Save(w, p, format) }); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-11s %s\n", pl.name+":", path)
		}
	}
	return nil
}

// writeBuffered creates path and writes it through a buffer with write.
func writeBuffered(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := newBufWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// newBufWriter returns a 1 MiB buffered writer on w.
func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 1<<20) }
