package simulate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/heap"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// DefaultStart is the virtual instant a run starts at unless
// [Config].Start is set.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// AgentSpec describes one simulated agent.
type AgentSpec struct {
	// ID is the agent id (see identity.ValidateID), e.g. "scout".
	ID string
	// Name is the display name, e.g. "Cedar".
	Name string
	// Role selects the goals the [Stochastic] policy draws from: one of
	// the trio's roles (trio.Scout, trio.Analyst, trio.Builder); when
	// empty, the first domain is taken as the role, and any other value
	// draws generic goals.
	Role string
	// Traits and Domains seed a new identity ([existence.Config]).
	Traits  []string
	Domains []string
}

// Trio returns the reference system's three agents (spec §1) from the
// roster of package existence/trio: Cedar (scout), Cipher (analyst) and
// Vault (builder), with the roster's traits and domains.
func Trio() []AgentSpec {
	roster := trio.Members()
	out := make([]AgentSpec, len(roster))
	for i, m := range roster {
		out[i] = AgentSpec{ID: m.ID, Name: m.Name, Role: m.Role, Traits: m.Traits, Domains: m.Domains}
	}
	return out
}

// Agents returns n agents: the trio first, then more scouts, analysts and
// builders in turn (the trio's roles, traits and domains), with ids
// "agent-0004", "agent-0005", ... and names "Agent 4", "Agent 5", ...
func Agents(n int) []AgentSpec {
	trio := Trio()
	out := make([]AgentSpec, 0, max(n, 0))
	for i := range n {
		if i < len(trio) {
			out = append(out, trio[i])
			continue
		}
		m := trio[i%3]
		out = append(out, AgentSpec{ID: fmt.Sprintf("agent-%04d", i+1), Name: fmt.Sprintf("Agent %d", i+1), Role: m.Role, Traits: m.Traits, Domains: m.Domains})
	}
	return out
}

// Config configures [Run]. Only Duration is required.
type Config struct {
	// Agents are the agents to run (1 to 10,000 or more); default the
	// trio ([Agents](3)).
	Agents []AgentSpec
	// GroupSize, under [Heartbeats], is how many agents share one
	// [runner.Runner] as peers (their "YOUR PEERS" sections and crisis
	// messages); default 3, so that 10,000 agents are 3,334 colonies.
	// Under [Scheduler] all agents are in one runner, whose peers section
	// shows at most 8 of them (runner.DefaultMaxPeersShown).
	GroupSize int
	// Start is the virtual start time; default [DefaultStart].
	Start time.Time
	// Duration is the simulated time to run, e.g. 30×24 h (required).
	Duration time.Duration
	// Seed seeds every random draw. The same Config gives the same
	// trajectory bytes on every run.
	Seed uint64
	// Heartbeat is the tick interval; default 6 s (spec §1).
	Heartbeat time.Duration
	// Model makes each agent's model; default [Stochastic]{}.
	Model ModelPolicy
	// Executor decides how goals are pursued; default [Report]{} (the
	// model reports each goal's outcome and duration).
	Executor ExecutorPolicy
	// Driver chooses how the agents are driven: [Scheduler] (the default)
	// or [Heartbeats].
	Driver Driver
	// ModelSlots is how many existence cycles' model calls run at once
	// across all agents (a model server's capacity); 0 means no limit.
	// Under [Scheduler] it is the runner's AutonomyWorkers (and, when 0,
	// PriorityWorkers too); under [Heartbeats] a call waits in simulated
	// time for a free slot, first come first served.
	ModelSlots int
	// EveryHeartbeat, under [Heartbeats], makes every agent tick at every
	// heartbeat. By default quiet heartbeats (a goal is being pursued and
	// the previous heartbeat changed nothing) are skipped: the agent's
	// next tick is the first heartbeat at or after the goal's end.
	// Escalation is linear in elapsed time and the assessment depends
	// only on the goal history, so skipping changes nothing but
	// floating-point rounding. A goal that may outlast the goal-span
	// stall rule ("goal_span", see MaxGoalDuration) is
	// ticked at every heartbeat, since that rule is checked at ticks.
	EveryHeartbeat bool
	// GoalTimeout bounds one goal in simulated time; a pursuit that takes
	// longer ends ABANDONED at the timeout. Default
	// [existence.DefaultGoalTimeout].
	GoalTimeout time.Duration
	// MaxGoalDuration is every agent's [existence.Config].Timing.MaxGoalDuration
	// (the goal-span stall rule, "goal_span"): a goal still
	// pursued this long, in simulated time, after it started is abandoned
	// at the next heartbeat. 0 means [existence.DefaultMaxGoalDuration]
	// (2 minutes), negative disables the rule.
	MaxGoalDuration time.Duration
	// Store holds the agents' states. States already in it (for example
	// imported with hollow into a memstore.Store) are
	// loaded and go on from where they were, and every heartbeat saves
	// them. Default: none is kept (saves are dropped, which spares a deep
	// copy per heartbeat); [Result] and the trajectory say what happened.
	Store identity.Store
	// Prompt assembles the agents' prompts; default [Prompt]().
	Prompt *prompt.Assembler
	// Workspace is the directory of the [ToolLoop] executor's workspace;
	// default a temporary directory, removed at the end.
	Workspace string
	// Trajectory receives the trajectory (JSON Lines of [Row]); nil
	// writes none.
	Trajectory io.Writer
	// Observer, when set, receives every event of every agent, with
	// times by the virtual clocks.
	Observer event.Observer
	// Memory gives every agent a long-term memory (package memory), so
	// that the tool loop ([ToolLoop]) stores its outcomes and recalls
	// them before each goal: kept in Store when it holds memories (every
	// SDK store does), else in an in-process store; embedded by Embedder;
	// on the agent's virtual clock. With the default Prompt the prompt
	// gets the memories section (prompt.Memories). [Result].Memory counts
	// what the memories did.
	Memory bool
	// Embedder embeds the memories; nil means llmtest's deterministic
	// fake (768 dimensions, no network).
	Embedder llm.Embedder
	// World, when set, feeds the agents slot updates over simulated time
	// ([Script], [RandomWorld]): drawn from the seed, so that a month of
	// a world replays the same from the same Config. The agents share a
	// board in memory; [Prompt] shows the slots. It needs the [Scheduler]
	// driver, whose scheduler handles notify_user as in real time.
	World World
}

// Driver is how [Run] drives the agents in virtual time.
type Driver int

const (
	// Scheduler drives all agents with one [runner.Runner]'s virtual
	// driver ([runner.Runner.RunVirtual]): the runner's
	// scheduler (heartbeat heap, autonomy and priority lanes, coalescing,
	// staggered start) decides when each agent's cycle runs, a cycle keeps
	// its worker for its model call's simulated latency, and [Config].
	// ModelSlots is the number of workers. Executors run to completion
	// within their cycle's dispatch, so a goal's simulated duration is
	// not waited for: the outcome is recorded at the agent's next
	// heartbeat.
	Scheduler Driver = iota
	// Heartbeats drives each agent with [existence.Agent.Tick] on its own
	// heartbeat, as [existence.Agent.Run] would with a time.Ticker, and
	// holds each goal until its simulated duration has passed (goals take
	// 15–60 s, spec §1). Agents are in runners of [Config].GroupSize
	// peers; model calls share [Config].ModelSlots.
	Heartbeats
)

// String returns "scheduler" or "heartbeats".
func (d Driver) String() string {
	if d == Heartbeats {
		return "heartbeats"
	}
	return "scheduler"
}

// Prompt returns the default assembler of simulated agents: a short world
// of a shared workspace, the default situation, and ranked goals after
// spec §7, with the slots section after the discoveries (absent without
// slots: [Config].World).
func Prompt() *prompt.Assembler {
	a := prompt.New(prompt.Config{
		World:     "You share a workspace directory of files with your peers: what you write, they can read.\nYou act on the workspace through file tools: read, write, append, list and delete.",
		Situation: prompt.DefaultSituation,
		Goals: []string{
			"read files in the workspace and improve on what is there",
			"build a new file or tool that a peer can use",
			"write a design note, then build what it describes",
			"evaluate your own work with evidence: paths and what they contain",
		},
		Prohibitions: "goals about hardware you do not have",
	})
	if err := a.InsertAfter(prompt.SectionDiscoveries, prompt.SlotsSection()); err != nil {
		panic(err) // a fresh assembler has the discoveries and no slots section
	}
	return a
}

// Result is what a run did.
type Result struct {
	// Start and End bound the simulated time.
	Start, End time.Time
	// Agents has one entry per agent, in [Config].Agents order.
	Agents []AgentResult
	// Memory sums the agents' memory counters ([Config].Memory): stored,
	// merged, evicted, recalls.
	Memory memory.Counters
	// SharedUpdates counts the slot updates of [Config].World posted to
	// the shared board; Triggers the cycles they asked for with
	// notify_user (runner.Stats.Triggers, before coalescing).
	SharedUpdates int
	Triggers      int64
	// Ticks is the number of heartbeats run (dispatches under
	// [Scheduler]); Skipped the number of heartbeats that ran nothing:
	// quiet ones skipped under [Heartbeats] (see [Config].EveryHeartbeat),
	// or coalesced into a cycle queued or running under [Scheduler]; Rows
	// the number of trajectory rows written.
	Ticks, Skipped, Rows int
}

// AgentResult sums up one agent's run.
type AgentResult struct {
	ID, Name string
	// InLevel is the simulated time spent at each level, indexed by
	// [suffering.Level] (none, prominent, constrained, dominant, crisis),
	// computed exactly from the closed form between heartbeats.
	InLevel [5]time.Duration
	// PeakLoad is the highest load reached.
	PeakLoad float64
	// Crises counts cycles run in crisis; Resets the forced crisis
	// resets (spec §4).
	Crises, Resets int
	// Done, Failed and Abandoned count the goals that ended; Active is 1
	// when a goal was still being pursued at the end.
	Done, Failed, Abandoned, Active int
	// Cycles, Fallbacks and ModelCalls count existence cycles, spec §6
	// fallback goals and model attempts; Added the stressors added.
	Cycles, Fallbacks, ModelCalls, Added int
	// Ticks counts the heartbeats run; MaxLate is the latest a heartbeat
	// ran after its scheduled time.
	Ticks   int
	MaxLate time.Duration
	// Errors counts the error events (such as failed saves).
	Errors int
	// SlotUpdates counts the slot updates of [Config].World posted to
	// the agent's own board.
	SlotUpdates int
	// Usage is the tokens the agent's model calls used (its
	// [existence.Status].Usage: the model's counts, else estimates) and
	// UsageByModel the same per model.
	Usage        existence.Usage
	UsageByModel []existence.ModelUsage
}

// ErrConfig: the configuration cannot be run.
var ErrConfig = errors.New("simulate: bad config")

// Run simulates cfg.Agents for cfg.Duration of virtual time on the real
// agent code: each agent is an [existence.Agent] in an
// [runner.Runner] of its group, with its own manual clock
// ([existencetest.Clock]); the simulation calls [existence.Agent.Tick] at
// each heartbeat, in virtual-time order (ties by agent position), advancing
// the clock event by event. It never sleeps.
//
// Simulated time moves by:
//
//   - heartbeats, every [Config].Heartbeat per agent; the agents' first
//     heartbeats are spread evenly over the first interval;
//   - model calls: a cycle's call takes the latency its model reports (and
//     any wait for a model slot), so the goal starts that much later and a
//     call longer than the heartbeat makes the next heartbeat late, as a
//     time.Ticker would;
//   - goals: a goal ends when its pursuit's simulated duration has passed;
//     the agent records the outcome at its next heartbeat.
//
// Errors: [ErrConfig] for an unusable configuration, errors of the policies
// and of [runner.New] and Runner.Add before the start, an error
// writing the trajectory, and ctx's error (with the result so far).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Duration <= 0 {
		return nil, fmt.Errorf("%w: Duration must be positive", ErrConfig)
	}
	if cfg.Agents == nil {
		cfg.Agents = Agents(3)
	}
	if len(cfg.Agents) == 0 {
		return nil, fmt.Errorf("%w: no agents", ErrConfig)
	}
	if cfg.GroupSize <= 0 {
		cfg.GroupSize = 3
	}
	if cfg.Start.IsZero() {
		cfg.Start = DefaultStart
	}
	cfg.Start = cfg.Start.UTC()
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = existence.DefaultHeartbeat
	}
	if cfg.Model == nil {
		cfg.Model = Stochastic{}
	}
	if cfg.Executor == nil {
		cfg.Executor = Report{}
	}
	if cfg.GoalTimeout <= 0 {
		cfg.GoalTimeout = existence.DefaultGoalTimeout
	}
	if cfg.Store == nil {
		cfg.Store = discardStore{}
	}
	if cfg.Prompt == nil {
		cfg.Prompt = Prompt()
		if cfg.Memory {
			if err := cfg.Prompt.InsertAfter(prompt.SectionLastOutcome, prompt.Memories()); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Memory && cfg.Embedder == nil {
		cfg.Embedder = llmtest.NewFakeEmbedder("", 0)
	}
	if cfg.ModelSlots < 0 {
		return nil, fmt.Errorf("%w: ModelSlots is negative", ErrConfig)
	}
	var updates []SlotUpdate
	if cfg.World != nil {
		if cfg.Driver != Scheduler {
			return nil, fmt.Errorf("%w: a World needs the Scheduler driver", ErrConfig)
		}
		var err error
		if updates, err = cfg.World.Updates(cfg.Agents, cfg.Start, cfg.Duration, derive(cfg.Seed, worldStream)); err != nil {
			return nil, err
		}
		slices.SortStableFunc(updates, func(a, b SlotUpdate) int { return cmp.Compare(a.At, b.At) })
	}
	env := Env{Workspace: cfg.Workspace}
	if _, ok := cfg.Executor.(ToolLoop); ok && env.Workspace == "" {
		dir, err := os.MkdirTemp("", "simulate-workspace-")
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
		defer os.RemoveAll(dir)
		env.Workspace = dir
	}

	s := &sim{cfg: cfg, end: cfg.Start.Add(cfg.Duration), byID: make(map[string]*simAgent, len(cfg.Agents)), sched: cfg.Driver == Scheduler}
	s.queue.Less = nextBefore
	if cfg.ModelSlots > 0 && !s.sched {
		s.server = &server{free: make([]time.Time, cfg.ModelSlots)}
	}
	if cfg.Trajectory != nil {
		s.enc = json.NewEncoder(cfg.Trajectory)
		s.enc.SetEscapeHTML(false)
	}
	defer s.close()
	if err := s.setup(ctx, env); err != nil {
		return nil, err
	}
	var err error
	if s.sched {
		err = s.runScheduler(ctx, updates)
	} else {
		err = s.loop(ctx)
	}
	res := s.result()
	return res, err
}

// sim is one run.
type sim struct {
	cfg     Config
	sched   bool      // the Scheduler driver
	open    *simAgent // Scheduler: the agent whose dispatch is being recorded
	openT   time.Time // its dispatch time
	clock   *existencetest.Clock
	end     time.Time
	server  *server
	enc     *json.Encoder
	runners []*runner.Runner
	agents  []*simAgent
	byID    map[string]*simAgent
	queue   heap.Heap[*simAgent] // by next heartbeat, then position

	mu  sync.Mutex // guards cur and the current agent's event buffer
	cur *simAgent

	ticks, skipped, rows int
	sharedUpdates        int
	werr                 error
	mstore               *memory.MemoryStore // Config.Memory without a store that holds memories
}

// simAgent is one agent and its bookkeeping.
type simAgent struct {
	idx   int
	spec  AgentSpec
	agent *existence.Agent
	clock *clock.Virtual // under [Scheduler], its OnSet tells the recorder when the virtual driver dispatches the agent
	exec  *simExec
	mem   *memory.Memory // Config.Memory: the agent's long-term memory

	first     time.Time // first scheduled heartbeat
	sched     time.Time // scheduled time of the next heartbeat
	next      time.Time // when the next heartbeat runs (≥ sched)
	ticked    bool
	pending   bool      // a pursuit is held until goalDone
	goalDone  time.Time // when the pursuit ends
	goalStart time.Time // the heartbeat that started the pursuit
	goalN     int
	execLat   time.Duration // simulated latency of the pursuit's model calls
	tickLat   time.Duration // simulated latency of this heartbeat's calls
	evs       []event.Event
	snap      []suffering.Stressor // active stressors after the last row
	snapT     time.Time            // when snap was escalated to
	res       AgentResult
}

func (s *sim) setup(ctx context.Context, env Env) error {
	var rnr *runner.Runner
	quiet := slog.New(slog.DiscardHandler)
	if s.sched {
		s.clock = existencetest.NewClock(s.cfg.Start)
		workers := s.cfg.ModelSlots
		prio := 1
		if workers == 0 {
			workers, prio = len(s.cfg.Agents), len(s.cfg.Agents)
		}
		var board *identity.SharedBoard
		if s.cfg.World != nil {
			board = identity.NewSharedBoard(identity.NewMemoryDocument(identity.SharedSlotsDocument), identity.BoardOptions{Now: s.clock.Now})
		}
		r, err := runner.New(runner.Config{Store: s.cfg.Store, AutonomyWorkers: workers, PriorityWorkers: prio, Clock: s.clock, Heartbeat: s.cfg.Heartbeat, Logger: quiet, SharedSlots: board,
			Observer: s.observe}) // the shared board's events
		if err != nil {
			return err
		}
		rnr = r
		s.runners = append(s.runners, r)
	}
	for i, spec := range s.cfg.Agents {
		if _, dup := s.byID[spec.ID]; dup {
			return fmt.Errorf("%w: agent %q twice", ErrConfig, spec.ID)
		}
		if !s.sched && i%s.cfg.GroupSize == 0 {
			r, err := runner.New(runner.Config{Store: s.cfg.Store, MaxInFlight: s.cfg.GroupSize + 1, Heartbeat: s.cfg.Heartbeat, Logger: quiet})
			if err != nil {
				return err
			}
			rnr = r
			s.runners = append(s.runners, r)
		}
		seed := derive(s.cfg.Seed, uint64(i))
		model, err := s.cfg.Model.Model(spec, derive(seed, 1))
		if err != nil {
			return fmt.Errorf("simulate: model of %s: %w", spec.ID, err)
		}
		pursuer, err := s.cfg.Executor.NewPursuer(spec, derive(seed, 2), env)
		if err != nil {
			return fmt.Errorf("simulate: executor of %s: %w", spec.ID, err)
		}
		first := s.cfg.Start.Add(time.Duration(int64(s.cfg.Heartbeat) * int64(i) / int64(len(s.cfg.Agents))))
		sa := &simAgent{idx: i, spec: spec, clock: clock.NewVirtual(s.cfg.Start), first: first, sched: first, next: first}
		if s.sched {
			sa.clock.OnSet(func(t time.Time) { s.dispatch(sa, t) })
		}
		sa.exec = &simExec{sa: sa, inline: s.sched, pursuer: pursuer, timeout: s.cfg.GoalTimeout, computed: make(chan pursuit, 1), release: make(chan struct{}, 1)}
		s.byID[spec.ID] = sa
		if s.cfg.Memory {
			// One Memory per agent, on the agent's own virtual clock.
			if sa.mem, err = memory.New(memory.Config{Store: s.memoryStore(), Embedder: s.cfg.Embedder, Clock: sa.clock, NoBackfill: true, Logger: quiet}); err != nil {
				return fmt.Errorf("simulate: memory of %s: %w", spec.ID, err)
			}
		}
		a, err := rnr.Add(ctx, existence.Config{
			ID: spec.ID, Name: spec.Name, Traits: spec.Traits, Domains: spec.Domains,
			Model: &timedModel{inner: model, server: s.server, now: sa.clock.Now, advance: func(d time.Duration) { sa.clock.Advance(d); sa.tickLat += d }},
			Calls: existence.CallConfig{
				ExecutorModel: &timedModel{inner: model, server: s.server, now: func() time.Time { return sa.clock.Now().Add(sa.execLat) }, advance: func(d time.Duration) { sa.execLat += d }},
				Retry:         middleware.RetryPolicy{Attempts: 1},
			},
			Prompt:   s.cfg.Prompt,
			Executor: sa.exec,
			Timing: existence.TimingConfig{
				Clock:           sa.clock,
				Heartbeat:       s.cfg.Heartbeat,
				GoalTimeout:     s.cfg.GoalTimeout + time.Hour,
				MaxGoalDuration: s.cfg.MaxGoalDuration,
			},
			Observer: s.observe,
			Logger:   quiet,
			Memory:   existence.MemoryConfig{LongTerm: sa.mem},
		})
		if err != nil {
			return fmt.Errorf("simulate: agent %s: %w", spec.ID, err)
		}
		sa.agent = a
		sa.res = AgentResult{ID: spec.ID, Name: a.Name()}
		s.agents = append(s.agents, sa)
		st := a.State()
		sa.snap, sa.snapT = st.Suffering.Active, s.cfg.Start
		if err := s.write(Row{Kind: RowStart, T: s.cfg.Start, Agent: spec.ID, Name: a.Name(), Load: Num(st.Suffering.Load()), Level: st.Suffering.Level().String(), Stressors: rowsOf(st.Suffering.Active, s.cfg.Start)}); err != nil {
			return err
		}
		s.queue.Push(sa)
	}
	return nil
}

// observe routes the current agent's events to its buffer.
func (s *sim) observe(e event.Event) {
	if s.cfg.Observer != nil {
		s.cfg.Observer(e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.cur
	if s.sched {
		cur = s.open
	}
	if cur != nil && e.AgentID == cur.spec.ID {
		cur.evs = append(cur.evs, e)
	}
}

// runScheduler runs the agents with the runner's virtual driver; the
// agents' clocks tell when each dispatch starts (see simAgent.clock). The
// world's updates are posted at their times, between two steps of the
// driver.
func (s *sim) runScheduler(ctx context.Context, updates []SlotUpdate) error {
	var err error
	for _, u := range updates {
		at := s.cfg.Start.Add(u.At)
		if !at.Before(s.end) {
			break
		}
		if err = s.runners[0].RunVirtual(ctx, at); err != nil {
			break
		}
		if err = s.post(ctx, u, at); err != nil {
			err = fmt.Errorf("simulate: posting slot %s at %v: %w", u.Slot.ID, u.At, err)
			break
		}
	}
	if err == nil {
		err = s.runners[0].RunVirtual(ctx, s.end.Add(-time.Nanosecond))
	}
	if ferr := s.dispatch(nil, time.Time{}); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	return s.finish()
}

// dispatch records the dispatch that ended (if any) and opens the one of
// sa starting at t (none when sa is nil). Under [Scheduler] the virtual
// driver sets an agent's own clock at the start of each of its dispatches,
// which calls it.
func (s *sim) dispatch(sa *simAgent, t time.Time) error {
	s.mu.Lock()
	prev, prevT := s.open, s.openT
	s.open, s.openT = nil, time.Time{}
	s.mu.Unlock()
	if prev != nil {
		s.ticks++
		prev.res.Ticks++
		if evs := prev.evs; len(evs) > 0 {
			var late time.Duration
			for _, e := range evs {
				if e.Kind == event.Cycle && e.Cycle != nil {
					late = e.Cycle.Lateness
					s.skipped += e.Cycle.Coalesced
				}
			}
			prev.res.MaxLate = max(prev.res.MaxLate, late)
			if err := s.record(prev, prevT, late, evs, prev.agent.State()); err != nil && s.werr == nil {
				s.werr = err
			}
		}
	}
	if sa != nil {
		s.mu.Lock()
		s.open, s.openT = sa, t
		sa.evs = sa.evs[:0]
		sa.tickLat = 0
		s.mu.Unlock()
	}
	return s.werr
}

func (s *sim) loop(ctx context.Context) error {
	h := s.cfg.Heartbeat
	for s.queue.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		sa := s.queue.Min()
		t := sa.next
		if !t.Before(s.end) {
			break
		}
		sa.clock.Set(t)
		if sa.pending && !sa.goalDone.After(t) {
			sa.pending = false
			sa.exec.release <- struct{}{}
			if err := sa.agent.WaitGoal(ctx); err != nil {
				return err
			}
		}
		late := t.Sub(sa.sched)
		s.mu.Lock()
		s.cur = sa
		sa.evs = sa.evs[:0]
		s.mu.Unlock()
		sa.tickLat = 0
		err := sa.agent.Tick(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			sa.res.Errors++
		}
		s.ticks++
		sa.res.Ticks++
		sa.res.MaxLate = max(sa.res.MaxLate, late)
		endT := sa.clock.Now()

		started := false
		for _, e := range sa.snapshotEvents(s) {
			if e.Kind == event.GoalChosen {
				started = true
			}
		}
		var st *identity.AgentState
		if !sa.ticked && !started {
			st = sa.agent.State()
			started = st.Identity.ActiveGoal() != nil // resumed from the store
		}
		sa.ticked = true
		if started {
			select {
			case p := <-sa.exec.computed:
				sa.pending, sa.goalDone, sa.goalStart = true, endT.Add(p.d), t
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		evs := sa.snapshotEvents(s)
		quiet := len(evs) == 0
		if !quiet {
			if st == nil || started {
				st = sa.agent.State()
			}
			if err := s.record(sa, t, late, evs, st); err != nil {
				return err
			}
		}

		// The next heartbeat: the first scheduled tick after t (a ticker
		// keeps one pending tick), or, when this one was quiet, the first
		// at or after the goal's end.
		next := sa.first.Add(h * (t.Sub(sa.first)/h + 1))
		if quiet && sa.pending && !s.cfg.EveryHeartbeat && sa.goalDone.After(next) && s.spanSafe(sa, h) {
			k := (sa.goalDone.Sub(sa.first) + h - 1) / h
			skipTo := sa.first.Add(h * k)
			s.skipped += int(skipTo.Sub(next) / h)
			next = skipTo
		}
		sa.sched = next
		sa.next = next
		if endT.After(next) {
			sa.next = endT
		}
		s.queue.Fix(0)
	}
	return s.finish()
}

// spanSafe reports whether the quiet heartbeats of sa's pursuit can be
// skipped without changing the trajectory. The agent's goal-span stall
// rule ("goal_span") abandons a goal at the first tick more
// than [Config].MaxGoalDuration after it started: a pursuit that may run
// that long must tick every heartbeat, as a real agent would, or the rule
// would never fire. One heartbeat of margin keeps the boundary on the safe
// side.
func (s *sim) spanSafe(sa *simAgent, h time.Duration) bool {
	limit := existence.Config{Timing: existence.TimingConfig{MaxGoalDuration: s.cfg.MaxGoalDuration, Heartbeat: h}}.EffectiveMaxGoalDuration()
	if limit == 0 {
		return true // the rule is off
	}
	return !sa.goalDone.After(sa.goalStart.Add(limit - h))
}

// snapshotEvents returns the current agent's buffered events.
func (sa *simAgent) snapshotEvents(s *sim) []event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sa.evs
}

// record writes the row of a heartbeat that changed something and updates
// the agent's sums.
func (s *sim) record(sa *simAgent, t time.Time, late time.Duration, evs []event.Event, st *identity.AgentState) error {
	r := &sa.res
	pre := sevs(sa.snap)
	span := t.Sub(sa.snapT)
	lt := LevelTimes(pre, span)
	for i := range lt {
		r.InLevel[i] += lt[i]
	}
	r.PeakLoad = max(r.PeakLoad, LoadOf(EscalateStressors(pre, span)))

	row := Row{Kind: RowTick, T: t, Sec: secs(t.Sub(s.cfg.Start)), Agent: sa.spec.ID, LateMS: late.Milliseconds(), LatencyMS: sa.tickLat.Milliseconds()}
	active := make([]string, 0, len(sa.snap)+2)
	for _, x := range sa.snap {
		active = append(active, x.Type)
	}
	var fallbackCause string
	fallback := false
	for _, e := range evs {
		switch e.Kind {
		case event.ModelCall:
			row.Calls++
			r.ModelCalls++
		case event.GoalEnded:
			row.Ended = &GoalRow{N: sa.goalN, Status: string(e.GoalStatus), Summary: e.Text}
			switch e.GoalStatus {
			case identity.Done:
				r.Done++
			case identity.Failed:
				r.Failed++
			case identity.Abandoned:
				r.Abandoned++
			}
		case event.Fallback:
			fallback, fallbackCause = true, e.FailureClass
			r.Fallbacks++
		case event.GoalChosen:
			sa.goalN++
			r.Cycles++
			row.Chosen = &GoalRow{N: sa.goalN, Goal: e.Goal, Fallback: fallback, Cause: fallbackCause}
		case event.StressorAdded:
			if e.Stressor != nil {
				row.Added = append(row.Added, Change{Type: e.Stressor.Type, Cause: e.By})
				active = append(active, e.Stressor.Type)
				r.Added++
			}
		case event.StressorResolved:
			if e.Stressor != nil {
				row.Resolved = append(row.Resolved, Change{Type: e.Stressor.Type, Cause: e.By})
				active = remove(active, e.Stressor.Type)
			}
		case event.Crisis:
			row.Crisis = true
			r.Crises++
		case event.CrisisReset:
			row.Reset = len(active)
			for _, typ := range active {
				row.Resolved = append(row.Resolved, Change{Type: typ, Cause: "crisis_reset"})
			}
			active = active[:0]
			r.Resets++
		case event.Error:
			r.Errors++
		}
	}
	if row.Crisis {
		row.CrisisCycles = st.Suffering.CrisisCycles
		if row.Reset > 0 || st.Suffering.CrisisCycles == 0 {
			row.CrisisCycles = suffering.CrisisResetCycles
		}
	}
	sf := &st.Suffering
	row.Load, row.Level, row.Stressors = Num(sf.Load()), sf.Level().String(), rowsOf(sf.Active, s.cfg.Start)
	r.PeakLoad = max(r.PeakLoad, sf.Load())
	sa.snap = sf.Active
	sa.snapT = t
	if !sf.LastEscalated.IsZero() {
		sa.snapT = sf.LastEscalated
	}
	return s.write(row)
}

func remove(xs []string, x string) []string {
	for i, y := range xs {
		if y == x {
			return append(xs[:i], xs[i+1:]...)
		}
	}
	return xs
}

func sevs(active []suffering.Stressor) []Sev {
	out := make([]Sev, len(active))
	for i, st := range active {
		out[i] = Sev{Severity: st.Severity, RatePerDay: st.RatePerDay}
	}
	return out
}

// finish writes every agent's end row.
func (s *sim) finish() error {
	for _, sa := range s.agents {
		r := &sa.res
		pre := sevs(sa.snap)
		span := s.end.Sub(sa.snapT)
		lt := LevelTimes(pre, span)
		for i := range lt {
			r.InLevel[i] += lt[i]
		}
		esc := EscalateStressors(pre, span)
		load := LoadOf(esc)
		r.PeakLoad = max(r.PeakLoad, load)
		if sa.pending {
			r.Active = 1
		}
		active := make([]suffering.Stressor, len(sa.snap))
		for i, st := range sa.snap {
			st.Severity = esc[i].Severity
			active[i] = st
		}
		if err := s.write(Row{Kind: RowEnd, T: s.end, Sec: secs(s.end.Sub(s.cfg.Start)), Agent: sa.spec.ID, Load: Num(load), Level: suffering.LevelOf(load).String(), Stressors: rowsOf(active, s.cfg.Start)}); err != nil {
			return err
		}
	}
	return nil
}

func (s *sim) write(r Row) error {
	if s.enc == nil || s.werr != nil {
		return s.werr
	}
	if r.Stressors == nil {
		r.Stressors = []StressorRow{}
	}
	if err := s.enc.Encode(r); err != nil {
		s.werr = fmt.Errorf("simulate: writing the trajectory: %w", err)
		return s.werr
	}
	s.rows++
	return nil
}

func (s *sim) result() *Result {
	res := &Result{Start: s.cfg.Start, End: s.end, Ticks: s.ticks, Skipped: s.skipped, Rows: s.rows, SharedUpdates: s.sharedUpdates}
	if s.sched && len(s.runners) > 0 {
		res.Triggers = s.runners[0].Stats().Triggers
	}
	for _, sa := range s.agents {
		r := sa.res
		if sa.agent != nil {
			st := sa.agent.Status()
			r.Usage, r.UsageByModel = st.Usage, st.UsageByModel
		}
		res.Agents = append(res.Agents, r)
		if sa.mem != nil {
			c := sa.mem.Counters()
			m := &res.Memory
			m.Stored += c.Stored
			m.Duplicates += c.Duplicates
			m.Pending += c.Pending
			m.Embedded += c.Embedded
			m.BackfillFailures += c.BackfillFailures
			m.Merged += c.Merged
			m.Evicted += c.Evicted
			m.Recalls += c.Recalls
			m.Fallbacks += c.Fallbacks
			m.Forgotten += c.Forgotten
		}
	}
	return res
}

// memoryStore is where the agents' memories go: the run's store when it
// holds memories, else one in-process store for the run.
func (s *sim) memoryStore() memory.Store {
	if ms, ok := s.cfg.Store.(memory.Store); ok {
		return ms
	}
	if s.mstore == nil {
		s.mstore = memory.NewMemoryStore()
	}
	return s.mstore
}

// close stops every agent (a goal still held ends with the run) and closes
// the pursuers that hold resources.
func (s *sim) close() {
	for _, r := range s.runners {
		_ = r.Close()
	}
	for _, sa := range s.agents {
		if c, ok := sa.exec.pursuer.(io.Closer); ok {
			_ = c.Close()
		}
		if sa.mem != nil {
			_ = sa.mem.Close()
		}
	}
}

// discardStore is an [identity.Store] that keeps nothing.
type discardStore struct{}

func (discardStore) Load(context.Context, string) (*identity.AgentState, error) {
	return nil, identity.ErrNotFound
}
func (discardStore) Save(context.Context, *identity.AgentState) error { return nil }
func (discardStore) List(context.Context) ([]string, error)           { return nil, nil }

// simExec is the agent's executor: it runs the policy's pursuit and, under
// [Heartbeats], hands its simulated duration to the driver and returns only
// when the driver releases it at the goal's end in virtual time; under
// [Scheduler] it returns at once.
type simExec struct {
	sa       *simAgent
	inline   bool
	pursuer  Pursuer
	timeout  time.Duration
	computed chan pursuit
	release  chan struct{}
}

type pursuit struct {
	d time.Duration
}

func (x *simExec) Execute(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
	x.sa.execLat = 0
	out, d, err := x.pursuer.Pursue(ctx, a)
	d += x.sa.execLat
	if d > x.timeout && ctx.Err() == nil {
		out, err, d = existence.Outcome{Status: identity.Abandoned, Summary: fmt.Sprintf("goal timed out after %v (simulated)", x.timeout)}, nil, x.timeout
	}
	if x.inline {
		return out, err
	}
	select {
	case x.computed <- pursuit{d: d}:
	case <-ctx.Done():
		return existence.Outcome{Status: identity.Abandoned, Summary: "stopped with the simulation"}, ctx.Err()
	}
	select {
	case <-x.release:
		return out, err
	case <-ctx.Done():
		return existence.Outcome{Status: identity.Abandoned, Summary: "stopped with the simulation"}, ctx.Err()
	}
}

// timedModel advances virtual time by each call's simulated latency and
// any wait for a model slot.
type timedModel struct {
	inner   llm.Model
	server  *server
	now     func() time.Time
	advance func(time.Duration)
}

func (m *timedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := m.inner.Generate(ctx, req)
	lat := latencyOf(resp, err)
	if m.server != nil {
		lat = m.server.reserve(m.now(), lat)
	}
	m.advance(lat)
	return resp, err
}

// server is a simulated model server with a fixed number of slots.
type server struct {
	mu   sync.Mutex
	free []time.Time // when each slot is next free
}

// reserve books the earliest free slot for a call of duration lat arriving
// at t and returns the call's total time, wait included.
func (s *server) reserve(t time.Time, lat time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := 0
	for i := range s.free {
		if s.free[i].Before(s.free[best]) {
			best = i
		}
	}
	start := t
	if s.free[best].After(start) {
		start = s.free[best]
	}
	s.free[best] = start.Add(lat)
	return s.free[best].Sub(t)
}

// nextBefore orders the agents: by next heartbeat, then position.
func nextBefore(a, b *simAgent) bool {
	if !a.next.Equal(b.next) {
		return a.next.Before(b.next)
	}
	return a.idx < b.idx
}

// levelNames are the column names of the levels, by [suffering.Level].
var levelNames = func() []string {
	out := make([]string, 5)
	for l := suffering.LevelNone; l <= suffering.LevelCrisis; l++ {
		out[l] = l.String()
	}
	return out
}()
