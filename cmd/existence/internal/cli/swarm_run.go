package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
)

// swarmRun is one run of the swarm: what its steps share.
type swarmRun struct {
	o      swarmOptions
	t0     time.Time // the start of the setup
	rss0   int64     // RSS before the agents
	db     *swarmStore
	sim    *simModel // the simulated model, or the counters of a server's calls
	model  llm.Model
	server *swarmServer
	pool   *swarmPool
	col    *swarmCollector
	saves  *saveStats
	ids    []string
	leases *countingLeases // with PostgreSQL
	r      *runner.Runner
	res    *swarmResult
	sized  string // how the autonomy workers were sized, see sizedWorkers
}

// sizedWorkers returns the autonomy workers for the simulated model when
// -autonomy-workers is 0, and how they were sized. The simulated model
// never queues, so the adaptive limit (which grows while the latency stays
// near its minimum) would only show its ramp from 1; the lane is sized to
// the load instead, by Little's law: -agents ÷ -heartbeat (or -cooldown,
// if longer) cycles a second, each holding a worker for one model call
// (-model-latency + -jitter at most), plus 10% — so that the run shows
// what the scheduler can do. At least GOMAXPROCS (a model with no
// latency is CPU-bound), at most -agents.
func sizedWorkers(o *swarmOptions) (int, string) {
	period := max(o.heartbeat, o.cooldown)
	call := o.latency + o.jitter
	n := int(math.Ceil(float64(o.agents) / period.Seconds() * call.Seconds() * 1.1))
	n = min(max(n, runtime.GOMAXPROCS(0)), o.agents)
	why := fmt.Sprintf("sized to the load: %d agents ÷ %.1f s × %.1f s a model call + 10%%; the simulated model never queues", o.agents, period.Seconds(), call.Seconds())
	return n, why
}

// swarmTimed is what the timed run keeps from its start to its end.
type swarmTimed struct {
	start       time.Time
	cpu0        time.Duration
	savesAtStop atomic.Int64 // the saves until the stop; those after it are the shutdown's
	stopAt      atomic.Int64
	pgStart     pgstore.Stats                 // the PostgreSQL store's counters at the start
	pgStop      atomic.Pointer[pgstore.Stats] // and at the stop
	relayed     chan error
}

// runSwarm runs the swarm for o.duration (or until ctx ends).
func runSwarm(ctx context.Context, o swarmOptions) (*swarmResult, error) {
	s := &swarmRun{o: o, t0: time.Now(), saves: &saveStats{}}
	db, err := openSwarmStore(ctx, o.store, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	defer db.closer.Close()
	s.db = db
	runtime.GC()
	s.rss0 = rssBytes()
	stopModel, err := s.openModel()
	if err != nil {
		return nil, err
	}
	defer stopModel()
	if o.http != "" && db.tasks == nil && !o.noTasks {
		db.tasks = taskqueue.NewMemory(taskqueue.Options{}) // what A2A and the monitor submit to
	}
	if err := s.newRunner(ctx); err != nil {
		return nil, err
	}
	defer s.r.Close()
	if o.http != "" {
		stop, err := s.serve()
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	done := make(chan error, 1)
	s.adopt(runCtx, done)
	startup := time.Since(s.t0)

	ctx, cancel := context.WithTimeout(runCtx, o.duration)
	defer cancel()
	context.AfterFunc(ctx, func() {
		if s.col != nil {
			s.col.stopped.Store(true)
		}
		stopRun()
	})
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	t := s.startTimed(ctx, done)
	s.res = s.newResult(startup)
	sm := newSwarmSampler(s, t.start)
	runErr, err := sm.loop(ctx, cancel, done)
	if err != nil {
		return nil, err
	}
	s.finish(t, sm)
	if err := <-t.relayed; err != nil && ctx.Err() == nil {
		runErr = errors.Join(runErr, err)
	}
	if runErr != nil && !errors.Is(runErr, context.DeadlineExceeded) {
		return s.res, runErr
	}
	return s.res, nil
}

// openModel builds the run's model: the simulated one, or -llm-url's
// server (a pool of them with several). stop closes the stand-ins.
func (s *swarmRun) openModel() (stop func(), err error) {
	o := &s.o
	s.sim = &simModel{latency: o.latency, jitter: o.jitter, seed: o.seed}
	s.model = s.sim
	stop = func() {}
	if len(o.llmURLs) > 1 {
		p, stop, err := poolModel(o, s.sim)
		if err != nil {
			return nil, err
		}
		s.model, s.server, s.pool = p.pool, p.servers[0], p
		return stop, nil
	}
	if o.llmURL != "" {
		m, srv, stop, err := serverModel(o, s.sim)
		if err != nil {
			return nil, err
		}
		s.model, s.server = m, srv
		return stop, nil
	}
	return stop, nil
}

// swarmName is the name of the agent of id "agent-00042": "Agent 42".
func swarmName(id string) string {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "agent-"))
	return "Agent " + strconv.Itoa(n)
}

// newRunner makes the runner and its agents: added here, or with
// PostgreSQL enrolled and claimed by the runner's leases.
func (s *swarmRun) newRunner(ctx context.Context) error {
	o, db := &s.o, s.db
	s.col = &swarmCollector{cycled: map[string]bool{}, said: map[string]time.Time{}, calls: map[string]int64{}, span: o.duration}
	s.ids = make([]string, o.agents)
	for i := range s.ids {
		s.ids[i] = fmt.Sprintf("agent-%05d", i)
	}
	if o.llmURL == "" && o.autonomyWorkers == 0 {
		o.autonomyWorkers, s.sized = sizedWorkers(o)
	}
	rc := runner.Config{
		AutonomyWorkers: autonomyWorkers(o.autonomyWorkers),
		Budget:          o.tokenBudget,
		PriorityWorkers: o.priorityWorkers,
		Cooldown:        o.cooldown,
		Heartbeat:       o.heartbeat,
		Observer:        s.col.observe,
		Logger:          slog.New(slog.DiscardHandler),
		// Interleaved agents show the same peers, which the cache layout
		// puts before what each agent gathers.
		SharedPeers: o.layout == prompt.LayoutCache,
	}
	if db.pg != nil {
		// Enroll the population (idempotent, so every process may),
		// then let the runner claim up to -max-agents of it and run each
		// agent on the store fenced by its lease.
		if err := db.pg.Enroll(ctx, s.ids...); err != nil {
			return err
		}
		s.leases = &countingLeases{Manager: db.pg}
		rc.Leases, rc.MaxAgents = s.leases, o.agents
		if o.maxAgents > 0 {
			rc.MaxAgents = o.maxAgents
		}
		rc.NewAgent = func(ctx context.Context, l lease.Lease) (existence.Config, error) {
			f := db.pg.Fenced(l)
			cfg := existence.Config{ID: l.AgentID, Name: swarmName(l.AgentID), Model: s.model, Calls: existence.CallConfig{Retry: o.retry(), MaxTokens: o.replyTokens}, Store: countingStore{f, s.saves}, Prompt: o.prompt(), Timing: existence.TimingConfig{CallTimeout: o.llmTimeout}}
			if !o.noTasks {
				cfg.Tasks = f.Tasks()
			}
			return cfg, nil
		}
	} else {
		if o.seasoned {
			if err := season(ctx, db.store, s.ids, swarmName, s.t0); err != nil {
				return err
			}
		}
		rc.Store = countingStore{db.store, s.saves}
	}
	r, err := runner.New(rc)
	if err != nil {
		return err
	}
	s.r = r
	if db.pg != nil {
		return nil
	}
	for _, id := range s.ids {
		cfg := existence.Config{ID: id, Name: swarmName(id), Model: s.model, Calls: existence.CallConfig{Retry: o.retry(), MaxTokens: o.replyTokens}, Prompt: o.prompt(), Timing: existence.TimingConfig{CallTimeout: o.llmTimeout}}
		if db.tasks != nil && !o.noTasks {
			cfg.Tasks = db.tasks
		}
		if _, err := r.Add(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}

// serve serves the monitor with A2A and MCP (withProtocols) on -http.
func (s *swarmRun) serve() (stop func(), err error) {
	o := &s.o
	log := slog.New(slog.DiscardHandler)
	stderr := o.stderr
	if stderr == nil {
		stderr = io.Discard
	}
	var tasks task.Queue
	if s.db.tasks != nil && !o.noTasks {
		tasks = s.db.tasks
	}
	mon, err := monitor.New(monitor.Config{Runner: s.r, Tasks: tasks, Token: o.httpToken.String(), Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.httpOptOut})
	if err != nil {
		return nil, err
	}
	h, err := withProtocols(mon, protocolConfig{Agents: s.r, Tasks: tasks, Name: "existence-loop-swarm", Logger: log})
	if err != nil {
		return nil, err
	}
	cancel := s.r.Subscribe(mon.Observe)
	_, stopServing, err := listenMonitor(mon, h, o.http, o.httpToken, "swarm", log, stderr)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { stopServing(); cancel() }, nil
}

// adopt starts the runner early with leases: its first lease round
// claims the agents and loads their states, which is start-up too, so the
// timed run starts once every agent claimed is held. Run's end goes to
// done.
func (s *swarmRun) adopt(runCtx context.Context, done chan error) {
	if s.leases == nil {
		return
	}
	go func() { done <- s.r.Run(runCtx) }()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for !s.leases.adopted(s.r.Len()) {
		select {
		case err := <-done:
			done <- err // Run ended early: reported at the end of the run
			return
		case <-poll.C:
		}
	}
}

// startTimed starts the timed run: the counters' baselines, the runner
// (unless adopt did), and with PostgreSQL the relay of messages sent
// through the database.
func (s *swarmRun) startTimed(ctx context.Context, done chan error) *swarmTimed {
	runtime.GC() // the first live-heap sample is then the whole population's, not a GC's from mid-setup
	t := &swarmTimed{start: time.Now(), cpu0: cpuTime(), relayed: make(chan error, 1)}
	s.server.start()
	s.pool.start()
	s.col.mu.Lock()
	s.col.start = t.start
	s.col.mu.Unlock()
	if s.db.pg != nil {
		t.pgStart = s.db.pg.Stats()
	}
	context.AfterFunc(ctx, func() {
		t.savesAtStop.Store(s.saves.saves.Load())
		t.stopAt.Store(int64(time.Since(t.start)))
		if s.db.pg != nil {
			st := s.db.pg.Stats()
			t.pgStop.Store(&st)
		}
	})
	if s.leases == nil {
		go func() { done <- s.r.Run(ctx) }()
	}
	if s.db.pg == nil {
		t.relayed <- nil
		return t
	}
	// Messages sent to the agents through the database (Store.Send, by
	// another program) reach the ones this process holds.
	go func() {
		t.relayed <- s.db.pg.Relay(ctx, time.Second, func(id string) pgstore.Recipient {
			if a := s.r.Agent(id); a != nil {
				return a
			}
			return nil
		})
	}()
	return t
}

// newResult returns the result with the run's settings.
func (s *swarmRun) newResult(startup time.Duration) *swarmResult {
	o := &s.o
	return &swarmResult{Server: s.server, TokenBudget: o.tokenBudget.String(), Agents: o.agents, GCSamples: o.gcSamples, Seasoned: o.seasoned, AutonomyWorkers: o.autonomyWorkers, WorkersSized: s.sized,
		HeartbeatS: o.heartbeat.Seconds(), TriggerGapS: runner.DefaultTriggerGap(o.heartbeat).Seconds(), ModelLatencyS: o.latency.Seconds(), CPUs: runtime.NumCPU(),
		Store: s.db.kind, Tasks: s.db.tasks != nil && !o.noTasks, StartupS: startup.Seconds()}
}

// swarmSampler samples the run every 100 ms and sends the host messages.
type swarmSampler struct {
	*swarmRun
	start      time.Time
	nextSecond time.Time
	nextRSS    time.Time
	rng        *rand.Rand
	sayAt      []time.Duration // when to send each host message, from the start
	samples    int
	heapDone   bool
	lastQueued int64 // at the last sample: the final Stats come after the stop emptied the queues
	busySum    float64
	queuedSum  float64
	flightSum  float64
}

func newSwarmSampler(s *swarmRun, start time.Time) *swarmSampler {
	o := &s.o
	sm := &swarmSampler{swarmRun: s, start: start, nextSecond: start, nextRSS: start, rng: rand.New(rand.NewPCG(o.seed, 42))}
	for i := range o.hostMessages {
		// Evenly spread over the middle of the run, so that each swarmReply
		// measures one message, not a queue of them.
		sm.sayAt = append(sm.sayAt, o.duration/10+time.Duration(i)*(o.duration*8/10)/time.Duration(o.hostMessages))
	}
	return sm
}

// loop samples until the runner's Run ends, and returns its error; err
// is the sampling's own (a heap profile, a host message).
func (sm *swarmSampler) loop(ctx context.Context, cancel func(), done chan error) (runErr, err error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case runErr = <-done:
			return runErr, nil
		case <-tick.C:
			if err := sm.sample(ctx, cancel); err != nil {
				return nil, err
			}
		}
	}
}

// sample takes one sample: goroutines, RSS, the scheduler's queues and
// limit, memory each tenth of the run; and sends the host messages due.
func (sm *swarmSampler) sample(ctx context.Context, cancel func()) error {
	o, res, r := &sm.o, sm.res, sm.r
	res.GoroutinesMax = max(res.GoroutinesMax, runtime.NumGoroutine())
	res.AgentsHeldMax = max(res.AgentsHeldMax, r.Len())
	if rss := rssBytes(); rss > res.RSSBytes {
		res.RSSBytes = rss // the peak while the agents run, not after the final saves
	}
	if o.memProfile != "" && !sm.heapDone && time.Since(sm.start) >= o.duration*9/10 {
		sm.heapDone = true
		if err := writeHeap(o.memProfile); err != nil {
			return err
		}
	}
	st := r.Stats()
	if ctx.Err() != nil {
		return nil // stopping: the agents are being saved, not scheduled
	}
	if o.stopWhen != nil && o.stopWhen(sm.pool) {
		cancel()
	}
	sm.lastQueued = int64(st.Queued[0] + st.Queued[1])
	sm.samples++
	sm.busySum += float64(st.Running[runner.LaneAutonomy])
	sm.queuedSum += float64(st.Queued[runner.LaneAutonomy])
	res.QueuedMax = max(res.QueuedMax, st.Queued[runner.LaneAutonomy])
	sm.flightSum += float64(sm.sim.inFlight.Load())
	if now := time.Now(); !now.Before(sm.nextSecond) {
		res.LimitBySecond = append(res.LimitBySecond, st.Concurrency.Limit)
		sm.nextSecond = sm.nextSecond.Add(time.Second)
	}
	if now := time.Now(); !now.Before(sm.nextRSS) {
		res.RSSSamplesMB = append(res.RSSSamplesMB, float64(rssBytes())/(1<<20))
		if o.gcSamples {
			runtime.GC()
		}
		res.LiveHeapMB = append(res.LiveHeapMB, float64(liveHeapBytes())/(1<<20))
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		res.HeapInuseMB, res.StackInuseMB, res.GoSysMB, res.NumGC = float64(ms.HeapInuse)/(1<<20), float64(ms.StackInuse)/(1<<20), float64(ms.Sys)/(1<<20), ms.NumGC
		sm.nextRSS = now.Add(o.duration / 10)
	}
	return sm.say(ctx)
}

// say sends the host messages that are due, each to a random agent not
// already waiting for its answer.
func (sm *swarmSampler) say(ctx context.Context) error {
	for len(sm.sayAt) > 0 && time.Since(sm.start) >= sm.sayAt[0] {
		sm.sayAt = sm.sayAt[1:]
		id := sm.ids[sm.rng.IntN(sm.o.agents)]
		if sm.db.pg != nil {
			// Only the agents this process holds can be timed.
			held := sm.r.Agents()
			if len(held) == 0 {
				continue
			}
			id = held[sm.rng.IntN(len(held))].ID()
		}
		sm.col.mu.Lock()
		if _, busy := sm.col.said[id]; busy {
			sm.col.mu.Unlock()
			continue
		}
		sm.col.said[id] = time.Now()
		sm.col.mu.Unlock()
		if err := sm.r.SayAsHost(context.WithoutCancel(ctx), "How are you doing?", id); err != nil {
			return err
		}
	}
	return nil
}

// finish fills the result in once the runner has stopped.
func (s *swarmRun) finish(t *swarmTimed, sm *swarmSampler) {
	o, res, saves := &s.o, s.res, s.saves
	elapsed := time.Since(t.start)
	res.CPUSeconds = (cpuTime() - t.cpu0).Seconds()
	res.CPUPercent = 100 * res.CPUSeconds / elapsed.Seconds()
	if s.leases == nil {
		res.AgentsHeldMax = 0 // every agent, all the run
		res.RSSBytesPerAgent = (res.RSSBytes - s.rss0) / int64(o.agents)
	} else {
		res.RSSBytesPerAgent = (res.RSSBytes - s.rss0) / int64(max(res.AgentsHeldMax, 1))
		res.LeasesClaimed, res.LeasesLost, res.LeasesReleased = s.leases.claimed.Load(), s.leases.lost.Load(), s.leases.released.Load()
	}
	res.Saves = t.savesAtStop.Load()
	if d := time.Duration(t.stopAt.Load()); d > 0 {
		res.SavesPerS = float64(res.Saves) / d.Seconds()
	}
	res.FinalSaves = saves.saves.Load() - res.Saves
	res.SaveErrors, res.SavesCancelled = saves.errors.Load(), saves.cancelled.Load()
	res.SaveLatency = saves.quantiles()
	st := s.r.Stats()
	res.DurationS = elapsed.Seconds()
	res.Coalesced = st.Coalesced
	res.Heartbeats = st.Dispatched[0] + st.Dispatched[1] + sm.lastQueued + st.Coalesced
	res.ModelCalls = s.sim.calls.Load()
	res.CallsInFlightMax = s.sim.maxInFlight.Load()
	res.CallsInFlightAtEnd = s.sim.cancelled.Load()
	res.Concurrency, res.Held = st.Concurrency, st.Held
	if st.Concurrency.Calls > 0 {
		res.OverloadRate = float64(st.Concurrency.Overloads) / float64(st.Concurrency.Calls)
	}
	s.server.finish(elapsed)
	res.Servers = s.pool.finish(elapsed)
	res.Pinning = s.pool.pinning()
	if sm.samples > 0 {
		res.WorkersBusyMean, res.QueuedMean, res.CallsInFlightMean = sm.busySum/float64(sm.samples), sm.queuedSum/float64(sm.samples), sm.flightSum/float64(sm.samples)
	}
	s.collected(st, elapsed)
	if s.db.pg != nil {
		stop, d := t.pgStop.Load(), time.Duration(t.stopAt.Load())
		if stop == nil { // the run ended before its time
			st := s.db.pg.Stats()
			stop, d = &st, elapsed
		}
		res.Postgres = pgFiguresOf(t.pgStart, *stop, res.Cycles, d)
		res.LeasesLost = s.db.pg.Stats().LeasesLost // each loss once (Renew repeats a lost lease until it is released)
	}
}

// collected fills in what the collector gathered from the events.
func (s *swarmRun) collected(st runner.Stats, elapsed time.Duration) {
	res, col := s.res, s.col
	col.mu.Lock()
	defer col.mu.Unlock()
	res.Ticks = map[string]int64{"autonomy": st.Dispatched[runner.LaneAutonomy], "priority": st.Dispatched[runner.LanePriority]}
	res.CyclesByLane = map[string]int64{"autonomy": int64(len(col.lateness[0])), "priority": int64(len(col.lateness[1]))}
	res.CallsByPurpose = maps.Clone(col.calls)
	res.Fallbacks = col.fallbacks
	res.Tokens = col.tokens
	res.Tokens.PerS = float64(col.tokens.Input+col.tokens.Output) / elapsed.Seconds()
	res.BudgetExhausted = col.exhausted
	res.Errors, res.FirstError, res.Cancelled = col.errors, col.firstErr, col.cancelled
	res.CycleOverhead = quantilesOf(col.overheads)
	res.OutOfOrderStarts = outOfOrder(col.starts)
	for _, w := range col.windows {
		res.LatenessByWindow = append(res.LatenessByWindow, quantilesOf(w).P99)
	}
	res.Cycles = int64(len(col.lateness[0]) + len(col.lateness[1]))
	res.CyclesPerS = float64(res.Cycles) / elapsed.Seconds()
	res.Lateness = map[string]quantiles{"autonomy": quantilesOf(col.lateness[0]), "priority": quantilesOf(col.lateness[1])}
	res.AgentsCycled = len(col.cycled)
	if s.o.hostMessages > 0 {
		q := quantilesOf(col.replies)
		res.HostReply = &q
		oq := quantilesOf(col.overhead)
		res.HostOverhead = &oq
		res.HostUnanswered = len(col.said)
	}
}
