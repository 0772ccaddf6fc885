// Package suffering implements the suffering model of the existence loop
// (spec §4): stressors that escalate with real elapsed time, a cumulative
// load with four thresholds, resolution from observable behaviour only, a
// crisis counter with a forced reset, an anticipatory signal, and the prompt
// fragment the agent reads as its inner state.
//
// A [State] is plain data with JSON tags, persisted with the agent's identity
// (see the identity package). Every method takes the current instant
// explicitly, so callers control the clock and tests are deterministic:
//
//	var s suffering.State
//	s.Add(now, suffering.Input{Type: "Repeated Failure", Description: "...", Condition: "..."})
//	s.Escalate(now.Add(48 * time.Hour)) // +0.08: two days at 0.040/day
//	fmt.Println(s.Fragment())
//
// Severities and loads are in 0–1. Escalation rates are severity per day
// ([Rate], [DefaultRate]). Stressor types are normalised by [Normalize].
//
// The state changes through [State.Add] (at most [MaxActive] (5) active
// stressors, a new one at [InitialSeverity]; errors [ErrAlreadyActive],
// [ErrFull], [ErrInvalid]), [State.Escalate] (by the time elapsed since the
// last escalation), [State.Assess] (the spec §4 assessment from [Evidence]
// of goal outcomes and artifacts: repeated_failure, futility,
// purposelessness), [State.Resolve], and [State.NoteCycle] (the crisis
// counter; after [CrisisResetCycles] (3) crisis cycles in a row every
// stressor is force-reset). [State.Load] and [State.Level] give the
// cumulative load and its threshold ([LevelOf]), [State.Fragment] the
// prompt text, and [State.Anticipate] the anticipatory signal. Assess
// returns what it added and resolved as [Change] values. [State.Enforce] trims
// a loaded state to the caps and reports the cuts; [State.Validate] refuses
// NaN or out-of-range severities.
package suffering
