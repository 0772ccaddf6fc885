package existence

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

// Defaults of [Config].
const (
	// DefaultHeartbeat is the tick interval (spec §1).
	DefaultHeartbeat = wire.DefaultHeartbeat
	// defaultCycleTimeout bounds one existence cycle's model exchange,
	// retries and repair included.
	defaultCycleTimeout = 10 * time.Minute
	// DefaultGoalTimeout bounds the pursuit of one goal.
	DefaultGoalTimeout = 30 * time.Minute
	// saveTimeout bounds each save the agent makes on its own account:
	// the bookkeeping of a tick (a goal ended, a stressor changed), the
	// end of a cycle and the final save when [Agent.Run], [runner.Runner.Run] or
	// [Agent.Close] stop it. Such a save keeps its context's values but not
	// its cancellation, so that a shutdown, or a host message preempting a
	// cycle, never makes it fail: a clean exit saves and logs no error.
	saveTimeout = 10 * time.Second
	// DefaultMaxTokens bounds the reply of an existence cycle, in tokens:
	// its JSON (action, content, reasoning, updates) needs a few hundred,
	// and an unbounded reply can hold a model server's slot for minutes.
	DefaultMaxTokens = 1000
)

// The spec §6 fallback goal, substituted as if the model had answered when
// the model call fails or its reply cannot be used.
const (
	FallbackContent   = "explore the workspace and build something useful"
	FallbackReasoning = "LLM unavailable — defaulting to productive work"
)

// maxNewStressors is how many of a response's new stressors are added per
// cycle (spec §3).
const maxNewStressors = 2

// Agent is one existence-loop agent: an identity, a suffering state, a
// prompt assembler, a model, a store and an executor. Create it with [New];
// drive it with [Agent.Run], or tick by tick with [Agent.Tick]. All methods
// are safe for concurrent use.
type Agent struct {
	cfg       Config
	wire      wire.Hooks             // from the runner that runs the agent, if any
	subs      wire.Subscribers       // Subscribe
	name      atomic.Pointer[string] // the display name (Name); commissioning may change it
	model     llm.Model              // for existence cycles
	execModel llm.Model              // for executors

	log         *slog.Logger
	unlockStore func() error
	memoryDone  func()    // ends the memory subscription (memory.go)
	started     time.Time // when New ran: the prompt's "Running for", the loop's uptime in this process (spec §2 row 12)

	tickMu sync.Mutex // serialises Tick

	mu    sync.Mutex // guards the fields below
	state *identity.AgentState
	// running is the executing goal, or nil: set with mu held, read
	// without it by WaitGoal, which must not wait for a save in progress.
	running  atomic.Pointer[run]
	cut      []*run // executors cancelled but maybe still returning (see cutLocked)
	cycles   int
	hostSeen int           // host messages already pending when the goal was chosen
	pending  []event.Event // events queued under mu, emitted by unlock

	status statusState // guarded by mu; for Status (status.go)

	wake chan struct{}

	budget       *wire.BudgetState // the agent's own budget, nil for none
	budgetWaits  atomic.Int32      // calls waiting for a budget to refill
	budgetWaited atomic.Int64      // nanoseconds (agent's clock) executor calls waited for a budget, in all
	tracer       trace.Tracer      // nil without Config.TracerProvider
	usage        usageBook

	laneModel     llm.Model                     // for cycles run by the scheduler: model without the limiter
	stepModel     llm.Model                     // for Config.Calls.Cycle: the cycle model without repair
	laneStepModel llm.Model                     // stepModel without the limiter, for cycles run by the scheduler
	wakeHook      atomic.Pointer[func()]        // asks the scheduler for a priority cycle
	prefix        atomic.Pointer[string]        // the last cycle prompt's stable prefix (prompt.LayoutCache), nil for none
	exchange      atomic.Pointer[[]llm.Message] // the last cycle's messages and reply (prompt.LayoutCache), nil for none

	triggerHook atomic.Pointer[func()] // asks the scheduler for a cycle now (a notifying slot)
	notifyAfter bool                   // guarded by mu: a notifying slot arrived during a goal; trigger when it returns
	shared      []slot.Slot            // guarded by mu: the shared board as last read (refreshShared)
	sharedErr   string                 // guarded by mu: the last error reading it, reported once
}

// run is one goal being executed.
type run struct {
	goalID  string
	started time.Time // by the agent's clock, when its executor started
	waited0 int64     // Agent.budgetWaited when it started
	cancel  context.CancelFunc
	done    chan struct{} // closed when the executor returned
	out     Outcome
	err     error
}

// New loads the agent's state from cfg.Store (or creates a new identity when
// none is stored), trims it to its caps (reporting cuts as
// [event.StateTrimmed]) and returns the agent. With a store that can lock,
// it takes the agent's lock; call [Agent.Close] to release it.
//
// Errors: a missing ID, Name or Model; [identity.ErrInvalidID];
// [identity.ErrInvalidName] (a Name with a line break, a bracket, a
// control character, more than 64 characters, ...);
// [identity.ErrLocked] when another process runs the agent; a load error
// such as [identity.ErrCorrupt] (unless FreshOnCorrupt).
func New(ctx context.Context, cfg Config) (*Agent, error) {
	return newAgent(ctx, cfg, wire.Hooks{})
}

// newAgent is [New] with a runner's wiring w.
func newAgent(ctx context.Context, cfg Config, w wire.Hooks) (*Agent, error) {
	if cfg.ID == "" || cfg.Name == "" {
		return nil, errors.New("existence: Config.ID and Config.Name are required")
	}
	if err := identity.ValidateID(cfg.ID); err != nil {
		return nil, err
	}
	if err := identity.ValidateName(cfg.Name); err != nil {
		return nil, fmt.Errorf("existence: Config.Name: %w", err)
	}
	if cfg.Model == nil {
		return nil, errors.New("existence: Config.Model is required")
	}
	if err := cfg.Calls.Budget.Validate(); err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	if cfg.Prompt == nil {
		cfg.Prompt = prompt.New(prompt.Config{Situation: prompt.DefaultSituation})
	}
	if cfg.Executor == nil {
		cfg.Executor = Immediate
	}
	if cfg.Timing.Clock == nil {
		cfg.Timing.Clock = clock.System
	}
	if cfg.Timing.Heartbeat <= 0 {
		cfg.Timing.Heartbeat = DefaultHeartbeat
	}
	if cfg.Timing.CycleTimeout <= 0 {
		cfg.Timing.CycleTimeout = defaultCycleTimeout
	}
	if cfg.Timing.GoalTimeout <= 0 {
		cfg.Timing.GoalTimeout = DefaultGoalTimeout
	}
	if cfg.Timing.CallTimeout <= 0 {
		cfg.Timing.CallTimeout = middleware.DefaultTimeout
	}
	switch {
	case cfg.Calls.MaxTokens < 0:
		return nil, fmt.Errorf("existence: Config.MaxTokens is negative (%d)", cfg.Calls.MaxTokens)
	case cfg.Calls.MaxTokens == 0:
		cfg.Calls.MaxTokens = DefaultMaxTokens
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Memory.MaxSlots <= 0 {
		cfg.Memory.MaxSlots = slot.DefaultMax
	}
	if err := checkMinds(cfg.Minds); err != nil {
		return nil, err
	}
	if cfg.Memory.Working.Enabled {
		if cfg.Memory.Working.MaxBytes < 0 {
			return nil, fmt.Errorf("existence: Config.WorkingMemory.MaxBytes is negative (%d)", cfg.Memory.Working.MaxBytes)
		}
		if cfg.Memory.Working.MaxBytes == 0 {
			cfg.Memory.Working.MaxBytes = DefaultWorkingMemoryBytes
		}
		if err := ensureSection(cfg.Prompt, prompt.WorkingMemorySection(), prompt.SectionDirective, false); err != nil {
			return nil, fmt.Errorf("existence: the working memory section: %w", err)
		}
	}
	a := &Agent{
		cfg:  cfg,
		wire: w,
		log:  cfg.Logger.With("agent", cfg.ID),
		wake: make(chan struct{}, 1),
	}
	a.started = cfg.Timing.Clock.Now()
	a.budget = wire.NewBudgetState(budget.ScopeAgent, cfg.Calls.Budget)
	if cfg.TracerProvider != nil {
		a.tracer = cfg.TracerProvider.Tracer(tracerName)
	}

	if l, ok := cfg.Store.(identity.Locker); ok {
		unlock, err := l.Lock(cfg.ID)
		if err != nil {
			return nil, err
		}
		a.unlockStore = unlock
	}
	st, err := a.load(ctx)
	if err != nil {
		a.release()
		return nil, err
	}
	a.state = st
	name := cmp.Or(st.Identity.Name, cfg.Name)
	a.name.Store(&name)
	if err := a.startCommissioning(); err != nil {
		a.release()
		return nil, err
	}
	a.subscribeMemory()

	if cfg.Calls.ExecutorModel == nil {
		cfg.Calls.ExecutorModel = cfg.Model
	}
	a.buildModels(cfg.Calls.ExecutorModel)
	return a, nil
}

// Lease returns the lease the agent runs under, as it was claimed by a
// [runner.Runner] with [runner.Config].Leases: a fenced store checks its Epoch
// (the fencing token) on every write. ok is false for an agent not run
// under [runner.Config].Leases.
func (a *Agent) Lease() (l lease.Lease, ok bool) {
	if a.wire.Lease == nil {
		return lease.Lease{}, false
	}
	return *a.wire.Lease, true
}

// cutLocked cancels the executing goal without waiting for its executor
// (a host message or a stall ended the goal): the executor is kept in
// a.cut, so that [Agent.stop] waits for it and no event comes after Run
// returns. a.mu must be held.
func (a *Agent) cutLocked() {
	a.cut = slices.DeleteFunc(a.cut, func(r *run) bool {
		select {
		case <-r.done:
			return true
		default:
			return false
		}
	})
	if r := a.running.Load(); r != nil {
		r.cancel()
		a.cut = append(a.cut, r)
		a.running.Store(nil)
	}
}

// halt cancels the executing goal and waits for it and for every executor
// cut before.
func (a *Agent) halt() {
	a.mu.Lock()
	a.cutLocked()
	cut := a.cut
	a.cut = nil
	a.mu.Unlock()
	for _, r := range cut {
		<-r.done
	}
}

// abandon stops the executing goal and releases the store lock without
// saving: the agent's lease was lost and another process owns it.
func (a *Agent) abandon() {
	a.halt()
	if err := a.release(); err != nil {
		a.log.Warn("releasing the store lock failed", "err", err)
	}
}

func (a *Agent) load(ctx context.Context) (*identity.AgentState, error) {
	now := a.cfg.Timing.Clock.Now()
	st, err := a.cfg.Store.Load(ctx, a.cfg.ID)
	switch {
	case err == nil:
	case errors.Is(err, identity.ErrNotFound):
		st = nil
	case errors.Is(err, identity.ErrCorrupt) && a.cfg.FreshOnCorrupt:
		q, ok := a.cfg.Store.(identity.Quarantiner)
		if !ok {
			return nil, fmt.Errorf("existence: %w (the store cannot quarantine it, so no fresh start)", err)
		}
		path, qerr := q.Quarantine(a.cfg.ID)
		if qerr != nil {
			return nil, fmt.Errorf("existence: quarantine after %v: %w", err, qerr)
		}
		a.emit(event.Event{Kind: event.Error, Text: "corrupt state moved aside to " + path + "; starting a fresh identity", Err: err})
		st = nil
	default:
		return nil, err
	}
	if st == nil {
		id := identity.New(a.cfg.ID, a.cfg.Name, now)
		id.Traits, id.Domains = a.cfg.Traits, a.cfg.Domains
		return &identity.AgentState{Identity: id}, nil
	}
	cuts := st.Identity.Enforce(a.cfg.Limits)
	cuts = append(cuts, st.Suffering.Enforce(now)...)
	if len(cuts) > 0 {
		a.emit(event.Event{Kind: event.StateTrimmed, Text: strings.Join(cuts, "; ")})
	}
	if n := len(st.Inbox) - a.cfg.Limits.Inbox; n > 0 {
		st.Inbox = st.Inbox[n:]
		a.emit(event.Event{Kind: event.StateTrimmed, Text: fmt.Sprintf("inbox: dropped the %d oldest messages over the cap of %d", n, a.cfg.Limits.Inbox)})
	}
	if cut := trimSlots(st, a.cfg.Memory.MaxSlots); cut != "" {
		a.emit(event.Event{Kind: event.StateTrimmed, Text: cut})
	}
	return st, nil
}

// ID returns the agent id.
func (a *Agent) ID() string { return a.cfg.ID }

// Name returns the agent's display name: the stored identity's name, which
// may differ from Config.Name for an imported or older identity.
func (a *Agent) Name() string {
	if n := a.name.Load(); n != nil {
		return *n
	}
	return a.cfg.Name
}

// State returns a deep copy of the agent's current state.
func (a *Agent) State() *identity.AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Clone()
}

// Cycles returns the number of existence cycles run since [New].
func (a *Agent) Cycles() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cycles
}

// DeliverToInbox puts a peer message in the agent's inbox (spec §2 row 15) and
// persists it. The inbox keeps the newest Limits.Inbox messages; the next
// existence cycle shows the last 5 and empties it. Unlike [Agent.SayAsHost]
// it interrupts nothing and wakes nothing: the agent reads it when its
// current goal has ended. Only a person's message preempts a goal.
func (a *Agent) DeliverToInbox(ctx context.Context, m identity.AgentMessage) error {
	if m.At.IsZero() {
		m.At = a.cfg.Timing.Clock.Now()
	}
	a.mu.Lock()
	a.state.Inbox = append(a.state.Inbox, m)
	var dropped int
	if n := len(a.state.Inbox) - a.cfg.Limits.Inbox; n > 0 {
		a.state.Inbox = append([]identity.AgentMessage(nil), a.state.Inbox[n:]...)
		dropped = n
	}
	if dropped > 0 {
		a.queue(event.Event{Kind: event.StateTrimmed, Text: fmt.Sprintf("inbox full: dropped the %d oldest messages", dropped)})
	}
	a.queue(event.Event{Kind: event.Message, Direction: "received", Text: m.Text, Peer: m.From})
	err := a.saveLocked(ctx)
	a.unlock()
	return err
}

// SayAsHost delivers a host message (spec §2 row 16, "A PERSON SAID") and persists
// it. It reaches the agent even while it pursues a goal: the next tick
// interrupts the goal (ABANDONED, "interrupted by a host message") and runs
// an existence cycle at once; [Agent.Run] ticks immediately.
func (a *Agent) SayAsHost(ctx context.Context, text string) error {
	m := identity.AgentMessage{From: "host", Text: text, At: a.cfg.Timing.Clock.Now()}
	a.mu.Lock()
	a.state.Host = append(a.state.Host, m)
	notePresence(a.state, m.At)
	if n := len(a.state.Host) - a.cfg.Limits.Inbox; n > 0 {
		a.state.Host = append([]identity.AgentMessage(nil), a.state.Host[n:]...)
	}
	a.queue(event.Event{Kind: event.Message, Direction: "host", Text: text})
	err := a.saveLocked(ctx)
	a.unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	if f := a.wakeHook.Load(); f != nil {
		(*f)() // asks the runner's scheduler for a priority-lane cycle
	}
	return err
}

// WaitGoal blocks until the goal being executed (if any) has returned from
// its executor, or ctx ends. The outcome is recorded at the next tick.
// It does not wait for a save in progress.
func (a *Agent) WaitGoal(ctx context.Context) error {
	r := a.running.Load()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the executing goal (it stays active in the stored state and
// resumes after a restart), saves the state and releases the store lock.
func (a *Agent) Close() error {
	return errors.Join(a.stop(), a.release())
}

func (a *Agent) release() error {
	if a.memoryDone != nil {
		a.memoryDone()
		a.memoryDone = nil
	}
	if a.unlockStore == nil {
		return nil
	}
	u := a.unlockStore
	a.unlockStore = nil
	return u()
}

// saveContext returns the context of a save the agent makes on its own
// account: ctx's values without its cancellation, bounded by saveTimeout
// from now. Create it right before the save.
func saveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
}

// saveLocked persists the state; a.mu must be held.
func (a *Agent) saveLocked(ctx context.Context) error {
	a.state.UpdatedAt = a.cfg.Timing.Clock.Now()
	if err := a.cfg.Store.Save(ctx, a.state); err != nil {
		err = fmt.Errorf("existence: save %s: %w", a.cfg.ID, err)
		a.log.Error("save failed", "err", err)
		a.queue(event.Event{Kind: event.Error, Text: "saving state failed", Err: err})
		return err
	}
	return nil
}

// queue records an event to emit once a.mu is released; a.mu must be held.
func (a *Agent) queue(e event.Event) {
	if e.Time.IsZero() {
		e.Time = a.cfg.Timing.Clock.Now()
	}
	a.pending = append(a.pending, e)
}

// unlock releases a.mu and emits the events queued while it was held, in
// order, so that observers may call back into the agent.
func (a *Agent) unlock() {
	evs := a.pending
	a.pending = nil
	a.mu.Unlock()
	for _, e := range evs {
		a.emit(e)
	}
}

// emit completes e and delivers it to the observer. It must be called
// without a.mu held.
func (a *Agent) emit(e event.Event) {
	if a.cfg.Observer == nil && a.wire.Observer == nil && !a.subs.Any() {
		return
	}
	if e.Time.IsZero() {
		e.Time = a.cfg.Timing.Clock.Now()
	}
	e.AgentID, e.Agent = a.cfg.ID, a.Name()
	if e.Err != nil && e.Error == "" {
		e.Error = e.Err.Error()
	}
	if a.cfg.Observer != nil {
		a.cfg.Observer(e)
	}
	if a.wire.Observer != nil {
		a.wire.Observer(e)
	}
	a.subs.Deliver(e)
}

// onAttempt reports one model attempt: its event, its tokens in the
// usage book and against the budgets, and a context overflow.
func (a *Agent) onAttempt(c *event.ModelCallInfo, err error) {
	a.usage.add(c)
	a.emit(event.Event{Kind: event.ModelCall, Call: c, Err: err})
	a.chargeBudget(c)
	if ce, ok := errors.AsType[*llm.ContextLengthError](err); ok {
		a.emit(event.Event{Kind: event.ContextOverflow, Err: ce, Context: &event.ContextStats{
			Purpose: c.Purpose, Window: ce.Window, Estimated: ce.Prompt, Kept: ce.Kept,
		}})
	}
}

// window returns the model's context window as the cycle's prompt budget:
// the window minus the reply's reserve, the message overhead and a slack
// of 1/64 of the window, counted with the model's calibrated estimator. A model that does not know its
// window, or fails to say, gives none. The lookup (Ollama's /api/show) is
// a network call: it is bounded by CallTimeout, as a model call is, and
// a failure is reported by the cycle's own call to the same server.
//
// It also returns the tools the cycle offers under [prompt.LayoutCache]
// ([ToolOffer]), whose definitions come out of that budget: the offer pays
// only when the executor's first turn continues the cycle, and only while
// the cycle keeps most of its budget for its own prompt, so none is made
// when the definitions would take more than half of it.
func (a *Agent) window(ctx context.Context) (prompt.Budget, []llm.ToolDef) {
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.Timing.CallTimeout, llm.ErrTimeout)
	defer cancel()
	tools := a.toolOffer()
	w, est, err := llm.ContextWindowOf(ctx, a.cfg.Model)
	if err != nil || w <= 0 {
		return prompt.Budget{}, tools
	}
	reserve := ctxwindow.Reserve(&llm.Request{MaxTokens: a.cfg.Calls.MaxTokens}, 0, w)
	// The sections are counted one by one; the request the adapter checks
	// joins them, which the per-section counts can miss by a few tokens:
	// a slack of 1/64 of the window keeps a prompt planned to the budget
	// from being refused by that margin.
	b := prompt.Budget{MaxTokens: max(w-reserve-2*llm.MessageOverhead-w/64, 1), Count: est.Tokens}
	if len(tools) > 0 {
		cost := est.Request(&llm.Request{Tools: tools}) - est.Request(&llm.Request{})
		if cost > b.MaxTokens/2 {
			return b, nil
		}
		b.MaxTokens -= cost
	}
	return b, tools
}

// toolOffer returns the executor's tools ([ToolOffer]) when the prompt
// has the cache layout, whose cycles offer them; nil otherwise.
func (a *Agent) toolOffer() []llm.ToolDef {
	offer, ok := a.cfg.Executor.(ToolOffer)
	if !ok || a.cfg.Prompt == nil || !a.cfg.Prompt.Config().Layout.Cache() {
		return nil
	}
	return offer.ToolDefs(Assignment{AgentID: a.cfg.ID, AgentName: a.Name(), Memory: a.cfg.Memory.LongTerm})
}

// newGoalID returns a unique, time-sortable goal id.
func newGoalID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "goal-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
