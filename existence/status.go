package existence

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/slot"
)

// Status is a snapshot of what an agent is doing and how it is faring: what
// the monitor package shows for each agent. Values are copies
// the caller owns.
type Status struct {
	// ID and Name are the agent's id and display name.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Goal is the active goal's objective, "" when none is active (between
	// a goal's end and the next cycle); GoalStarted when it started, and
	// GoalTask the assigned task it pursues ("" when none). GoalFallback
	// reports the spec §6 fallback goal.
	Goal         string    `json:"goal"`
	GoalStarted  time.Time `json:"goal_started,omitzero"`
	GoalTask     string    `json:"goal_task,omitempty"`
	GoalFallback bool      `json:"goal_fallback,omitempty"`
	// LastOutcome is the status and summary of the most recently ended
	// goal, e.g. "DONE: wrote notes/a.md"; "" before the first.
	LastOutcome string `json:"last_outcome,omitempty"`
	// Load is the suffering load, 0–1, as of the last tick; Level its
	// level: "none", "prominent", "constrained", "dominant" or "crisis"
	// (spec §4).
	Load  float64 `json:"load"`
	Level string  `json:"level"`
	// Stressors are the active stressors, most severe first.
	Stressors []StressorStatus `json:"stressors"`
	// Worldview is the agent's current worldview (at most 600 characters).
	Worldview string `json:"worldview,omitempty"`
	// WorkingMemory is the agent's working memory, a JSON object (nil
	// when it has none; see [WorkingMemory]).
	WorkingMemory json.RawMessage `json:"working_memory,omitempty"`
	// Commissioned is when the agent completed its commissioning (see
	// [Commissioning]); zero when it never did.
	Commissioned time.Time `json:"commissioned,omitzero"`
	// Inbox and HostMessages count unread peer and host messages.
	Inbox        int `json:"inbox"`
	HostMessages int `json:"host_messages"`
	// Cycles is the number of existence cycles since [New].
	Cycles int `json:"cycles"`
	// LastCycleAt is when the last existence cycle ended (by the agent's
	// Clock), zero before the first; LastCycle its statistics (durations,
	// tokens, and lateness once the scheduler reports it), nil before the
	// first.
	LastCycleAt time.Time         `json:"last_cycle_at,omitzero"`
	LastCycle   *event.CycleStats `json:"last_cycle,omitempty"`
	// ConsecutiveFallbacks counts the cycles in a row that used the
	// spec §6 fallback goal (0 after a cycle the model answered).
	ConsecutiveFallbacks int `json:"consecutive_fallbacks"`
	// LastFallbackCause is the class of the last fallback's failure (see
	// [event.Event].FailureClass on [event.Fallback], e.g. "unavailable",
	// "model_not_found", "http_401"), LastFallbackError its text and
	// LastFallbackAt its time; empty before the first fallback. They are
	// kept after the model recovers, so that a person can see what went
	// wrong last.
	LastFallbackCause string    `json:"last_fallback_cause,omitempty"`
	LastFallbackError string    `json:"last_fallback_error,omitempty"`
	LastFallbackAt    time.Time `json:"last_fallback_at,omitzero"`
	// Lease is the lease under which this process runs the agent (see
	// [Agent.SetLease]), nil when it runs without one.
	Lease *lease.Lease `json:"lease,omitempty"`
	// Stopped is the error that stopped [Agent.Run] under
	// [Config].Calls.FailFast, "" while it runs.
	Stopped string `json:"stopped,omitempty"`
	// Slots is the agent's own board of slots, most important first
	// (slot.Sorted), each marked when stale; empty when there are none.
	// The shared board is not included (see [runner.Runner.SharedSlots]).
	Slots []SlotStatus `json:"slots,omitempty"`
	// Usage is the tokens the agent's model calls (cycles and executors)
	// and the embeddings it caused used since [New], as the token budget
	// counts them: the server's counts, else estimates (their part is
	// EstimatedTokens). UsageByModel splits it by model (the embedding
	// model has its own entry), most tokens first; empty before the first
	// call.
	Usage        Usage        `json:"usage"`
	UsageByModel []ModelUsage `json:"usage_by_model,omitempty"`
	// Budget is the agent's token budget ([Config].Calls.Budget) and how much of
	// it the window holds; nil without one. The runner-wide budget is in
	// [runner.Stats].Budget.
	Budget *budget.Status `json:"budget,omitempty"`
	// WaitingForBudget reports that the agent's executor is waiting for a
	// spent budget (its own or the runner's) to refill.
	WaitingForBudget bool `json:"waiting_for_budget,omitempty"`
}

// SlotStatus is one slot as [Status] shows it: the slot, with GLaDOS's
// JSON names, and whether its next update is long overdue
// (slot.Slot.Stale).
type SlotStatus struct {
	slot.Slot
	// Stale reports whether the slot's next update is long overdue, by
	// the agent's clock ([Agent.Status]) or the wall clock ([StatusOf]).
	Stale bool `json:"stale,omitempty"`
}

// SlotStatuses returns slots as [Status] shows them: most important first
// (slot.Sorted), each marked stale as of now; nil for none.
func SlotStatuses(slots []slot.Slot, now time.Time) []SlotStatus {
	if len(slots) == 0 {
		return nil
	}
	out := make([]SlotStatus, 0, len(slots))
	for _, s := range slot.Sorted(slots) {
		out = append(out, SlotStatus{Slot: s, Stale: s.Stale(now)})
	}
	return out
}

// StressorStatus is one active stressor as [Status] shows it.
type StressorStatus struct {
	// Type is the normalised type, e.g. "repeated_failure".
	Type string `json:"type"`
	// Description says what hurts.
	Description string `json:"description"`
	// Severity is the current severity, 0–1.
	Severity float64 `json:"severity"`
	// Onset is when it was added.
	Onset time.Time `json:"onset"`
}

// statusState is what the agent keeps for [Agent.Status] beyond its
// identity.AgentState; guarded by Agent.mu.
type statusState struct {
	lastCycleAt time.Time
	lastCycle   *event.CycleStats
	fallbacks   int
	cause       string
	causeErr    string
	causeAt     time.Time
	lease       *lease.Lease
	stopped     error
}

// Status returns a snapshot of the agent (see [Status]). It is cheap: it
// copies a few fields under the agent's lock, without the goal history.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := statusOf(a.state, a.cfg.Timing.Clock.Now())
	s.ID, s.Name = a.cfg.ID, a.Name()
	s.Cycles = a.cycles
	s.LastCycleAt = a.status.lastCycleAt
	s.ConsecutiveFallbacks = a.status.fallbacks
	s.LastFallbackCause, s.LastFallbackError, s.LastFallbackAt = a.status.cause, a.status.causeErr, a.status.causeAt
	if c := a.status.lastCycle; c != nil {
		cc := *c
		s.LastCycle = &cc
	}
	if l := cmp.Or(a.status.lease, a.wire.Lease); l != nil { // set, else as claimed by the Runner
		ll := *l
		s.Lease = &ll
	}
	if a.status.stopped != nil {
		s.Stopped = a.status.stopped.Error()
	}
	s.Usage, s.UsageByModel = a.usage.snapshot()
	s.Budget = a.budget.Status(a.cfg.Timing.Clock.Now())
	s.WaitingForBudget = a.budgetWaits.Load() > 0
	return s
}

// SetLease records the lease under which this process runs the agent, for
// [Status] (nil: none). Whoever manages leases calls it when it claims,
// renews or loses one. It changes only what Status reports, never the
// lease that fences the agent's writes ([Agent.Lease], set by the
// [runner.Runner] that claimed it).
func (a *Agent) SetLease(l *lease.Lease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l == nil {
		a.status.lease = nil
		return
	}
	c := *l
	a.status.lease = &c
}

// ErrFailFast matches (with errors.Is) the [*FailFastError] that stops
// [Agent.Run] under [Config].Calls.FailFast.
var ErrFailFast = errors.New("existence: stopped by FailFast")

// FailFastError is returned by [Agent.Run] under [Config].Calls.FailFast when a
// cycle's model call failed with a cause that retrying can never fix
// (see [middleware.Permanent]). It matches [ErrFailFast] and unwraps to the model's
// error.
type FailFastError struct {
	// AgentID is the agent; Cause the failure's class (e.g.
	// "model_not_found", "http_401"); Err the model's error.
	AgentID string
	Cause   string
	Err     error
}

// Error reads like "existence: agent scout stopped (FailFast): model_not_found,
// which retrying cannot fix: ..." with the model's error last.
func (e *FailFastError) Error() string {
	return fmt.Sprintf("existence: agent %s stopped (FailFast): %s, which retrying cannot fix: %v", e.AgentID, e.Cause, e.Err)
}

// Unwrap returns the model's error.
func (e *FailFastError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrFailFast].
func (e *FailFastError) Is(target error) bool { return target == ErrFailFast }

// noteCycleLocked records the end of a cycle for [Agent.Status]: its time
// and statistics, and the fallback count and cause. a.mu must be held.
func (a *Agent) noteCycleLocked(now time.Time, stats *event.CycleStats, cause string, cerr error) {
	a.status.lastCycleAt = now
	c := *stats
	a.status.lastCycle = &c
	if cerr == nil {
		a.status.fallbacks = 0
		return
	}
	a.status.fallbacks++
	a.status.cause, a.status.causeErr, a.status.causeAt = cause, cerr.Error(), now
}

// failFast returns the error that stops Run under Config.Calls.FailFast for a
// cycle that failed with cause and err, recording it for Status; nil when
// the agent goes on. a.mu must not be held.
func (a *Agent) failFast(cause string, err error) error {
	if !a.cfg.Calls.FailFast || err == nil || !middleware.Permanent(cause) {
		return nil
	}
	ff := &FailFastError{AgentID: a.cfg.ID, Cause: cause, Err: err}
	a.mu.Lock()
	a.status.stopped = ff
	a.mu.Unlock()
	a.emit(event.Event{Kind: event.Error, FailureClass: cause, Text: "stopping (FailFast): " + cause + " cannot be fixed by retrying", Err: err})
	return ff
}

// stoppedErr returns the FailFast error that stops Run, or nil.
func (a *Agent) stoppedErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status.stopped
}

// fallbackCause is the FailureClass of the EventGoalChosen of a cycle that failed
// with cause and err: the cause for a fallback goal, "" otherwise.
func fallbackCause(cause string, err error) string {
	if err == nil {
		return ""
	}
	return cause
}
