package existence

import (
	"context"
	"errors"
	"time"
)

// Run ticks every heartbeat (Config.Heartbeat, default 6 s) until ctx ends,
// starting with an immediate tick; a host message ([Agent.Say]) triggers a
// tick at once. It never returns because of a model error: failed cycles
// use the fallback goal and the loop goes on, unless [Config].FailFast
// stops it with a [*FailFastError] on a cause retrying cannot fix. Save errors are reported as
// [EventError] and logged, and the loop goes on.
//
// When ctx ends, Run stops the executing goal (it stays active in the stored
// state, so it resumes after a restart), saves the state and returns nil, or
// the error of that final save.
// With Config.MaxCycles > 0, Run returns nil once that many existence cycles
// have run and the last goal has ended.
func (a *Agent) Run(ctx context.Context) error {
	ticks, stop := a.cfg.Clock.NewTicker(a.cfg.Heartbeat)
	defer stop()
	for {
		if err := a.Tick(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("tick failed", "err", err)
		}
		if ctx.Err() != nil {
			return a.stop()
		}
		if ff := a.stoppedErr(); ff != nil { // Config.FailFast
			return errors.Join(ff, a.stop())
		}
		if a.finished() {
			return a.stop()
		}
		select {
		case <-ctx.Done():
			return a.stop()
		case <-ticks:
		case <-a.wake:
		case <-a.lastGoalDone():
		}
	}
}

// finished reports whether MaxCycles cycles have run and no goal is active.
func (a *Agent) finished() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.MaxCycles > 0 && a.cycles >= a.cfg.MaxCycles && a.state.Identity.ActiveGoal() == nil
}

// lastGoalDone returns a channel closed when the executing goal returns,
// once MaxCycles cycles have run (so Run can finish without waiting for a
// heartbeat); otherwise nil, which blocks forever in a select.
func (a *Agent) lastGoalDone() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.MaxCycles > 0 && a.cycles >= a.cfg.MaxCycles && a.running != nil {
		return a.running.done
	}
	return nil
}

// stop cancels the executing goal, waits for its executor and saves.
func (a *Agent) stop() error {
	a.mu.Lock()
	r := a.running
	a.running = nil
	a.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.mu.Lock()
	err := a.saveLocked(ctx)
	a.unlock()
	return err
}
