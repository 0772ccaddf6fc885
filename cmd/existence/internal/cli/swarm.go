package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
)

// swarmCommand is `existence swarm`, the scale benchmark.
var swarmCommand = &command{
	name:    "swarm",
	summary: "the scale benchmark: N agents on a simulated model, with the scheduler's figures",
	about: `It runs N agents in one process on a simulated model (a fixed latency plus
uniform jitter), on the existence scheduler, and prints what the scheduler
did: cycles/s; tick lateness p50, p99 and max per lane, and the autonomy
lane's p99 in each tenth of the run; ticks dispatched and cycles per lane;
busy workers against model calls in flight; each cycle's time beyond its
model call; cycles started out of due-time order; coalesced heartbeats and
the accounting of every heartbeat; model calls by purpose and outcome; RSS
per agent and live-heap samples; the most goroutines; CPU time.

  {prog} -agents 10000 -model-latency 2s -heartbeat 6s -autonomy-workers 3400 -duration 60s
  {prog} -agents 10000 -autonomy-workers 16 -duration 5m -host-messages 20 -json
  {prog} -agents 10000 -autonomy-workers 16 -duration 5m -seasoned -gc-samples

Lateness is when a cycle started on a worker minus when it fell due (its
heartbeat, the end of its cooldown, or the host message). -host-messages N
sends N host messages to random agents over the run and reports how long
each took to be answered. -json prints one JSON object at the end instead.

-store keeps the states in memory (the default), a directory, sqlite:PATH
or postgres://...; with a durable store each cycle also asks the store's
task queue for a task (-no-tasks: not), and the run prints the saves and
the start-up time. With PostgreSQL the agents are enrolled and leased, so
several swarm processes on one database share one population, each agent
in one process at a time (-max-agents bounds this process's share); kill
one and its agents move to the others after the lease TTL (15 s).

-llm-url drives a real model server (Ollama, or -provider openai) instead
of the simulated model, or a stand-in started in this process for runs
without a GPU:

  {prog} -agents 1000 -llm-url 'standin:?slots=4&queue=4&latency=500ms' -host-messages 20

and reports the tokens per second, the calls in flight as the SDK sees
them, the 503s and the autonomy lane's concurrency limit each second (with
-autonomy-workers 0, the default, the lane finds the server's capacity by
itself); against the stand-in also its slots' utilisation.
-token-budget gives each agent a token budget.

-autonomy-workers 0 (the default) sizes the autonomy lane for the simulated
model, which has no capacity limit to find, to the load: -agents ÷
-heartbeat cycles a second, each holding a worker for -model-latency plus
-jitter, plus 10%, so that the run shows what the scheduler can do; against
a model server it is the adaptive limit, which finds the server's capacity
(and a stand-in's -llm-url 'standin:?slots=N' sets that capacity).`,
	setup: func(fs *flag.FlagSet) action {
		o := &swarmOptions{}
		o.flags(fs)
		return func(ctx context.Context, e *env, _ []string) error {
			if err := o.check(); err != nil {
				return usageErr(err)
			}
			o.stderr = e.stderr
			res, err := runSwarm(ctx, *o)
			if res != nil {
				if perr := res.print(e.stdout, o.json); perr != nil {
					err = errors.Join(err, perr)
				}
			}
			return err
		}
	},
}

// swarmOptions are the swarm command's flags.
type swarmOptions struct {
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
	maxAgents       int
	noTasks         bool
	seasoned        bool
	gcSamples       bool
	seed            uint64
	json            bool
	cpuProfile      string
	memProfile      string
	provider        string
	llmURL          string   // the first -llm-url
	llmURLs         []string // every -llm-url: more than one makes a pool.Pool
	model           string
	llmTimeout      time.Duration // -llm-timeout: existence.Config.Timing.CallTimeout
	allowRedirect   []string      // -llm-allow-redirect
	tokenBudget     budget.Budget
	replyTokens     int // -reply-tokens: the existence cycle's reply limit
	layout          prompt.Layout
	http            string   // -http: serve the monitor, A2A and MCP here
	httpToken       envToken // -http-token
	httpOptOut      bool     // -http-no-token-behind-proxy
	stderr          io.Writer
	// stopWhen, set by tests, ends the run before -duration once it
	// reports true; it is asked at each sample (every 100 ms) with the
	// pool (nil without one).
	stopWhen func(*swarmPool) bool
}

// flags registers the swarm command's flags on fs.
func (o *swarmOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&o.agents, "agents", 1000, "number of agents")
	fs.DurationVar(&o.latency, "model-latency", 2*time.Second, "simulated model latency per call")
	fs.DurationVar(&o.jitter, "jitter", 200*time.Millisecond, "uniform jitter added to the latency, ± this much")
	fs.DurationVar(&o.heartbeat, "heartbeat", 6*time.Second, "heartbeat (tick interval)")
	workersFlag(fs, &o.autonomyWorkers)
	fs.StringVar(&o.provider, "provider", "ollama", "with -llm-url: the model provider, ollama or openai (any OpenAI-compatible server)")
	fs.Func("llm-url", "drive a real model server at this URL instead of the simulated model (-model-latency and -jitter then do not apply);\n"+
		"repeat it for a pool of servers, each agent pinned to one by rendezvous hashing of its id and moved to the next when its server fails"+standinHelp, func(s string) error {
		if o.llmURL == "" {
			o.llmURL = s
		}
		o.llmURLs = append(o.llmURLs, s)
		return nil
	})
	fs.Var(modelFlag{&o.model}, "model", "with -llm-url: the model's `NAME` (ollama default "+defaultOllamaModel+"; required with openai); never empty")
	modelServerFlags(fs, &o.llmTimeout, &o.allowRedirect)
	budgetFlag(fs, &o.tokenBudget)
	replyFlags(fs, &o.replyTokens, nil)
	layoutFlag(fs, &o.layout)
	fs.IntVar(&o.priorityWorkers, "priority-workers", 1, "priority lane workers")
	fs.DurationVar(&o.cooldown, "cooldown", 0, "minimum gap between an agent's cycles")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to run")
	fs.IntVar(&o.hostMessages, "host-messages", 0, "host messages to send to random agents during the run")
	fs.StringVar(&o.store, "store", "memory", "state store: \"memory\", a directory (filestore.Store), sqlite:PATH (one SQLite file),\n"+
		"or postgres://user@host:5432/db (PostgreSQL: the agents are leased, so several swarm processes\n"+
		"on one database share one population of -agents agents, each agent in one process at a time;\n"+
		"give each process -max-agents, and kill one to see its agents move to the others)")
	fs.BoolVar(&o.noTasks, "no-tasks", false, "with a durable store: give the agents no task queue (by default each cycle asks the store's queue for a task; none are submitted)")
	fs.BoolVar(&o.seasoned, "seasoned", false, "start every agent with its lists at their caps (100 goals, 20 opinions, ...), as after a long life,\n"+
		"so that the run measures steady-state memory (not with postgres://...)")
	fs.BoolVar(&o.gcSamples, "gc-samples", false, "run a GC at each of the 10 memory samples (after reading RSS), so that the live heap samples are exact\n"+
		"rather than as of the last GC (each GC costs CPU)")
	fs.IntVar(&o.maxAgents, "max-agents", 0, "with -store postgres://...: the most agents this process runs (leases it holds); default -agents")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the jitter and of the host message targets")
	fs.BoolVar(&o.json, "json", false, "print one JSON object at the end")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile to this file at 90% of the run")
	fs.StringVar(&o.http, "http", "", "serve the monitor, A2A at /a2a (the agent chosen by tenant: its id) and MCP at /mcp on this address, e.g. 127.0.0.1:8080;\n"+
		"with -store memory the agents then get a task queue in memory")
	tokenFlag(fs, &o.httpToken, "with -http: the bearer token it requires (default $EXISTENCE_TOKEN; empty: none, fit only for loopback)")
	exposureFlags(fs, &o.httpOptOut)
}

// check validates the parsed flags.
func (o *swarmOptions) check() error {
	if err := checkReply(o.replyTokens); err != nil {
		return err
	}
	switch {
	case o.agents <= 0:
		return errors.New("-agents must be positive")
	case o.latency < 0 || o.jitter < 0 || o.jitter > o.latency && o.latency > 0:
		return errors.New("-model-latency and -jitter must be ≥ 0, and -jitter ≤ -model-latency")
	case o.heartbeat <= 0 || o.duration <= 0 || o.llmTimeout <= 0:
		return errors.New("-heartbeat, -duration and -llm-timeout must be positive")
	case o.maxAgents < 0:
		return errors.New("-max-agents must be ≥ 0")
	}
	if o.autonomyWorkers < 0 {
		return errors.New("-autonomy-workers must be 0 (adaptive) or more")
	}
	if err := o.checkServer(); err != nil {
		return err
	}
	kind, err := swarmStoreKind(o.store)
	if err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	if o.maxAgents > 0 && kind != "postgres" {
		return errors.New("-max-agents applies to -store postgres://... only")
	}
	if o.seasoned && kind == "postgres" {
		return errors.New("-seasoned applies to the memory, directory and sqlite: stores")
	}
	if o.http != "" {
		o.httpToken.resolve()
		if err := checkExposure(o.http, o.httpToken.String(), o.httpOptOut); err != nil {
			return err
		}
	}
	return nil
}

// parseSwarmFlags parses the swarm command's arguments (tests use it). The
// error is flag.ErrHelp for -h.
func parseSwarmFlags(args []string, stderr io.Writer) (swarmOptions, error) {
	var o swarmOptions
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.flags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.check()
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

// swarmResult is what a run measured; its JSON is the -json output.
type swarmResult struct {
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
	LiveHeapMB       []float64            `json:"live_heap_samples_mb"`
	GCSamples        bool                 `json:"gc_samples,omitempty"` // -gc-samples
	Seasoned         bool                 `json:"seasoned,omitempty"`   // -seasoned
	GoroutinesMax    int                  `json:"goroutines_max"`
	CPUSeconds       float64              `json:"cpu_s"`
	CPUPercent       float64              `json:"cpu_percent"`
	HostReply        *quantiles           `json:"host_reply_ms,omitempty"`
	HostOverhead     *quantiles           `json:"host_reply_overhead_ms,omitempty"`
	HostUnanswered   int                  `json:"host_unanswered,omitempty"`
	AutonomyWorkers  int                  `json:"autonomy_workers"`
	// WorkersSized says how the autonomy workers were sized when
	// -autonomy-workers was 0 against the simulated model (see
	// sizedWorkers); empty otherwise.
	WorkersSized string  `json:"autonomy_workers_sized,omitempty"`
	HeartbeatS   float64 `json:"heartbeat_s"`
	// TriggerGapS is the least time between an agent's cycle and one a
	// notifying slot asks for (runner.DefaultTriggerGap of the
	// heartbeat): the rate of notified wake-ups.
	TriggerGapS      float64 `json:"trigger_gap_s"`
	ModelLatencyS    float64 `json:"model_latency_s"`
	CPUs             int     `json:"cpus"`
	OutOfOrderStarts int64   `json:"out_of_order_starts"`

	// Ticks are the scheduler's dispatches per lane (runner.Stats); a tick
	// that found the agent's goal still pursued runs no cycle.
	Ticks map[string]int64 `json:"ticks"`
	// CyclesByLane are the existence cycles per lane.
	CyclesByLane map[string]int64 `json:"cycles_by_lane"`
	// CallsByPurpose are the model attempts by purpose ("cycle",
	// "executor") and outcome, from the EventModelCall events:
	// "cycle/ok", "cycle/canceled", ...
	CallsByPurpose map[string]int64 `json:"calls_by_purpose"`
	// CallsInFlightAtEnd are the model calls still running when the run
	// stopped (cancelled; counted in model_calls, not in cycles).
	CallsInFlightAtEnd int64 `json:"calls_in_flight_at_end"`
	// Fallbacks counts the cycles that used the fallback goal.
	Fallbacks int64 `json:"fallbacks"`
	// CycleOverhead is each cycle's wall time beyond its model call
	// (prompt assembly, apply, save), milliseconds.
	CycleOverhead quantiles `json:"cycle_overhead_ms"`
	// LatenessByWindow is the autonomy lane's lateness p99 in each tenth
	// of the run, milliseconds: start-up versus steady state.
	LatenessByWindow []float64 `json:"lateness_p99_by_tenth_ms"`
	// WorkersBusyMean, CallsInFlightMean and QueuedMean are the autonomy
	// lane's busy workers, the model calls in flight and the autonomy
	// cycles waiting for a worker, averaged over samples every 100 ms: a
	// busy worker outside a model call is scheduling or CPU overhead.
	WorkersBusyMean   float64 `json:"workers_busy_mean"`
	CallsInFlightMean float64 `json:"calls_in_flight_mean"`
	QueuedMean        float64 `json:"queued_mean"`
	QueuedMax         int     `json:"queued_max"`
	// Heartbeats accounts for every heartbeat that fell due: each either
	// brought a tick due (dispatched, or still queued at the last sample,
	// at most 100 ms before the stop) or was coalesced into one.
	Heartbeats int64 `json:"heartbeats"`
	// HeapInuseMB, StackInuseMB and GoSysMB are the Go runtime's heap in
	// use, goroutine stacks and memory obtained from the OS at the last
	// RSS sample (runtime.MemStats), to tell what the RSS is made of.
	HeapInuseMB  float64 `json:"heap_inuse_mb"`
	StackInuseMB float64 `json:"stack_inuse_mb"`
	GoSysMB      float64 `json:"go_sys_mb"`
	NumGC        uint32  `json:"num_gc"`

	// Store is the kind of -store: "memory", "dir", "sqlite" or
	// "postgres".
	Store string `json:"store"`
	// Tasks reports whether the agents asked the store's task queue for a
	// task every cycle (a durable store without -no-tasks).
	Tasks bool `json:"tasks"`
	// StartupS is how long adding (loading) the agents took before the
	// run, seconds; with PostgreSQL it is the enrolment and the runner's
	// first lease round, which claims the agents and loads them (the
	// timed run starts once every agent claimed is held).
	StartupS float64 `json:"startup_s"`
	// Saves are the agents' Save calls until the stop, SavesPerS their
	// rate over the run, FinalSaves those of the shutdown (every agent
	// saved once more), SaveErrors the calls that failed, and SaveLatency
	// each call's time, milliseconds (all of them).
	Saves       int64     `json:"saves"`
	SavesPerS   float64   `json:"saves_per_s"`
	FinalSaves  int64     `json:"final_saves"`
	SaveErrors  int64     `json:"save_errors"`
	SaveLatency quantiles `json:"save_ms"`
	// Errors counts the agents' error events (EventError) but those of a
	// context ended by the stop (Cancelled, a save or call cut short; the
	// shutdown saves every agent again); FirstError is the first one's
	// text. SavesCancelled are the saves among them.
	Errors         int64  `json:"errors"`
	FirstError     string `json:"first_error,omitempty"`
	Cancelled      int64  `json:"errors_cancelled_at_stop"`
	SavesCancelled int64  `json:"saves_cancelled_at_stop"`
	// With PostgreSQL: the most agents this process ran at once, and the
	// leases it claimed, lost (taken over by another process) and
	// released (at the stop).
	AgentsHeldMax  int   `json:"agents_held_max,omitempty"`
	LeasesClaimed  int64 `json:"leases_claimed,omitempty"`
	LeasesLost     int64 `json:"leases_lost,omitempty"`
	LeasesReleased int64 `json:"leases_released,omitempty"`

	// Server is the model server of a run with -llm-url (absent on the
	// simulated model).
	Server *swarmServer `json:"server,omitempty"`
	// Servers are the pool's servers with more than one -llm-url (Server
	// is then the first), each with its calls, failures and downs.
	Servers []*swarmServer `json:"servers,omitempty"`
	// Pinning is how well the pool kept each agent on one server, with
	// several -llm-url.
	Pinning *swarmPinning `json:"pinning,omitempty"`
	// Tokens are the tokens the model calls used: the server's counts,
	// else estimates.
	Tokens swarmTokens `json:"tokens"`
	// Concurrency is what the runner saw of the model server at the end
	// (runner.ConcurrencyStats: the autonomy lane's limit, calls in
	// flight, latency, 503s); LimitBySecond the limit at each second of
	// the run; OverloadRate the share of calls refused as overloaded.
	Concurrency   runner.ConcurrencyStats `json:"concurrency"`
	LimitBySecond []int                   `json:"concurrency_limit_by_s"`
	OverloadRate  float64                 `json:"overload_rate"`
	// TokenBudget is -token-budget; BudgetExhausted the budget_exhausted
	// events and Held the cycles a spent budget made wait.
	TokenBudget     string `json:"token_budget,omitempty"`
	BudgetExhausted int64  `json:"budget_exhausted,omitempty"`
	Held            int64  `json:"held,omitempty"`

	// Postgres is what the PostgreSQL store did during the run (see
	// pgFigures), with -store postgres://...
	Postgres *pgFigures `json:"postgres,omitempty"`
}

// simModel answers after the latency ± jitter, honouring ctx.
type simModel struct {
	latency, jitter time.Duration
	seed            uint64
	calls, inFlight atomic.Int64
	maxInFlight     atomic.Int64
	cancelled       atomic.Int64 // calls whose ctx ended before the swarmReply
}

const swarmReply = `{"action":"goal","content":"map the workspace and write down what exists","reasoning":"nothing is written down yet","worldview_update":null,"new_open_questions":[],"new_opinions":[],"suffering_assessment":{"new_stressors":[],"resolved":[]}}`

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
			m.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}
	return &llm.Response{Text: swarmReply}, nil
}

func (m *simModel) Name() string { return "simulated" }

// swarmCollector gathers the cycle events.
type swarmCollector struct {
	mu        sync.Mutex
	lateness  [2][]time.Duration
	cycled    map[string]bool
	said      map[string]time.Time
	replies   []time.Duration
	overhead  []time.Duration
	start     time.Time
	span      time.Duration
	windows   [10][]time.Duration
	overheads []time.Duration
	calls     map[string]int64
	fallbacks int64
	starts    []startDue // autonomy cycles
	errors    int64
	firstErr  string
	cancelled int64
	tokens    swarmTokens
	exhausted int64
	// stopped is set when the run's duration is up: a call that then ends
	// in a timeout or cancellation was cut by the stop, and is counted as
	// "stopped", not as a timeout.
	stopped atomic.Bool
}

// startDue is when an autonomy cycle started (estimated as the cycle
// event's time minus the cycle's Total) and when it fell due (start minus
// Lateness).
type startDue struct{ start, due time.Time }

// orderTolerance is how much earlier than a cycle already started another
// cycle may fall due and still count as in order: the start is estimated
// from the event's time, which a busy machine delays.
const orderTolerance = 100 * time.Millisecond

// outOfOrder counts the autonomy cycles that started after a cycle that
// fell due more than orderTolerance later (fairness: the lane takes the
// earliest due first).
func outOfOrder(sd []startDue) int64 {
	slices.SortFunc(sd, func(a, b startDue) int { return a.start.Compare(b.start) })
	var n int64
	var latest time.Time
	for _, x := range sd {
		if x.due.Add(orderTolerance).Before(latest) {
			n++
		}
		if x.due.After(latest) {
			latest = x.due
		}
	}
	return n
}

func (c *swarmCollector) observe(e event.Event) {
	switch {
	case e.Kind == event.ModelCall && e.Call != nil:
		outcome := e.Call.Outcome
		if outcome == "" {
			outcome = "ok"
		}
		if (outcome == middleware.OutcomeTimeout || outcome == middleware.OutcomeCanceled) && c.stopped.Load() {
			outcome = "stopped"
		}
		c.mu.Lock()
		c.calls[e.Call.Purpose+"/"+outcome]++
		c.observeUsage(e)
		c.mu.Unlock()
		return
	case e.Kind == event.BudgetExhausted:
		c.mu.Lock()
		c.exhausted++
		c.mu.Unlock()
		return
	case e.Kind == event.Error && (errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)):
		c.mu.Lock()
		c.cancelled++ // cut short by the stop
		c.mu.Unlock()
		return
	case e.Kind == event.Error:
		c.mu.Lock()
		c.errors++
		if c.firstErr == "" {
			c.firstErr = e.AgentID + ": " + e.Text + ": " + e.Error
		}
		c.mu.Unlock()
		return
	case e.Kind == event.Fallback:
		c.mu.Lock()
		c.fallbacks++
		c.mu.Unlock()
		return
	case e.Kind != event.Cycle || e.Cycle == nil:
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.overheads = append(c.overheads, e.Cycle.Total-e.Cycle.Generate)
	if e.Cycle.Lane != runner.LanePriority.String() {
		st := now.Add(-e.Cycle.Total)
		c.starts = append(c.starts, startDue{start: st, due: st.Add(-e.Cycle.Lateness)})
	}
	lane := 0
	if e.Cycle.Lane == runner.LanePriority.String() {
		lane = 1
		if at, ok := c.said[e.AgentID]; ok {
			c.replies = append(c.replies, now.Sub(at))
			c.overhead = append(c.overhead, now.Sub(at)-e.Cycle.Generate)
			delete(c.said, e.AgentID)
		}
	}
	c.lateness[lane] = append(c.lateness[lane], e.Cycle.Lateness)
	c.cycled[e.AgentID] = true
	if lane == 0 && !c.start.IsZero() && c.span > 0 {
		w := min(int(now.Sub(c.start)*10/c.span), 9)
		c.windows[max(w, 0)] = append(c.windows[max(w, 0)], e.Cycle.Lateness)
	}
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

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (res *swarmResult) print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(res)
	}
	queue := ""
	if res.Tasks {
		queue = " (and its task queue)"
	}
	workers := fmt.Sprintf("%d autonomy workers", res.AutonomyWorkers)
	if res.WorkersSized != "" {
		workers += " (" + res.WorkersSized + ")"
	}
	if res.Concurrency.Adaptive {
		workers = "adaptive autonomy workers"
	}
	model := fmt.Sprintf("model %.1f s", res.ModelLatencyS)
	if res.Server != nil {
		model = "model server " + res.Server.URL
	}
	fmt.Fprintf(w, "agents %d, %.0f s, %d CPUs, %s, heartbeat %.1f s (notified wake-ups at most one per %.1f s), %s, store %s%s\n", res.Agents, res.DurationS, res.CPUs, workers, res.HeartbeatS, res.TriggerGapS, model, res.Store, queue)
	fmt.Fprintf(w, "cycles        %d (%.1f/s), %d agents had at least one\n", res.Cycles, res.CyclesPerS, res.AgentsCycled)
	for _, lane := range []string{"autonomy", "priority"} {
		q := res.Lateness[lane]
		fmt.Fprintf(w, "lateness %-9s p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d cycles)\n", lane, q.P50, q.P99, q.Max, q.N)
	}
	fmt.Fprintf(w, "  (lateness: when a cycle started on a worker minus when it fell due: its\n")
	fmt.Fprintf(w, "   heartbeat, the end of its cooldown, or the host message; the queueing delay)\n")
	fmt.Fprintf(w, "  autonomy p99 by tenth of the run: %v ms\n", res.LatenessByWindow)
	fmt.Fprintf(w, "ticks         autonomy %d, priority %d dispatched; cycles autonomy %d, priority %d\n", res.Ticks["autonomy"], res.Ticks["priority"], res.CyclesByLane["autonomy"], res.CyclesByLane["priority"])
	fmt.Fprintf(w, "workers       autonomy: %.0f busy on average (%.0f in a model call), %.0f cycles queued on average, at most %d\n", res.WorkersBusyMean, res.CallsInFlightMean, res.QueuedMean, res.QueuedMax)
	if res.Ticks["autonomy"] > 0 && res.ModelCalls > 0 {
		// Little's law: busy workers = ticks per second × how long each holds a worker.
		perS := float64(res.Ticks["autonomy"]) / res.DurationS
		hold := res.WorkersBusyMean / perS
		fmt.Fprintf(w, "              so an autonomy tick held a worker %.3f s on average (a model call took %.3f s); this load needs about %.0f workers\n",
			hold, res.CallsInFlightMean/(float64(res.ModelCalls)/res.DurationS), float64(res.Agents)/res.HeartbeatS*hold)
	}
	fmt.Fprintf(w, "cycle time    beyond the model call: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", res.CycleOverhead.P50, res.CycleOverhead.P99, res.CycleOverhead.Max)
	fmt.Fprintf(w, "order         %d autonomy cycles started after one due more than %v later\n", res.OutOfOrderStarts, orderTolerance)
	fmt.Fprintf(w, "coalesced     %d heartbeats (merged into a queued or running cycle; no model call)\n", res.Coalesced)
	fmt.Fprintf(w, "heartbeats    %d = %d ticks dispatched (host-message ticks included) + %d queued at the stop + %d coalesced\n", res.Heartbeats, res.Ticks["autonomy"]+res.Ticks["priority"], res.Heartbeats-res.Coalesced-res.Ticks["autonomy"]-res.Ticks["priority"], res.Coalesced)
	fmt.Fprintf(w, "model calls   %d (at most %d in flight; %d cancelled, most of them in flight at the stop)\n", res.ModelCalls, res.CallsInFlightMax, res.CallsInFlightAtEnd)
	fmt.Fprintf(w, "  by purpose/outcome: %v; fallbacks %d\n", res.CallsByPurpose, res.Fallbacks)
	res.printServer(w)
	res.printPool(w)
	fmt.Fprintf(w, "RSS           peak %.1f MB while running, %.1f KB per agent above the start (samples %v MB)\n", float64(res.RSSBytes)/(1<<20), float64(res.RSSBytesPerAgent)/1024, res.RSSSamplesMB)
	fmt.Fprintf(w, "  live heap as of the last GC (what the agents hold; RSS also holds the garbage until the next GC): samples %v MB\n", res.LiveHeapMB)
	if res.GCSamples {
		fmt.Fprintln(w, "  (-gc-samples: a GC ran at each sample, so these are exact)")
	}
	fmt.Fprintf(w, "  Go runtime at the last sample: heap in use %.0f MB, goroutine stacks %.0f MB, from the OS %.0f MB; %d GCs\n", res.HeapInuseMB, res.StackInuseMB, res.GoSysMB, res.NumGC)
	fmt.Fprintf(w, "store         %s: %d saves (%.1f/s) until the stop, %d at the shutdown, %d failed, %d cut short by the stop; a save took p50 %.1f ms, p99 %.1f ms, max %.1f ms; start-up %.1f s\n",
		res.Store, res.Saves, res.SavesPerS, res.FinalSaves, res.SaveErrors, res.SavesCancelled, res.SaveLatency.P50, res.SaveLatency.P99, res.SaveLatency.Max, res.StartupS)
	if res.Store == "postgres" {
		fmt.Fprintf(w, "leases        held at most %d agents; %d claimed, %d lost to another process, %d released at the stop\n", res.AgentsHeldMax, res.LeasesClaimed, res.LeasesLost, res.LeasesReleased)
	}
	if res.Postgres != nil {
		res.Postgres.print(w)
	}
	if res.Errors > 0 {
		fmt.Fprintf(w, "errors        %d agent error events; the first: %s\n", res.Errors, res.FirstError)
	}
	fmt.Fprintf(w, "goroutines    at most %d\n", res.GoroutinesMax)
	fmt.Fprintf(w, "CPU           %.1f s (%.0f%% of one core)\n", res.CPUSeconds, res.CPUPercent)
	if res.HostReply != nil {
		fmt.Fprintf(w, "host replies  p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d answered, %d not yet)\n", res.HostReply.P50, res.HostReply.P99, res.HostReply.Max, res.HostReply.N, res.HostUnanswered)
		fmt.Fprintf(w, "  beyond the model call: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", res.HostOverhead.P50, res.HostOverhead.P99, res.HostOverhead.Max)
	}
	return nil
}

// liveHeapBytes returns the heap bytes that were live at the end of the
// last GC (runtime/metrics "/gc/heap/live:bytes"): the memory the agents
// and the scheduler hold, without the garbage that RSS also counts until
// the next collection.
func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
