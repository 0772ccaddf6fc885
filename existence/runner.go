package existence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
)

// RunnerConfig configures a [Runner]. Its fields are defaults for every
// agent added; a field set in an agent's own [Config] wins.
type RunnerConfig struct {
	// Store is shared by the agents (required). With an identity.FileStore
	// each agent holds its own lock for the whole run.
	Store identity.Store
	// MaxInFlight bounds the model calls in flight across all agents,
	// existence cycles and executors together (an [llm.Limiter]); default
	// 1, which suits one local GPU.
	MaxInFlight int
	// Clock, Heartbeat, Observer and Logger are the agents' defaults (see
	// [Config]).
	Clock     Clock
	Heartbeat time.Duration
	Observer  Observer
	Logger    *slog.Logger
}

// Runner runs several agents as peers sharing one store. Each agent's
// "YOUR PEERS" section comes from the other agents' identities, crisis
// messages go to the other agents' inboxes, and model calls are bounded by
// an [llm.Limiter]. Agents tick independently. Add agents before [Runner.Run].
type Runner struct {
	cfg     RunnerConfig
	limiter *llm.Limiter

	mu     sync.RWMutex
	agents []*Agent
}

// NewRunner returns a Runner. It returns an error when cfg.Store is nil.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Store == nil {
		return nil, errors.New("existence: RunnerConfig.Store is required")
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1
	}
	return &Runner{cfg: cfg, limiter: llm.NewLimiter(cfg.MaxInFlight)}, nil
}

// Add creates an agent with cfg (see [New]) in the runner: Store, Clock,
// Heartbeat, Observer and Logger default to the runner's, and its model
// calls (cycles and executors) are bounded by MaxInFlight. Agent ids must be
// unique.
func (r *Runner) Add(ctx context.Context, cfg Config) (*Agent, error) {
	if r.Agent(cfg.ID) != nil {
		return nil, fmt.Errorf("existence: agent %q added twice", cfg.ID)
	}
	if cfg.Store == nil {
		cfg.Store = r.cfg.Store
	}
	if cfg.Clock == nil {
		cfg.Clock = r.cfg.Clock
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = r.cfg.Heartbeat
	}
	if cfg.Observer == nil {
		cfg.Observer = r.cfg.Observer
	}
	if cfg.Logger == nil {
		cfg.Logger = r.cfg.Logger
	}
	cfg.limiter = r.limiter
	cfg.peers = r.peers
	cfg.send = r.broadcast
	a, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.agents = append(r.agents, a)
	r.mu.Unlock()
	return a, nil
}

// Agents returns the agents in the order they were added.
func (r *Runner) Agents() []*Agent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.agents)
}

// Agent returns the agent with the given id, or nil.
func (r *Runner) Agent(id string) *Agent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, a := range r.agents {
		if a.ID() == id {
			return a
		}
	}
	return nil
}

// Run runs every agent until ctx ends (or each reaches its MaxCycles), then
// returns. An agent's error does not stop the others; the errors are
// joined.
func (r *Runner) Run(ctx context.Context) error {
	agents := r.Agents()
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Run(ctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", a.ID(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every agent (see [Agent.Close]) and releases their locks.
func (r *Runner) Close() error {
	var errs []error
	for _, a := range r.Agents() {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}

// Say delivers a host message to the agents with the given ids, or to every
// agent when none is given. Unknown ids are an error; the message is still
// delivered to the known ones.
func (r *Runner) Say(ctx context.Context, text string, to ...string) error {
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
		errs = append(errs, a.Say(ctx, text))
	}
	return errors.Join(errs...)
}

// peers returns what agent self knows of the others (spec §2 row 10): name
// and narrative, ordered by id.
func (r *Runner) peers(self string) []prompt.Peer {
	var out []prompt.Peer
	for _, a := range r.Agents() {
		if a.ID() == self {
			continue
		}
		a.mu.Lock()
		out = append(out, prompt.Peer{ID: a.ID(), Name: a.state.Identity.Name, Narrative: a.state.Identity.Narrative})
		a.mu.Unlock()
	}
	slices.SortFunc(out, func(x, y prompt.Peer) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// broadcast delivers text from one agent to every other agent's inbox.
func (r *Runner) broadcast(from *Agent, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, a := range r.Agents() {
		if a == from {
			continue
		}
		if err := a.Deliver(ctx, identity.Message{From: from.Name(), Text: text}); err != nil {
			from.emit(Event{Kind: EventError, Text: "delivering a message to " + a.ID(), Err: err})
			continue
		}
		from.emit(Event{Kind: EventMessage, Cause: "sent", Text: text, Peer: a.Name()})
	}
}

// Send delivers a message from one agent to another agent's inbox
// (spec §2 row 15). Errors: unknown ids, or the save error.
func (r *Runner) Send(ctx context.Context, fromID, toID, text string) error {
	from, to := r.Agent(fromID), r.Agent(toID)
	if from == nil || to == nil {
		return fmt.Errorf("existence: no agent %q or %q", fromID, toID)
	}
	return to.Deliver(ctx, identity.Message{From: from.Name(), Text: text})
}
