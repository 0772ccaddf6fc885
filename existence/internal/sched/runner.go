package sched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/heap"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
)

// Defaults of [Config]: the peers section and the leases.
const (
	// DefaultMaxPeersShown is how many peers a "YOUR PEERS" section shows
	// at most.
	DefaultMaxPeersShown = 8
	// defaultLeaseTTL is the lease time-to-live the default RenewEvery is
	// a third of.
	defaultLeaseTTL = 15 * time.Second
	// DefaultRenewEvery is how often a runner with Leases renews them and
	// claims more: defaultLeaseTTL/3.
	DefaultRenewEvery = defaultLeaseTTL / 3
	// saveTimeout bounds the runner's own saves and releases.
	saveTimeout = 10 * time.Second
)

// Build makes the agent the runner adds, given the runner's hooks.
type Build func(h wire.Hooks) (wire.Agent, error)

// Config configures a [Runner]: the engine's part of runner.Config (see
// there for each field).
type Config struct {
	AutonomyWorkers int
	Adaptive        middleware.AdaptiveConfig
	PriorityWorkers int
	Cooldown        time.Duration
	TriggerGap      time.Duration
	NoStagger       bool
	MaxPeersShown   int
	SharedPeers     bool
	MaxInFlight     int
	Clock           clock.Clock
	Heartbeat       time.Duration
	Observer        event.Observer
	Logger          *slog.Logger
	Leases          lease.Manager
	MaxAgents       int
	RenewEvery      time.Duration
	// NewAgent returns the id of a claimed lease's agent and how to build
	// it (required with Leases).
	NewAgent     func(ctx context.Context, l lease.Lease) (id string, b Build, err error)
	SharedSlots  *identity.SharedBoard
	SharedBudget budget.Budget
	// Minds starts the runner's own minds under h, posting with post and
	// reporting with report; nil for none.
	Minds func(ctx context.Context, h wire.MindHost, post func(context.Context, slot.Slot) error, report func(event.Event))
}

// ErrDuplicateAgent is wrapped by the error of [Runner.Add] given an id
// the runner already holds.
var ErrDuplicateAgent = errors.New("existence: agent added twice")

// Runner runs many agents as peers in one process. Agents are
// data: each heartbeat is a due time in a timer heap, and a goroutine runs
// only while there is work (a cycle in a lane, or an executor pursuing a
// goal). A heartbeat brings an agent's cycle due in a lane:
//
//   - the priority lane (PriorityWorkers) for an agent with an unread host
//     message, a pending [Runner.Wake], or in crisis;
//   - the autonomy lane (AutonomyWorkers) otherwise, not before Cooldown
//     after the agent's previous cycle.
//
// An agent has at most one cycle queued or running: a heartbeat falling due
// meanwhile is merged into it and counted ([event.CycleStats].Coalesced), and
// never calls the model. In each lane the cycle due earliest runs first.
// How late each cycle started is [event.CycleStats].Lateness. Agents added
// together start spread over one heartbeat, deterministically from their
// ids.
//
// Peers: each agent's "YOUR PEERS" section shows at most MaxPeersShown
// others, from a snapshot updated after each cycle (building a prompt locks
// no other agent). When all the others fit, all are shown, ordered by id.
// Otherwise the section shows, in this order and without repeats: the
// agents that messaged this one most recently (newest first); then agents
// in crisis (by id, rotating with the agent's cycle count); then a stable
// rotation through all agents by id, starting after the agent itself and
// moving on by MaxPeersShown every cycle (with Config.SharedPeers, at the
// same place for every agent, moving on once a sweep, and the summaries
// held until it does); and ends with "(and N others)". A crisis message
// goes to the peers shown in the agent's last prompt only.
type Runner struct {
	cfg        Config
	dispatched atomic.Uint64 // cycles of all agents ended, for the shared peer rotation
	limiter    *middleware.Limiter
	book       peerBook

	mu     sync.RWMutex // guards agents and byID
	agents []wire.Agent
	byID   map[string]*node

	shared   *wire.BudgetState         // Config.SharedBudget; nil for none
	meter    *middleware.AdaptiveLimit // measures every model call of the agents; sizes the autonomy lane under AdaptiveWorkers
	adaptive bool                      // AutonomyWorkers is AdaptiveWorkers

	smu      sync.Mutex // guards core, the nodes' scheduler fields and the fields below
	core     *schedCore
	started  bool
	virtual  bool
	runCtx   context.Context
	active   int // agents not finished
	errs     []error
	inflight heap.Heap[inflight] // by end, then start order
	seq      uint64
	cycles   [2]int64
	kick     chan struct{}
	wg       sync.WaitGroup

	mindGroup *mindGroup // the minds running under Run, or nil; guarded by smu

	subs wire.Subscribers // Subscribe
}

// node is one agent in a runner.
type node struct {
	a      wire.Agent
	e      schedEntry
	ctx    context.Context
	cancel context.CancelFunc

	host   atomic.Bool   // an unread host message is pending
	crisis atomic.Bool   // the load was ≥ 0.90 after the last cycle
	woken  atomic.Bool   // Runner.Wake was called
	round  atomic.Uint64 // cycles dispatched, for the peer rotation

	finished bool        // guarded by Runner.smu
	lost     bool        // guarded by Runner.smu
	minds    bool        // its minds were started; guarded by Runner.smu
	cycle    *dispatched // the cycle running in real time, guarded by Runner.smu
}

// New returns a Runner. cfg's defaults are set by the caller
// (runner.New) but for the engine's own: workers, peers, leases, clock,
// logger.
func New(cfg Config) *Runner {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1
	}
	adaptive := cfg.AutonomyWorkers == AdaptiveWorkers
	if cfg.AutonomyWorkers <= 0 {
		cfg.AutonomyWorkers = 1
	}
	if cfg.PriorityWorkers <= 0 {
		cfg.PriorityWorkers = 1
	}
	if cfg.MaxPeersShown <= 0 {
		cfg.MaxPeersShown = DefaultMaxPeersShown
	}
	if cfg.MaxAgents <= 0 {
		cfg.MaxAgents = 10000
	}
	if cfg.RenewEvery <= 0 {
		cfg.RenewEvery = DefaultRenewEvery
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = wire.DefaultHeartbeat
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Runner{
		cfg:     cfg,
		limiter: middleware.NewLimiter(cfg.MaxInFlight),
		byID:    map[string]*node{},
		core:    newSchedCore(cfg.AutonomyWorkers, cfg.PriorityWorkers, cfg.Cooldown),
		kick:    make(chan struct{}, 1),
	}
	r.inflight.Less = inflightBefore
	r.core.classify = classifyNode
	r.core.triggerGap = cfg.TriggerGap
	r.core.hold = holdNode
	r.book.init(cfg.MaxPeersShown, cfg.SharedPeers)
	r.shared = wire.NewBudgetState(budget.ScopeRunner, cfg.SharedBudget)
	r.initMeter(adaptive)
	return r
}

// RunOne drives one agent in real time as a runner of one agent with one
// worker per lane and no stagger (existence.Agent.Run).
func RunOne(ctx context.Context, a wire.Agent, log *slog.Logger) error {
	r := &Runner{
		cfg: Config{
			Clock: a.Clock(), Heartbeat: a.Heartbeat(),
			NoStagger: true, AutonomyWorkers: 1, PriorityWorkers: 1,
			MaxPeersShown: DefaultMaxPeersShown, Logger: log,
		},
		byID: map[string]*node{},
		core: newSchedCore(1, 1, 0),
		kick: make(chan struct{}, 1),
	}
	r.core.classify = classifyNode
	r.core.hold = holdNode
	r.book.init(DefaultMaxPeersShown, false)
	r.attach(a)
	defer a.SetHooks(nil, nil)
	return r.Run(ctx)
}

// classifyNode picks the lane of a cycle a heartbeat brings due.
func classifyNode(e *schedEntry) Lane {
	if n := e.node; n != nil && (n.host.Load() || n.crisis.Load() || n.woken.Load()) {
		return LanePriority
	}
	return LaneAutonomy
}

// Add builds an agent with b, giving it the runner's hooks, and schedules
// it (see runner.Runner.Add). Errors: [ErrDuplicateAgent], b's.
func (r *Runner) Add(ctx context.Context, id string, b Build) (wire.Agent, error) {
	return r.add(ctx, id, b, nil)
}

// add is [Runner.Add] for an agent run under l (nil: no lease).
func (r *Runner) add(ctx context.Context, id string, b Build, l *lease.Lease) (wire.Agent, error) {
	if r.Agent(id) != nil {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateAgent, id)
	}
	a, err := b(wire.Hooks{
		Peers:    r.peers,
		Send:     r.broadcast,
		Limiter:  r.limiter,
		Lanes:    true,
		Lease:    l,
		Shared:   r.shared,
		Meter:    r.meter.Observe,
		Observer: r.subs.Deliver,
	})
	if err != nil {
		return nil, err
	}
	if r.Agent(id) != nil { // added by another goroutine meanwhile
		return nil, errors.Join(fmt.Errorf("%w: %q", ErrDuplicateAgent, id), a.Release())
	}
	r.attach(a)
	return a, nil
}

// schedule puts n in the scheduler; r.smu must be held.
func (r *Runner) schedule(n *node, now time.Time) {
	n.ctx, n.cancel = context.WithCancel(r.runCtx)
	first := now
	if !r.cfg.NoStagger {
		first = now.Add(stagger(n.e.id, n.e.hb))
	}
	r.core.add(&n.e, first)
	if n.host.Load() {
		r.core.wake(&n.e, now)
	}
	r.active++
}

// Agents returns the agents in the order they were added.
func (r *Runner) Agents() []wire.Agent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.agents)
}

// wired is [Runner.Agents].
func (r *Runner) wired() []wire.Agent { return r.Agents() }

// Agent returns the agent with the given id, or nil. It is O(1).
func (r *Runner) Agent(id string) wire.Agent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if n := r.byID[id]; n != nil {
		return n.a
	}
	return nil
}

func (r *Runner) node(id string) *node {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byID[id]
}

// Len returns the number of agents in the runner.
func (r *Runner) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.agents)
}

// RunnerStats are a runner's scheduler counters since it started; the
// public runner.Stats documents each field (this is its engine's copy,
// converted field by field, since runner stands above this package).
type RunnerStats struct {
	Dispatched      [2]int64 // per lane
	Coalesced       int64
	Queued, Running [2]int // per lane
	Agents          int
	Triggers        int64
	Workers         [2]int // per lane
	Held            int64
	Concurrency     ConcurrencyStats
	Budget          *budget.Status
}

// Stats returns the scheduler's counters.
func (r *Runner) Stats() RunnerStats {
	r.smu.Lock()
	st := RunnerStats{Dispatched: r.cycles, Coalesced: r.core.coalesced(), Queued: r.core.queued(), Running: r.core.busy, Agents: r.active,
		Triggers: r.core.triggers, Workers: r.core.workers, Held: r.core.held}
	r.smu.Unlock()
	st.Concurrency = r.concurrency(st.Workers[LaneAutonomy])
	st.Budget = r.shared.Status(r.cfg.Clock.Now())
	return st
}

// start schedules every agent once; r.smu must not be held.
func (r *Runner) start(ctx context.Context, virtual bool) error {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.started {
		if r.virtual != virtual {
			return errors.New("existence: a runner runs either in real time or virtually, not both")
		}
		return nil
	}
	r.started, r.virtual, r.runCtx = true, virtual, ctx
	if virtual {
		r.runCtx = context.WithoutCancel(ctx)
	}
	now := r.cfg.Clock.Now()
	r.mu.RLock()
	agents := slices.Clone(r.agents)
	r.mu.RUnlock()
	for _, a := range agents {
		r.schedule(r.node(a.ID()), now)
	}
	return nil
}

// Run drives the agents in real time until ctx ends, or, without Leases,
// until every agent has reached its MaxCycles (and its last goal ended).
// When ctx ends, it waits for the cycles running, stops every agent's goal
// (it stays active in the stored state), saves every agent and, with
// Leases, releases every lease at once. An agent's error does not stop the
// others; the errors of the final saves are joined. A model error never
// stops it (the fallback goal is used).
func (r *Runner) Run(ctx context.Context) error {
	if err := r.start(ctx, false); err != nil {
		return err
	}
	stopMinds := r.startMinds(ctx)
	leasesDone := make(chan struct{})
	if r.cfg.Leases != nil {
		go func() { defer close(leasesDone); r.leaseLoop(ctx) }()
	} else {
		close(leasesDone)
	}
	for {
		r.smu.Lock()
		now := r.cfg.Clock.Now()
		r.core.advance(now)
		jobs := r.core.dispatch(now)
		next, ok := r.core.nextAt()
		over := r.active == 0 && r.cfg.Leases == nil
		r.prepare(jobs)
		for _, j := range jobs {
			r.wg.Add(1)
			go r.work(j)
		}
		r.smu.Unlock()
		if over {
			break
		}
		var stop func() bool
		if ok {
			stop = r.cfg.Clock.AfterFunc(next.Sub(r.cfg.Clock.Now()), r.poke)
			if !r.cfg.Clock.Now().Before(next) {
				r.poke() // the clock moved past it meanwhile
			}
		}
		select {
		case <-ctx.Done():
		case <-r.kick:
		}
		if stop != nil {
			stop()
		}
		if ctx.Err() != nil {
			break
		}
	}
	<-leasesDone
	stopMinds()
	r.wg.Wait()
	return r.shutdown()
}

// shutdownStoppers is how many agents the shutdown stops and saves at
// once.
const shutdownStoppers = 64

// shutdown stops and saves every agent still running and releases the
// leases.
func (r *Runner) shutdown() error {
	var ids []string
	var errs []error
	r.smu.Lock()
	var left []*node
	for _, a := range r.wired() {
		n := r.node(a.ID())
		if n == nil || n.finished || n.lost {
			continue
		}
		n.finished = true
		r.active--
		r.core.remove(&n.e)
		left = append(left, n)
	}
	errs = append(errs, r.errs...)
	r.errs = nil
	r.smu.Unlock()
	// The agents are stopped (and saved) by several goroutines at once, so
	// that a store with group commit writes their final saves together:
	// one after another, thousands of final saves would take longer than
	// a lease lasts without renewal.
	stopErrs := make([]error, len(left))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(left), shutdownStoppers) {
		wg.Go(func() {
			for i := range next {
				stopErrs[i] = left[i].a.Stop()
			}
		})
	}
	for i := range left {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, n := range left {
		if err := stopErrs[i]; err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.a.ID(), err))
		}
		if _, ok := n.a.Lease(); ok {
			ids = append(ids, n.a.ID())
		}
	}
	if r.cfg.Leases != nil && len(ids) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
		defer cancel()
		if err := r.cfg.Leases.Release(ctx, ids...); err != nil {
			errs = append(errs, fmt.Errorf("existence: releasing %d leases: %w", len(ids), err))
		}
	}
	return errors.Join(errs...)
}

// poke wakes the real-time driver.
func (r *Runner) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// work runs one dispatched cycle on its own goroutine (real time).
//
// When its cycle ends, the goroutine takes the next queued cycle itself, if
// any, and exits when there is none: a goroutine exists only while there
// is work, and under load the goroutines (and their grown stacks) are
// reused.
func (r *Runner) work(j dispatched) {
	defer r.wg.Done()
	for {
		n := j.e.node
		r.tick(n, j, false)
		j.cancel() // a host message arriving now cancels nothing left
		next := r.finish(n, j, r.cfg.Clock.Now(), true)
		// The driver re-arms its timer: the agent's next heartbeat is
		// back in the timer heap (out of it while the cycle ran).
		r.poke()
		if len(next) == 0 {
			return
		}
		for _, o := range next[1:] {
			r.wg.Add(1)
			go r.work(o)
		}
		j = next[0]
	}
}

// prepare gives each dispatched cycle its context; r.smu must be held.
func (r *Runner) prepare(jobs []dispatched) {
	for i := range jobs {
		n := jobs[i].e.node
		jobs[i].ctx, jobs[i].cancel = context.WithCancel(n.ctx)
		c := jobs[i]
		n.cycle = &c
	}
}

// clockKey carries the agent's clock to its model (see [ClockFrom]).
type clockKey struct{}

// ClockFrom returns the clock of the agent whose cycle ctx belongs to, or
// nil. A simulated model (existence/simulate) uses it to take virtual
// time: under
// [Runner.RunVirtual], a model that calls Advance(latency) on that clock
// (a [clock.Virtual]) keeps the worker busy
// for that long in virtual time.
func ClockFrom(ctx context.Context) clock.Clock {
	c, _ := ctx.Value(clockKey{}).(clock.Clock)
	return c
}

// tick runs the dispatched cycle: the agent's Tick, then the snapshot
// updates. When inline (the virtual driver), it waits for the goal's
// executor so that nothing runs concurrently.
func (r *Runner) tick(n *node, j dispatched, inline bool) (end time.Time) {
	n.round.Add(1)
	// Counted once the cycle ends: the k-th cycle of a sweep of n sees
	// at most k-1 of them, so every cycle of the sweep shows its window.
	defer r.dispatched.Add(1)
	n.woken.Store(false)
	if now := n.a.Clock().Now(); !inline && now.After(j.start) {
		// Lateness counts until the cycle actually starts: on a busy
		// machine a worker goroutine may wait for a CPU after its
		// dispatch.
		j.start = now
	}
	base := j.ctx
	if base == nil {
		base = n.ctx
	}
	ctx := wire.WithDispatch(base, &wire.Dispatch{Lane: wire.Lane(j.lane), Lateness: j.lateness(), Coalesced: j.coalesced})
	ctx = context.WithValue(ctx, clockKey{}, n.a.Clock())
	if err := n.a.Tick(ctx); err != nil && base.Err() == nil {
		n.a.Log().Warn("tick failed", "err", err)
	}
	end = n.a.Clock().Now()
	if inline {
		_ = n.a.WaitGoal(n.ctx) // fails only when n.ctx ends, which Run reports
	}
	r.publish(n)
	return end
}

// publish updates what the rest of the runner knows of n after a cycle:
// its peer summary, its lane hints.
func (r *Runner) publish(n *node) {
	p := n.a.Peek()
	n.host.Store(p.Host)
	n.crisis.Store(p.Crisis)
	r.book.update(n.a.ID(), p.Name, p.Narrative, p.Crisis)
}

// finish frees the worker of a cycle that ended at end, and finishes an
// agent that reached its MaxCycles. With takeNext (the real-time driver's
// workers), it also takes the cycles now due for the freed worker, in the
// same critical section: a freed worker never sits idle while cycles
// queue, which on a busy machine (every hand-off of r.smu costing a
// scheduling delay, thousands of workers sharing it) wasted more of the
// lane than its headroom.
func (r *Runner) finish(n *node, j dispatched, end time.Time, takeNext bool) (next []dispatched) {
	a := n.a
	done, goal := a.Reached()
	ff := a.StoppedErr() // Config.FailFast: this agent stops, the others go on
	r.smu.Lock()
	r.core.done(&n.e, j.lane, end)
	r.cycles[j.lane]++
	stop := (done || ff != nil) && !n.finished && !n.lost
	if stop && ff != nil {
		r.errs = append(r.errs, ff)
	}
	if stop {
		n.finished = true
		r.active--
		r.core.remove(&n.e)
	}
	if takeNext {
		if n.cycle != nil && n.cycle.ctx == j.ctx {
			n.cycle = nil
		}
		if r.runCtx.Err() == nil {
			// Heartbeats fall due here too, not only when the driver
			// loop runs: on a busy machine the driver is one goroutine
			// among thousands, and a heartbeat it has not seen yet
			// would wait behind it while this worker sits idle.
			now := r.cfg.Clock.Now()
			r.core.advance(now)
			next = r.core.dispatch(now)
			r.prepare(next)
		}
	}
	r.smu.Unlock()
	if stop {
		if err := a.Stop(); err != nil {
			r.smu.Lock()
			r.errs = append(r.errs, fmt.Errorf("%s: %w", a.ID(), err))
			r.smu.Unlock()
		}
	}
	if goal != nil && !r.virtual {
		// The last goal is running: tick as soon as it returns, so that
		// Run can finish without waiting for a heartbeat.
		go func() {
			select {
			case <-goal:
				r.wakeNode(n)
			case <-n.ctx.Done():
			}
		}()
	}
	return next
}

// wakeNode asks for a priority cycle of n now (a host message). In real
// time, an autonomy cycle of n already running is preempted: its model call
// is cancelled and it chooses nothing, so that the person is answered within
// one model call.
func (r *Runner) wakeNode(n *node) {
	n.host.Store(true)
	r.smu.Lock()
	if r.started && !n.finished && !n.lost {
		r.core.wake(&n.e, r.cfg.Clock.Now())
		if c := n.cycle; c != nil && c.lane == LaneAutonomy && !r.virtual {
			c.cancel()
		}
	}
	r.smu.Unlock()
	r.poke()
}

// Wake runs the agent's next cycle in the priority lane now, ahead of the
// autonomy backlog: call it when a task was assigned to the agent,
// or for anything else it should answer at once. Errors: an unknown id.
func (r *Runner) Wake(id string) error {
	n := r.node(id)
	if n == nil {
		return fmt.Errorf("existence: no agent %q", id)
	}
	n.woken.Store(true)
	r.smu.Lock()
	if r.started && !n.finished && !n.lost {
		r.core.wake(&n.e, r.cfg.Clock.Now())
	}
	r.smu.Unlock()
	r.poke()
	return nil
}

// Close closes every agent (see [Agent.Close]) and releases their locks.
func (r *Runner) Close() error {
	var errs []error
	for _, a := range r.Agents() {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}

// SayAsHost delivers a host message to the agents with the given ids, or to every
// agent when none is given; each one's next cycle runs in the priority lane.
// Unknown ids are an error; the message is still delivered to the known
// ones.
func (r *Runner) SayAsHost(ctx context.Context, text string, to ...string) error {
	var errs []error
	targets := r.Agents()
	if len(to) > 0 {
		targets = targets[:0]
		for _, id := range to {
			a := r.Agent(id)
			if a == nil {
				errs = append(errs, fmt.Errorf("existence: no agent %q", id))
				continue
			}
			targets = append(targets, a)
		}
	}
	for _, a := range targets {
		errs = append(errs, a.SayAsHost(ctx, text))
	}
	return errors.Join(errs...)
}

// peers returns what agent self is shown of the others (spec §2 row 10,
// §8): at most MaxPeersShown, chosen as [Runner] describes, and how
// many others are not shown.
func (r *Runner) peers(self string) ([]prompt.Peer, int) {
	if r.cfg.SharedPeers {
		return r.book.choose(self, r.dispatched.Load(), true)
	}
	var round uint64
	if n := r.node(self); n != nil {
		round = n.round.Load()
	}
	return r.book.choose(self, round, false)
}

// broadcast delivers a crisis message from one agent to the peers shown in
// its last prompt (at most MaxPeersShown; every other agent when they all
// fit).
func (r *Runner) broadcast(from wire.Agent, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	for _, id := range r.book.shownTo(from.ID()) {
		n := r.node(id)
		if n == nil || n.a.ID() == from.ID() {
			continue
		}
		if err := n.a.DeliverToInbox(ctx, identity.AgentMessage{From: from.Name(), Text: text}); err != nil {
			from.Emit(event.Event{Kind: event.Error, Text: "delivering a message to " + id, Err: err})
			continue
		}
		r.book.messaged(id, from.ID())
		from.Emit(event.Event{Kind: event.Message, Direction: "sent", Text: text, Peer: n.a.Name()})
	}
}

// Send delivers a message from one agent to another agent's inbox
// (spec §2 row 15); the recipient then shows the sender first among its
// peers. Errors: unknown ids, or the save error.
func (r *Runner) Send(ctx context.Context, fromID, toID, text string) error {
	from, to := r.Agent(fromID), r.Agent(toID)
	if from == nil || to == nil {
		return fmt.Errorf("existence: no agent %q or %q", fromID, toID)
	}
	if err := to.DeliverToInbox(ctx, identity.AgentMessage{From: from.Name(), Text: text}); err != nil {
		return err
	}
	r.book.messaged(toID, fromID)
	return nil
}

// drop stops an agent whose lease was lost: no final save (another process
// owns it now), its goal cancelled, its store lock released, and an
// [event.LeaseLost].
func (r *Runner) drop(id string) {
	n := r.node(id)
	if n == nil {
		return
	}
	r.smu.Lock()
	if n.lost {
		r.smu.Unlock()
		return
	}
	n.lost = true
	if !n.finished {
		n.finished = true
		r.active--
	}
	r.core.remove(&n.e)
	if n.cancel != nil {
		n.cancel()
	}
	r.smu.Unlock()
	r.mu.Lock()
	delete(r.byID, id)
	r.agents = slices.DeleteFunc(r.agents, func(a wire.Agent) bool { return a.ID() == id })
	r.mu.Unlock()
	r.book.remove(id)
	n.a.Abandon()
	n.a.Emit(event.Event{Kind: event.LeaseLost, Text: "lease lost: another process runs this agent now; stopped without saving"})
}

// leaseLoop claims and renews leases every RenewEvery until ctx ends, and
// waits for the adoption of the leases it claimed.
//
// The claimed agents are adopted (built and loaded) by a goroutine of
// their own, so that loading thousands of states never holds up the next
// renewal: a lease round is a renewal and a claim, each one statement.
func (r *Runner) leaseLoop(ctx context.Context) {
	ticks, stop := r.cfg.Clock.NewTicker(r.cfg.RenewEvery)
	defer stop()
	var adopting sync.WaitGroup
	defer adopting.Wait()
	var pending atomic.Int64 // leases claimed and not yet adopted
	for {
		r.leaseRound(ctx, &adopting, &pending)
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// leaseRound renews the leases held, reports the late renewals, drops the
// lost agents, and claims new agents up to MaxAgents, unless the agents
// claimed in an earlier round are still being adopted.
func (r *Runner) leaseRound(ctx context.Context, adopting *sync.WaitGroup, pending *atomic.Int64) {
	lost, err := r.cfg.Leases.Renew(ctx)
	if err != nil && ctx.Err() == nil {
		r.cfg.Logger.Error("renewing leases failed", "err", err)
	}
	r.reportLate()
	for _, id := range lost {
		r.drop(id)
	}
	want := r.cfg.MaxAgents - r.Len()
	if want <= 0 || pending.Load() > 0 || ctx.Err() != nil {
		return
	}
	leases, err := r.cfg.Leases.Claim(ctx, want)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("claiming agents failed", "err", err)
		}
		return
	}
	if len(leases) == 0 {
		return
	}
	pending.Store(int64(len(leases)))
	adopting.Go(func() {
		for _, l := range leases {
			err := ctx.Err()
			if err == nil {
				err = r.adopt(ctx, l)
				if err != nil && ctx.Err() == nil {
					r.cfg.Logger.Error("starting a claimed agent failed", "agent", l.AgentID, "err", err)
				}
			}
			if err != nil {
				if rerr := r.cfg.Leases.Release(context.WithoutCancel(ctx), l.AgentID); rerr != nil {
					r.cfg.Logger.Error("releasing a lease failed", "agent", l.AgentID, "err", rerr)
				}
			}
			pending.Add(-1)
		}
	})
}

// reportLate emits an [event.LeaseLate] for each late renewal the lease
// manager reports ([lease.LateReporter]) of an agent this runner runs.
func (r *Runner) reportLate() {
	lr, ok := r.cfg.Leases.(lease.LateReporter)
	if !ok {
		return
	}
	for _, l := range lr.LateRenewals() {
		n := r.node(l.AgentID)
		if n == nil {
			continue
		}
		if cur, ok := n.a.Lease(); !ok || cur.Epoch != l.Epoch {
			continue // a report about an earlier lease of the agent
		}
		what := fmt.Sprintf("renewed with %.1f s of its %.0f s left", l.Left.Seconds(), l.TTL.Seconds())
		if !l.Renewed {
			what = fmt.Sprintf("not renewed (the renewal failed), %.1f s of its %.0f s left", l.Left.Seconds(), l.TTL.Seconds())
		}
		n.a.Emit(event.Event{Kind: event.LeaseLate,
			Text:  fmt.Sprintf("lease late: %s, under the %.1f s alarm margin; renewals are falling behind and the lease is lost if they fall behind by the rest", what, l.Margin.Seconds()),
			Lease: &event.LeaseStats{Epoch: l.Epoch, Left: l.Left, TTL: l.TTL, Margin: l.Margin, Renewed: l.Renewed}})
	}
}

// adopt builds and adds the agent of a claimed lease.
func (r *Runner) adopt(ctx context.Context, l lease.Lease) error {
	id, b, err := r.cfg.NewAgent(ctx, l)
	if err != nil {
		return err
	}
	if id != l.AgentID {
		return fmt.Errorf("existence: NewAgent built %q for the lease of %q", id, l.AgentID)
	}
	_, err = r.add(ctx, id, b, &l)
	return err
}

// inflight is a cycle running in virtual time, until end.
type inflight struct {
	end time.Time
	seq uint64
	j   dispatched
}

// inflightBefore orders cycles in flight: by end, then start order.
func inflightBefore(a, b inflight) bool {
	if !a.end.Equal(b.end) {
		return a.end.Before(b.end)
	}
	return a.seq < b.seq
}
