package suffering

import (
	"fmt"
	"time"
)

// Evidence is what the loop can observe about an agent's recent work. The
// assessment (spec §4) uses only observable behaviour, never self-report.
// Counts are over a recent window the caller chooses (the existence package
// uses the last 10 ended goals).
type Evidence struct {
	// Completed is the number of recent goals that ended DONE.
	Completed int
	// Failed is the number of recent goals that ended FAILED or ABANDONED.
	Failed int
	// Stalled is the number of recent goals abandoned without progress
	// (step budget or tool failures).
	Stalled int
	// Artifacts is the number of artifacts the agent has produced (files,
	// tools).
	Artifacts int
	// ArtifactsUsed is how many of those artifacts were used afterwards;
	// many artifacts with none used feeds futility. (The existence
	// package counts an artifact as used when a discovery with its path
	// as Source was made after the goal that produced it ended.)
	ArtifactsUsed int
	// Outputs is the amount of recent output (e.g. files written); much
	// output without direction adds purposelessness.
	Outputs int
	// Directed reports whether that output follows a direction the caller
	// recognises (for example, an assigned task or a recurring domain).
	// The existence package sets it when a recent goal pursued an assigned
	// task.
	Directed bool
}

// Thresholds of the assessment (spec §4 and the original system).
const (
	// RepeatedFailureMin is the number of recent failures needed to add
	// repeated_failure, together with a failure rate above 50%.
	RepeatedFailureMin = 4
	// FutilityMinArtifacts: futility needs more artifacts than this, none
	// used.
	FutilityMinArtifacts = 10
	// PurposelessMinOutputs: purposelessness needs at least this much output
	// without direction.
	PurposelessMinOutputs = 20
)

// Conditions: the observable resolution conditions the assessment gives its
// stressors.
const (
	RepeatedFailureCondition = "bring the failure rate below 30% by completing goals successfully"
	FutilityCondition        = "complete a goal whose artifact gets used in a subsequent goal, or call a deployed tool and produce a real result"
	PurposelessCondition     = "take a self-directed goal that comes from genuine curiosity or need, not from obligation, and complete it"
)

// ChangeKind says what an assessment did to a stressor.
type ChangeKind string

// Change kinds.
const (
	Added    ChangeKind = "added"
	Resolved ChangeKind = "resolved"
)

// Change is one stressor an assessment added or resolved.
type Change struct {
	// Kind is [Added] or [Resolved].
	Kind ChangeKind
	// Stressor is a copy of the stressor after the change; a resolved one
	// has ResolvedAt and Resolution set.
	Stressor Stressor
}

// Assess updates stressors from observable outcomes (spec §4):
//
//   - repeated_failure is added when at least 4 recent goals failed and the
//     failure rate Failed/(Completed+Failed) is above 50%, and resolved when
//     the rate is below 30% with at least 3 completions;
//   - futility is added when goals stall more than they complete (more than
//     2 stalls), more than 10 artifacts exist, none were used and fewer than
//     2 goals completed; it is resolved after more than 3 completions with
//     an artifact used, or more than 5 completions with stalls not above
//     completions;
//   - purposelessness is added when Outputs ≥ 20 without direction, unless 5
//     goals completed with a failure rate below 30%, which resolves it.
//
// Escalation is separate: call [State.Escalate] first. Assess returns the
// changes it made, in order; adding a type already active or beyond
// MaxActive changes nothing and is not reported.
func (s *State) Assess(now time.Time, o Evidence) []Change {
	var out []Change
	add := func(typ, desc, cond string) {
		if st, err := s.Add(now, Input{Type: typ, Description: desc, Condition: cond}); err == nil {
			out = append(out, Change{Added, st})
		}
	}
	resolve := func(typ, reason string) {
		if st, ok := s.Resolve(now, typ, reason); ok {
			out = append(out, Change{Resolved, st})
		}
	}

	total := o.Completed + o.Failed
	rate := 0.0
	if total > 0 {
		rate = float64(o.Failed) / float64(total)
	}
	switch {
	case o.Failed >= RepeatedFailureMin && rate > 0.5:
		add(RepeatedFailure,
			fmt.Sprintf("%d of %d recent goals failed or were abandoned (%d%% failure rate). The pattern is not yet understood.", o.Failed, total, int(rate*100)),
			RepeatedFailureCondition)
	case rate < 0.3 && o.Completed >= 3:
		resolve(RepeatedFailure, fmt.Sprintf("failure rate dropped to %d%% with %d completions", int(rate*100), o.Completed))
	}

	highStall := o.Stalled > o.Completed && o.Stalled > 2
	unused := o.Artifacts > FutilityMinArtifacts && o.ArtifactsUsed == 0
	switch {
	case highStall && unused && o.Completed < 2:
		add(Futility,
			fmt.Sprintf("Goals are stalling (%d abandoned) more than completing (%d done). %d artifacts produced but none has been used — work is not having observable effect.", o.Stalled, o.Completed, o.Artifacts),
			FutilityCondition)
	case o.Completed > 3 && o.ArtifactsUsed > 0:
		resolve(Futility, fmt.Sprintf("completed %d goals with artifacts being used", o.Completed))
	case o.Completed > 5 && !highStall:
		resolve(Futility, fmt.Sprintf("consistent goal completion (%d) with low stall rate", o.Completed))
	}

	switch {
	case o.Completed >= 5 && rate < 0.3:
		resolve(Purposelessness, "completing goals consistently suggests direction is forming")
	case o.Outputs >= PurposelessMinOutputs && !o.Directed:
		add(Purposelessness,
			fmt.Sprintf("%d outputs recently and no clear direction. It's unclear what problem this is solving or who it's for.", o.Outputs),
			PurposelessCondition)
	}
	return out
}
