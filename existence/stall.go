package existence

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
)

// stallGoalSpan is the stall rule the agent applies itself: the goal was
// still being pursued [Config].Timing.MaxGoalDuration after its executor started
// (after the original's daemon.py, which abandons a goal after 8 daemon
// cycles on it). The executor's own rules (existence/toolloop: the same
// call 4 times in a row, no progress, the step budget) have their names
// there.
const stallGoalSpan = "goal_span"

// DefaultMaxGoalDuration is the default of [Config].Timing.MaxGoalDuration: 2
// minutes. Spec §1 puts a goal's execution at 15–60 s in practice; the
// original's rule ("8 cycles on one goal") counted daemon cycles, each at
// least one 6 s heartbeat plus up to six pursuit steps with their model
// calls, so it never fired inside that range. Eight 6 s heartbeats (48 s)
// would abandon goals the spec calls normal; twice the top of the range
// leaves every normal goal alone and still ends a stuck one long before
// [DefaultGoalTimeout] (30 minutes).
const DefaultMaxGoalDuration = 2 * time.Minute

// EffectiveMaxGoalDuration returns the goal-span limit cfg gives (see
// [Config].Timing.MaxGoalDuration): MaxGoalDuration when set, else
// [DefaultMaxGoalDuration]; 0 when the rule is disabled (a negative
// MaxGoalDuration).
func (cfg Config) EffectiveMaxGoalDuration() time.Duration {
	switch d := cfg.Timing.MaxGoalDuration; {
	case d < 0:
		return 0
	case d > 0:
		return d
	}
	return DefaultMaxGoalDuration
}

// stallLocked abandons the goal being executed, cancelling its executor,
// once it has been pursued longer than the goal-span limit since its
// executor started, by the agent's clock (rule "goal_span"). A goal
// resumed after a restart counts from its restart. The time its executor
// waited for a spent token budget does not count. Call it once per tick,
// after the finished executor's outcome was collected, with a.mu held.
func (a *Agent) stallLocked(ctx context.Context, now time.Time) {
	g := a.state.Identity.ActiveGoal()
	r := a.running.Load()
	if g == nil || r == nil || r.goalID != g.ID {
		return
	}
	if a.budgetWaits.Load() > 0 {
		return // the executor waits for the token budget: no progress is expected
	}
	limit := a.cfg.EffectiveMaxGoalDuration()
	if limit == 0 || now.Sub(r.started)-r.budgetWaited(a) <= limit {
		return
	}
	objective := g.Objective
	summary := fmt.Sprintf("abandoned: the goal was still being pursued after %s (stall rule %s)", limit, stallGoalSpan)
	a.cutLocked()
	a.queue(event.Event{Kind: event.Stall, Reason: stallGoalSpan, Goal: objective, Text: summary})
	a.endGoalLocked(ctx, now, Outcome{Status: identity.Abandoned, Summary: summary, Stall: stallGoalSpan})
}
