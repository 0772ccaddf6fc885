package runner

import (
	"cmp"
	"context"
	"errors"
	"log/slog"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/sched"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/slot"
)

// New returns a Runner. It returns an error when cfg.Store is nil and
// no Leases.NewAgent provides the agents' stores, when Leases is set
// without NewAgent, for an invalid Budget or SharedBudget, and for minds
// without valid, unique names.
func New(cfg Config) (*Runner, error) {
	if cfg.Leases != nil && cfg.NewAgent == nil {
		return nil, errors.New("existence: runner.Config.NewAgent is required with Leases")
	}
	if cfg.Store == nil && cfg.Leases == nil {
		return nil, errors.New("existence: runner.Config.Store is required")
	}
	if err := errors.Join(cfg.Budget.Validate(), cfg.SharedBudget.Validate()); err != nil {
		return nil, err
	}
	if err := wire.CheckMinds(cfg.Minds); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = existence.DefaultHeartbeat
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if len(cfg.Minds) > 0 && cfg.SharedSlots == nil {
		cfg.SharedSlots = identity.NewSharedBoard(identity.NewMemoryDocument(identity.SharedSlotsDocument), identity.BoardOptions{Now: cfg.Clock.Now})
	}
	r := &Runner{cfg: cfg}
	sc := sched.Config{
		AutonomyWorkers: cfg.AutonomyWorkers, Adaptive: cfg.Adaptive, PriorityWorkers: cfg.PriorityWorkers,
		Cooldown: cfg.Cooldown, TriggerGap: cfg.TriggerGap, NoStagger: cfg.NoStagger,
		MaxPeersShown: cfg.MaxPeersShown, SharedPeers: cfg.SharedPeers, MaxInFlight: cfg.MaxInFlight,
		Clock: cfg.Clock, Heartbeat: cfg.Heartbeat, Observer: cfg.Observer, Logger: cfg.Logger,
		Leases: cfg.Leases, MaxAgents: cfg.MaxAgents, RenewEvery: cfg.RenewEvery,
		SharedSlots: cfg.SharedSlots, SharedBudget: cfg.SharedBudget,
	}
	if cfg.NewAgent != nil {
		sc.NewAgent = func(ctx context.Context, l lease.Lease) (string, sched.Build, error) {
			ac, err := cfg.NewAgent(ctx, l)
			if err != nil {
				return "", nil, err
			}
			if ac.ID == "" {
				ac.ID = l.AgentID
			}
			return ac.ID, r.build(ctx, ac), nil
		}
	}
	if len(cfg.Minds) > 0 {
		sc.Minds = func(ctx context.Context, h wire.MindHost, post func(context.Context, slot.Slot) error, report func(event.Event)) {
			wire.SuperviseMinds(ctx, h, cfg.Minds, post, report)
		}
	}
	r.e = sched.New(sc)
	return r, nil
}

// build returns how the engine builds an agent of cfg: existence.New with
// the runner's hooks, cfg completed by [inherit].
func (r *Runner) build(ctx context.Context, cfg existence.Config) sched.Build {
	return func(h wire.Hooks) (wire.Agent, error) {
		return wire.NewAgent(ctx, inherit(cfg, &r.cfg), h)
	}
}

// Add creates an agent with cfg (see [existence.New]) in the runner: its
// zero fields inherit the runner's (see [Config]). Its executor's model
// calls are bounded by MaxInFlight, its cycles by the lanes. Agent ids
// must be unique: a second agent of an id is refused with an error that
// wraps [ErrDuplicateAgent]. An agent added while the runner runs is
// scheduled at once (its first heartbeat staggered like the others).
func (r *Runner) Add(ctx context.Context, cfg existence.Config) (*existence.Agent, error) {
	a, err := r.e.Add(ctx, cfg.ID, r.build(ctx, cfg))
	if err != nil {
		return nil, err
	}
	return a.Unwrap().(*existence.Agent), nil
}

// inherit applies [Config]'s one inheritance rule: each zero field of
// cfg that rc has a field of the same name for takes rc's value.
func inherit(cfg existence.Config, rc *Config) existence.Config {
	cfg.Store = cmp.Or(cfg.Store, rc.Store)
	cfg.Timing.Clock = cmp.Or(cfg.Timing.Clock, rc.Clock)
	cfg.Timing.Heartbeat = cmp.Or(cfg.Timing.Heartbeat, rc.Heartbeat)
	if cfg.Observer == nil {
		cfg.Observer = rc.Observer
	}
	cfg.Logger = cmp.Or(cfg.Logger, rc.Logger)
	cfg.Memory.SharedSlots = cmp.Or(cfg.Memory.SharedSlots, rc.SharedSlots)
	cfg.Calls.Budget = cmp.Or(cfg.Calls.Budget, rc.Budget)
	cfg.TracerProvider = cmp.Or(cfg.TracerProvider, rc.TracerProvider)
	cfg.TraceContent = cmp.Or(cfg.TraceContent, rc.TraceContent)
	return cfg
}

// statsOf converts the engine's counters.
func statsOf(s sched.RunnerStats) Stats {
	c := s.Concurrency
	return Stats{Dispatched: s.Dispatched, Coalesced: s.Coalesced, Queued: s.Queued, Running: s.Running,
		Agents: s.Agents, Triggers: s.Triggers, Workers: s.Workers, Held: s.Held, Budget: s.Budget,
		Concurrency: ConcurrencyStats{Adaptive: c.Adaptive, Limit: c.Limit, InFlight: c.InFlight, MinRTT: c.MinRTT, RTT: c.RTT,
			Calls: c.Calls, Overloads: c.Overloads, Cuts: c.Cuts}}
}
