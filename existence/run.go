package existence

import (
	"context"

	"github.com/existence-loop/sdk/existence/internal/sched"
)

// Run ticks every heartbeat (Config.Timing.Heartbeat, default 6 s) until ctx ends,
// starting with an immediate tick; a host message ([Agent.SayAsHost]) triggers a
// tick at once. It never returns because of a model error: failed cycles
// use the fallback goal and the loop goes on, unless [Config].Calls.FailFast
// stops it with a [*FailFastError] (matching [ErrFailFast]) on a cause
// retrying cannot fix. Save errors are reported as [event.Error] and
// logged, and the loop goes on.
//
// Run drives the agent with the same scheduler as a [runner.Runner], as
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
// With Config.Timing.MaxCycles > 0, Run returns nil once that many existence cycles
// have run and the last goal has ended.
func (a *Agent) Run(ctx context.Context) error {
	return sched.RunOne(ctx, adapter{a}, a.cfg.Logger)
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
