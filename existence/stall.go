package existence

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// Stall rules (after the original's daemon.py, which abandons a
// goal with no progress for 5 cycles, the same capability 4 times in a row,
// or 8 cycles on one goal). [Outcome].Stall names the rule that abandoned a
// goal, and an [EventStall] reports it with the rule as Cause.
const (
	// StallSameCall: the same tool call (same name and arguments) was
	// made 4 times in a row (existence/toolloop).
	StallSameCall = "same_call"
	// StallNoProgress: 4 tool calls in a row failed (existence/toolloop).
	StallNoProgress = "no_progress"
	// StallStepBudget: the executor's step budget ran out before a final
	// answer (existence/toolloop: 20 model turns).
	StallStepBudget = "step_budget"
	// StallGoalSpan: the goal spanned more than [Config].MaxGoalHeartbeats
	// heartbeats (the agent).
	StallGoalSpan = "goal_span"
)

// Event kinds of stall and repeat detection.
const (
	// EventStall: a stall rule abandoned the goal. Cause is the rule
	// ([StallSameCall], [StallNoProgress], [StallStepBudget] or
	// [StallGoalSpan]), Goal the goal, Text the outcome summary. The
	// toolloop executor reports the first three through
	// [Assignment].Report; the agent reports [StallGoalSpan].
	EventStall EventKind = "stall"
	// EventGoalRepeat: a newly chosen goal nearly repeats one of the last
	// 10 (see [Repeats]). Goal is the new goal, Text the earlier one it
	// repeats. The repeat counts toward the repeated_failure assessment
	// ([GoalEvidence]).
	EventGoalRepeat EventKind = "goal_repeat"
)

// DefaultMaxGoalHeartbeats is the default of [Config].MaxGoalHeartbeats:
// the original's "8 cycles on one goal".
const DefaultMaxGoalHeartbeats = 8

func init() {
	icons[EventStall] = "🛑"
	icons[EventGoalRepeat] = "🔁"
}

// stallState counts the heartbeats of the goal being pursued. It lives in
// memory: after a restart a resumed goal starts counting again.
type stallState struct {
	goalID string
	beats  int
}

// maxGoalHeartbeats is Config.MaxGoalHeartbeats with its default: 0 means
// DefaultMaxGoalHeartbeats, a negative value disables the rule.
func (a *Agent) maxGoalHeartbeats() int {
	switch n := a.cfg.MaxGoalHeartbeats; {
	case n == 0:
		return DefaultMaxGoalHeartbeats
	case n < 0:
		return 0
	default:
		return n
	}
}

// stallLocked counts one heartbeat of the goal being executed and abandons
// it, cancelling its executor, once it has spanned more than
// MaxGoalHeartbeats heartbeats (rule [StallGoalSpan]). Call it once per
// tick, after the finished executor's outcome was collected, with a.mu
// held.
func (a *Agent) stallLocked(ctx context.Context, now time.Time) {
	g := a.state.Identity.ActiveGoal()
	if g == nil || a.running == nil || a.running.goalID != g.ID {
		a.stall = stallState{}
		return
	}
	if a.stall.goalID != g.ID {
		a.stall = stallState{goalID: g.ID}
	}
	if a.budgetWaits.Load() > 0 {
		return // the executor waits for the token budget: no progress is expected
	}
	a.stall.beats++
	limit := a.maxGoalHeartbeats()
	if limit == 0 || a.stall.beats <= limit {
		return
	}
	objective := g.Objective
	summary := fmt.Sprintf("abandoned: the goal spanned more than %d heartbeats without ending (stall rule %s)", limit, StallGoalSpan)
	a.cutLocked()
	a.stall = stallState{}
	a.queue(Event{Kind: EventStall, Cause: StallGoalSpan, Goal: objective, Text: summary})
	a.endGoalLocked(ctx, now, Outcome{Status: identity.Abandoned, Summary: summary, Stall: StallGoalSpan})
}
