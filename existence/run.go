package existence

import (
	"context"

	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/prompt"
)

// Run ticks every heartbeat (Config.Heartbeat, default 6 s) until ctx ends,
// starting with an immediate tick; a host message ([Agent.SayAsHost]) triggers a
// tick at once. It never returns because of a model error: failed cycles
// use the fallback goal and the loop goes on, unless [Config].FailFast
// stops it with a [*FailFastError] (matching [ErrFailFast]) on a cause
// retrying cannot fix. Save errors are reported as [event.Error] and
// logged, and the loop goes on.
//
// Run drives the agent with the same scheduler as a [Runner], as
// a runner of one agent with one worker per lane and no stagger: a host
// message runs in the priority lane, heartbeats falling due during a cycle
// are coalesced into it ([event.CycleStats].Coalesced), and each cycle's
// lateness is reported ([event.CycleStats].Lateness).
//
// When ctx ends, Run stops the executing goal (it stays active in the stored
// state, so it resumes after a restart), saves the state and returns nil, or
// the error of that final save. Saves made while it stops (the final one,
// and those of a tick under way) use a context the shutdown does not
// cancel, bounded by 10 seconds: a clean exit logs no error.
// With Config.MaxCycles > 0, Run returns nil once that many existence cycles
// have run and the last goal has ended.
func (a *Agent) Run(ctx context.Context) error {
	r := &Runner{
		cfg: RunnerConfig{
			Store: a.cfg.Store, Clock: a.cfg.Clock, Heartbeat: a.cfg.Heartbeat,
			NoStagger: true, AutonomyWorkers: 1, PriorityWorkers: 1,
			MaxPeersShown: DefaultMaxPeersShown, Logger: a.cfg.Logger,
		},
		byID: map[string]*node{},
		core: newSchedCore(1, 1, 0),
		kick: make(chan struct{}, 1),
	}
	r.core.classify = classifyNode
	r.core.hold = holdNode
	r.book.init(DefaultMaxPeersShown)
	w := adapter{a}
	r.attach(w)
	defer w.SetHooks(nil, nil)
	return r.Run(ctx)
}

// attach puts an existing agent in r (see [Runner.Add]).
func (r *Runner) attach(a wire.Agent) *node {
	n := &node{a: a}
	n.e = schedEntry{id: a.ID(), hb: a.Heartbeat(), node: n, timerIdx: -1, queueIdx: -1}
	r.mu.Lock()
	r.byID[a.ID()] = n
	r.agents = append(r.agents, a)
	r.mu.Unlock()
	p := a.Peek()
	r.book.set(a.ID(), prompt.Peer{ID: a.ID(), Name: p.Name, Narrative: p.Narrative})
	n.host.Store(p.Host)
	a.SetHooks(func() { r.wakeNode(n) }, func() { r.triggerNode(n) })
	r.smu.Lock()
	if r.started {
		r.schedule(n, r.cfg.Clock.Now())
	}
	g := r.mindGroup
	r.smu.Unlock()
	if g != nil {
		r.startAgentMinds(g, n) // added while Run runs
	}
	r.poke()
	return n
}

// stop cancels the executing goal, waits for its executor and saves, with
// a context no shutdown cancels (saveTimeout).
func (a *Agent) stop() error {
	a.halt()
	ctx, cancel := saveContext(context.Background())
	defer cancel()
	a.mu.Lock()
	err := a.saveLocked(ctx)
	a.unlock()
	return err
}
