package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
)

// options are the command's flags.
type options struct {
	agents          int
	latency         time.Duration
	jitter          time.Duration
	heartbeat       time.Duration
	autonomyWorkers int
	priorityWorkers int
	cooldown        time.Duration
	duration        time.Duration
	hostMessages    int
	store           string
	seed            uint64
	json            bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.agents, "agents", 1000, "number of agents")
	fs.DurationVar(&o.latency, "model-latency", 2*time.Second, "simulated model latency per call")
	fs.DurationVar(&o.jitter, "jitter", 200*time.Millisecond, "uniform jitter added to the latency, ± this much")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "heartbeat (tick interval)")
	fs.IntVar(&o.autonomyWorkers, "autonomy-workers", 1, "autonomy lane workers")
	fs.IntVar(&o.priorityWorkers, "priority-workers", 1, "priority lane workers")
	fs.DurationVar(&o.cooldown, "cooldown", 0, "minimum gap between an agent's cycles")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to run")
	fs.IntVar(&o.hostMessages, "host-messages", 0, "host messages to send to random agents during the run")
	fs.StringVar(&o.store, "store", "memory", `state store: "memory"`)
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the jitter and of the host message targets")
	fs.BoolVar(&o.json, "json", false, "print one JSON object at the end")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.agents <= 0:
		return o, errors.New("-agents must be positive")
	case o.latency < 0 || o.jitter < 0 || o.jitter > o.latency && o.latency > 0:
		return o, errors.New("-model-latency and -jitter must be ≥ 0, and -jitter ≤ -model-latency")
	case o.heartbeat <= 0 || o.duration <= 0:
		return o, errors.New("-heartbeat and -duration must be positive")
	case o.store != "memory":
		return o, fmt.Errorf("-store %q: only \"memory\" is supported for now", o.store)
	}
	return o, nil
}

// quantiles are milliseconds.
type quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func quantilesOf(ds []time.Duration) quantiles {
	if len(ds) == 0 {
		return quantiles{}
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return quantiles{N: len(ds), P50: ms(ds[len(ds)/2]), P99: ms(ds[min(len(ds)-1, len(ds)*99/100)]), Max: ms(ds[len(ds)-1])}
}

// result is what a run measured; its JSON is the -json output.
type result struct {
	Agents           int                  `json:"agents"`
	DurationS        float64              `json:"duration_s"`
	Cycles           int64                `json:"cycles"`
	CyclesPerS       float64              `json:"cycles_per_s"`
	ModelCalls       int64                `json:"model_calls"`
	CallsInFlightMax int64                `json:"calls_in_flight_max"`
	Coalesced        int64                `json:"coalesced"`
	Lateness         map[string]quantiles `json:"lateness_ms"`
	AgentsCycled     int                  `json:"agents_cycled"`
	RSSBytes         int64                `json:"rss_bytes"`
	RSSBytesPerAgent int64                `json:"rss_bytes_per_agent"`
	RSSSamplesMB     []float64            `json:"rss_samples_mb"`
	GoroutinesMax    int                  `json:"goroutines_max"`
	CPUSeconds       float64              `json:"cpu_s"`
	CPUPercent       float64              `json:"cpu_percent"`
	HostReply        *quantiles           `json:"host_reply_ms,omitempty"`
	HostOverhead     *quantiles           `json:"host_reply_overhead_ms,omitempty"`
	HostUnanswered   int                  `json:"host_unanswered,omitempty"`
	AutonomyWorkers  int                  `json:"autonomy_workers"`
	HeartbeatS       float64              `json:"heartbeat_s"`
	ModelLatencyS    float64              `json:"model_latency_s"`
	CPUs             int                  `json:"cpus"`
	OutOfOrderStarts int64                `json:"out_of_order_starts"`
}

// simModel answers after the latency ± jitter, honouring ctx.
type simModel struct {
	latency, jitter time.Duration
	seed            uint64
	calls, inFlight atomic.Int64
	maxInFlight     atomic.Int64
}

const reply = `{"action":"goal","content":"map the workspace and write down what exists","reasoning":"nothing is written down yet","worldview_update":null,"new_open_questions":[],"new_opinions":[],"suffering_assessment":{"new_stressors":[],"resolved":[]}}`

func (m *simModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	n := m.calls.Add(1)
	f := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxInFlight.Load()
		if f <= old || m.maxInFlight.CompareAndSwap(old, f) {
			break
		}
	}
	d := m.latency
	if m.jitter > 0 {
		r := rand.New(rand.NewPCG(m.seed, uint64(n)))
		d += time.Duration(r.Int64N(int64(2*m.jitter))) - m.jitter
	}
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &llm.Response{Text: reply}, nil
}

func (m *simModel) Name() string { return "simulated" }

// collector gathers the cycle events.
type collector struct {
	mu        sync.Mutex
	lateness  [2][]time.Duration
	cycled    map[string]bool
	said      map[string]time.Time
	replies   []time.Duration
	overhead  []time.Duration
	lastStart time.Time
	outOfOrd  int64
}

func (c *collector) observe(e existence.Event) {
	if e.Kind != existence.EventCycle || e.Cycle == nil {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	lane := 0
	if e.Cycle.Lane == existence.LanePriority.String() {
		lane = 1
		if at, ok := c.said[e.AgentID]; ok {
			c.replies = append(c.replies, now.Sub(at))
			c.overhead = append(c.overhead, now.Sub(at)-e.Cycle.Generate)
			delete(c.said, e.AgentID)
		}
	}
	c.lateness[lane] = append(c.lateness[lane], e.Cycle.Lateness)
	c.cycled[e.AgentID] = true
}

func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run runs the swarm for o.duration (or until ctx ends).
func run(ctx context.Context, o options) (*result, error) {
	runtime.GC()
	rss0 := rssBytes()
	model := &simModel{latency: o.latency, jitter: o.jitter, seed: o.seed}
	col := &collector{cycled: map[string]bool{}, said: map[string]time.Time{}}
	r, err := existence.NewRunner(existence.RunnerConfig{
		Store:           identity.NewMemoryStore(),
		AutonomyWorkers: o.autonomyWorkers,
		PriorityWorkers: o.priorityWorkers,
		Cooldown:        o.cooldown,
		Heartbeat:       o.heartbeat,
		Observer:        col.observe,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for i := range o.agents {
		id := fmt.Sprintf("agent-%05d", i)
		if _, err := r.Add(ctx, existence.Config{ID: id, Name: "Agent " + strconv.Itoa(i), Model: model, Retry: llm.RetryPolicy{Attempts: 1}, NoRepair: false}); err != nil {
			return nil, err
		}
	}

	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start, cpu0 := time.Now(), cpuTime()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	res := &result{Agents: o.agents, AutonomyWorkers: o.autonomyWorkers, HeartbeatS: o.heartbeat.Seconds(), ModelLatencyS: o.latency.Seconds(), CPUs: runtime.NumCPU()}
	rng := rand.New(rand.NewPCG(o.seed, 42))
	var sayAt []time.Duration
	for i := range o.hostMessages {
		// Evenly spread over the middle of the run, so that each reply
		// measures one message, not a queue of them.
		sayAt = append(sayAt, o.duration/10+time.Duration(i)*(o.duration*8/10)/time.Duration(o.hostMessages))
	}
	sample := time.NewTicker(100 * time.Millisecond)
	defer sample.Stop()
	nextRSS := start
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-sample.C:
			res.GoroutinesMax = max(res.GoroutinesMax, runtime.NumGoroutine())
			if now := time.Now(); !now.Before(nextRSS) {
				res.RSSSamplesMB = append(res.RSSSamplesMB, float64(rssBytes())/(1<<20))
				nextRSS = now.Add(o.duration / 10)
			}
			for len(sayAt) > 0 && time.Since(start) >= sayAt[0] {
				sayAt = sayAt[1:]
				id := fmt.Sprintf("agent-%05d", rng.IntN(o.agents))
				col.mu.Lock()
				if _, busy := col.said[id]; busy {
					col.mu.Unlock()
					continue
				}
				col.said[id] = time.Now()
				col.mu.Unlock()
				if err := r.SayAsHost(context.WithoutCancel(ctx), "How are you doing?", id); err != nil {
					return nil, err
				}
			}
		}
	}
	elapsed := time.Since(start)
	res.CPUSeconds = (cpuTime() - cpu0).Seconds()
	res.CPUPercent = 100 * res.CPUSeconds / elapsed.Seconds()
	res.RSSBytes = rssBytes()
	res.RSSBytesPerAgent = (res.RSSBytes - rss0) / int64(o.agents)
	st := r.Stats()
	res.DurationS = elapsed.Seconds()
	res.Coalesced = st.Coalesced
	res.ModelCalls = model.calls.Load()
	res.CallsInFlightMax = model.maxInFlight.Load()
	col.mu.Lock()
	res.Cycles = int64(len(col.lateness[0]) + len(col.lateness[1]))
	res.CyclesPerS = float64(res.Cycles) / elapsed.Seconds()
	res.Lateness = map[string]quantiles{"autonomy": quantilesOf(col.lateness[0]), "priority": quantilesOf(col.lateness[1])}
	res.AgentsCycled = len(col.cycled)
	if o.hostMessages > 0 {
		q := quantilesOf(col.replies)
		res.HostReply = &q
		oq := quantilesOf(col.overhead)
		res.HostOverhead = &oq
		res.HostUnanswered = len(col.said)
	}
	col.mu.Unlock()
	if runErr != nil && !errors.Is(runErr, context.DeadlineExceeded) {
		return res, runErr
	}
	return res, nil
}

func (res *result) print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(res)
	}
	fmt.Fprintf(w, "agents %d, %.0f s, %d CPUs, %d autonomy workers, heartbeat %.0f s, model %.1f s\n", res.Agents, res.DurationS, res.CPUs, res.AutonomyWorkers, res.HeartbeatS, res.ModelLatencyS)
	fmt.Fprintf(w, "cycles        %d (%.1f/s), %d agents had at least one\n", res.Cycles, res.CyclesPerS, res.AgentsCycled)
	for _, lane := range []string{"autonomy", "priority"} {
		q := res.Lateness[lane]
		fmt.Fprintf(w, "lateness %-9s p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d cycles)\n", lane, q.P50, q.P99, q.Max, q.N)
	}
	fmt.Fprintf(w, "coalesced     %d heartbeats\n", res.Coalesced)
	fmt.Fprintf(w, "model calls   %d (at most %d in flight)\n", res.ModelCalls, res.CallsInFlightMax)
	fmt.Fprintf(w, "RSS           %.1f MB, %.1f KB per agent (samples %v MB)\n", float64(res.RSSBytes)/(1<<20), float64(res.RSSBytesPerAgent)/1024, res.RSSSamplesMB)
	fmt.Fprintf(w, "goroutines    at most %d\n", res.GoroutinesMax)
	fmt.Fprintf(w, "CPU           %.1f s (%.0f%% of one core)\n", res.CPUSeconds, res.CPUPercent)
	if res.HostReply != nil {
		fmt.Fprintf(w, "host replies  p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d answered, %d not yet)\n", res.HostReply.P50, res.HostReply.P99, res.HostReply.Max, res.HostReply.N, res.HostUnanswered)
		fmt.Fprintf(w, "  beyond the model call: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", res.HostOverhead.P50, res.HostOverhead.P99, res.HostOverhead.Max)
	}
	return nil
}
