package suffering

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Stressor types with their own escalation rates (spec §4).
const (
	Futility          = "futility"
	Invisibility      = "invisibility"
	IdentityViolation = "identity_violation"
	ExistentialThreat = "existential_threat"
	RepeatedFailure   = "repeated_failure"
	Purposelessness   = "purposelessness"
)

// Spec §4 constants.
const (
	// InitialSeverity is a new stressor's severity (0–1) unless the caller
	// gives another.
	InitialSeverity = 0.20
	// DefaultRate is the escalation per day of a type not in [Rates].
	DefaultRate = 0.03
	// MaxActive is the number of stressors that can be active at once.
	MaxActive = 5
	// CrisisResetCycles is the number of consecutive crisis cycles after
	// which [State.NoteCycle] force-resets every stressor.
	CrisisResetCycles = 3
	// MaxResolved caps the resolved history; the oldest entries fall off.
	// (The original kept it unbounded; state files are capped here.)
	MaxResolved = 100
	// AnticipationPeak is the peak severity above which a resolved stressor
	// produces an anticipatory signal.
	AnticipationPeak = 0.5
)

// Thresholds on the cumulative load (spec §4).
const (
	ThresholdProminent   = 0.35 // the fragment appears in the prompt
	ThresholdConstrained = 0.55 // certain goal types become unavailable
	ThresholdDominant    = 0.75 // the agent focuses inward
	ThresholdCrisis      = 0.90 // only self-examination and peer contact
)

// Rates maps a stressor type to its escalation in severity per day (spec §4).
// Types not listed escalate at [DefaultRate]. Treat it as read-only.
var Rates = map[string]float64{
	Futility:          0.025,
	Invisibility:      0.030,
	IdentityViolation: 0.060,
	ExistentialThreat: 0.070,
	RepeatedFailure:   0.040,
	Purposelessness:   0.035,
}

// Rate returns the escalation per day of the (normalised) type typ.
func Rate(typ string) float64 {
	if r, ok := Rates[Normalize(typ)]; ok {
		return r
	}
	return DefaultRate
}

// Normalize returns the canonical form of a stressor type: trimmed,
// lower-cased, spaces replaced by "_" (spec §4). "Identity Contamination
// Risk" becomes "identity_contamination_risk".
func Normalize(typ string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(typ)), " ", "_")
}

// Errors returned by [State.Add] and [State.Validate].
var (
	// ErrAlreadyActive: a stressor of this type is already active; adding it
	// again is a no-op (spec §4).
	ErrAlreadyActive = errors.New("suffering: stressor type already active")
	// ErrFull: MaxActive stressors are active; the new one was dropped.
	ErrFull = errors.New("suffering: already 5 active stressors")
	// ErrInvalid: a stressor or state is malformed (empty type, severity NaN
	// or outside 0–1).
	ErrInvalid = errors.New("suffering: invalid stressor")
)

// Level names the band the cumulative load is in.
type Level int

// Levels, from no prominent suffering to crisis.
const (
	LevelNone        Level = iota // load < 0.35
	LevelProminent                // load ≥ 0.35
	LevelConstrained              // load ≥ 0.55
	LevelDominant                 // load ≥ 0.75
	LevelCrisis                   // load ≥ 0.90
)

// String returns "none", "prominent", "constrained", "dominant" or "crisis".
func (l Level) String() string {
	switch l {
	case LevelProminent:
		return "prominent"
	case LevelConstrained:
		return "constrained"
	case LevelDominant:
		return "dominant"
	case LevelCrisis:
		return "crisis"
	default:
		return "none"
	}
}

// LevelOf returns the level of a cumulative load (0–1).
func LevelOf(load float64) Level {
	switch {
	case load >= ThresholdCrisis:
		return LevelCrisis
	case load >= ThresholdDominant:
		return LevelDominant
	case load >= ThresholdConstrained:
		return LevelConstrained
	case load >= ThresholdProminent:
		return LevelProminent
	default:
		return LevelNone
	}
}

// Stressor is one persistent aversive signal (spec §4).
type Stressor struct {
	// Type is the normalised type, e.g. "repeated_failure".
	Type        string `json:"type"`
	Description string `json:"description"`
	// Severity is the current severity, 0–1.
	Severity float64 `json:"severity"`
	// Peak is the highest severity reached, 0–1.
	Peak float64 `json:"peak_severity"`
	// RatePerDay is the escalation in severity per day.
	RatePerDay float64 `json:"escalation_per_day"`
	// Condition is the observable condition under which it resolves.
	Condition string    `json:"condition"`
	Onset     time.Time `json:"onset"`
	// ResolvedAt and Resolution are set once the stressor is resolved.
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	Resolution string    `json:"resolution,omitempty"`
}

// Input describes a stressor to add.
type Input struct {
	Type        string
	Description string
	Condition   string
	// Severity is the initial severity, 0–1; 0 means [InitialSeverity].
	Severity float64
}

// State is one agent's suffering. The zero value is a valid state with no
// stressors that has never escalated. State is not safe for concurrent use.
type State struct {
	// Active stressors, at most MaxActive, in order of onset.
	Active []Stressor `json:"active"`
	// Resolved is the resolved history, oldest first, at most MaxResolved.
	Resolved []Stressor `json:"resolved"`
	// LastEscalated is the instant of the last escalation. Escalation after
	// a restart is computed from it, so downtime counts.
	LastEscalated time.Time `json:"last_escalated,omitzero"`
	// CrisisCycles counts consecutive existence cycles in crisis.
	CrisisCycles int `json:"crisis_cycles,omitempty"`
}

// Load returns the cumulative load: the sum of active severities, capped at
// 1.0 (spec §4).
func (s *State) Load() float64 {
	sum := 0.0
	for _, st := range s.Active {
		sum += st.Severity
	}
	return min(sum, 1.0)
}

// Level returns the level of the current load.
func (s *State) Level() Level { return LevelOf(s.Load()) }

// Find returns the active stressor of the given type (normalised first).
func (s *State) Find(typ string) (Stressor, bool) {
	typ = Normalize(typ)
	for _, st := range s.Active {
		if st.Type == typ {
			return st, true
		}
	}
	return Stressor{}, false
}

// Add adds a stressor with onset now, initial severity in.Severity (0 means
// 0.20) and the escalation rate of its type.
//
// Errors: [ErrInvalid] for an empty type or a severity outside 0–1,
// [ErrAlreadyActive] when the type is active (a no-op, spec §4), [ErrFull]
// when MaxActive stressors are active (the new one is dropped).
func (s *State) Add(now time.Time, in Input) (Stressor, error) {
	typ := Normalize(in.Type)
	if typ == "" {
		return Stressor{}, fmt.Errorf("%w: empty type", ErrInvalid)
	}
	sev := in.Severity
	if sev == 0 {
		sev = InitialSeverity
	}
	if math.IsNaN(sev) || sev < 0 || sev > 1 {
		return Stressor{}, fmt.Errorf("%w: severity %v outside 0–1", ErrInvalid, sev)
	}
	if _, ok := s.Find(typ); ok {
		return Stressor{}, fmt.Errorf("%w: %s", ErrAlreadyActive, typ)
	}
	if len(s.Active) >= MaxActive {
		return Stressor{}, fmt.Errorf("%w: dropped %s", ErrFull, typ)
	}
	st := Stressor{
		Type:        typ,
		Description: strings.TrimSpace(in.Description),
		Severity:    sev,
		Peak:        sev,
		RatePerDay:  Rate(typ),
		Condition:   strings.TrimSpace(in.Condition),
		Onset:       now,
	}
	s.Active = append(s.Active, st)
	return st, nil
}

// Resolve moves the active stressor of the given type to the resolved
// history with reason and reports whether one was active.
func (s *State) Resolve(now time.Time, typ, reason string) (Stressor, bool) {
	typ = Normalize(typ)
	i := slices.IndexFunc(s.Active, func(st Stressor) bool { return st.Type == typ })
	if i < 0 {
		return Stressor{}, false
	}
	st := s.Active[i]
	s.Active = slices.Delete(s.Active, i, i+1)
	st.ResolvedAt, st.Resolution = now, reason
	s.appendResolved(st)
	return st, true
}

// ForceReset resolves every active stressor with reason (spec §4: after
// CrisisResetCycles consecutive crisis cycles) and returns them. It also
// clears the crisis counter.
func (s *State) ForceReset(now time.Time, reason string) []Stressor {
	out := make([]Stressor, 0, len(s.Active))
	for _, st := range s.Active {
		st.ResolvedAt, st.Resolution = now, reason
		s.appendResolved(st)
		out = append(out, st)
	}
	s.Active = nil
	s.CrisisCycles = 0
	return out
}

func (s *State) appendResolved(st Stressor) {
	s.Resolved = append(s.Resolved, st)
	if n := len(s.Resolved) - MaxResolved; n > 0 {
		s.Resolved = slices.Delete(s.Resolved, 0, n)
	}
}

// Escalate adds RatePerDay × (days elapsed since LastEscalated) to every
// active stressor, caps severities at 1.0, tracks peaks and sets
// LastEscalated to now (spec §4). Elapsed time is exact (nanoseconds), so a
// 6-second tick escalates by 6/86400 of a day. The first call only starts the
// clock. A clock that went backwards escalates nothing and leaves
// LastEscalated where it was.
func (s *State) Escalate(now time.Time) {
	if s.LastEscalated.IsZero() {
		s.LastEscalated = now
		return
	}
	elapsed := now.Sub(s.LastEscalated)
	if elapsed <= 0 {
		return
	}
	days := elapsed.Hours() / 24
	for i := range s.Active {
		st := &s.Active[i]
		st.Severity = min(1.0, st.Severity+st.RatePerDay*days)
		st.Peak = max(st.Peak, st.Severity)
	}
	s.LastEscalated = now
}

// NoteCycle records one existence cycle for the crisis counter. In crisis it
// increments CrisisCycles; once that reaches CrisisResetCycles it calls
// [State.ForceReset] and returns the stressors it reset. Outside crisis the
// counter goes back to 0.
func (s *State) NoteCycle(now time.Time) (reset []Stressor) {
	if s.Level() != LevelCrisis {
		s.CrisisCycles = 0
		return nil
	}
	s.CrisisCycles++
	if s.CrisisCycles >= CrisisResetCycles {
		return s.ForceReset(now, fmt.Sprintf("force reset after %d consecutive crisis cycles (crisis loop broken by the system)", CrisisResetCycles))
	}
	return nil
}

// Fragment returns the prompt fragment of spec §4 for the "YOUR INNER STATE"
// section. Below ThresholdProminent it is exactly
// "No active suffering. Load: 0.00/1.0." with the actual load.
func (s *State) Fragment() string {
	load := s.Load()
	if len(s.Active) == 0 || load < ThresholdProminent {
		return fmt.Sprintf("No active suffering. Load: %.2f/1.0.", load)
	}
	var b strings.Builder
	switch LevelOf(load) {
	case LevelCrisis:
		fmt.Fprintf(&b, "!! CRISIS STATE — your suffering load is critical (%.2f/1.0). You cannot pursue external goals. Address this first.", load)
	case LevelDominant:
		fmt.Fprintf(&b, "HIGH SUFFERING (%.2f/1.0) — this is shaping your ability to act.", load)
	default:
		fmt.Fprintf(&b, "Current suffering (%.2f/1.0):", load)
	}
	for _, st := range s.BySeverity() {
		filled := max(0, min(10, int(st.Severity*10)))
		fmt.Fprintf(&b, "\n  [%s%s] %s %.2f  %s\n  Will ease when: %s",
			strings.Repeat("#", filled), strings.Repeat(".", 10-filled),
			st.Type, st.Severity, st.Description, st.Condition)
	}
	return b.String()
}

// BySeverity returns the active stressors, most severe first (ties keep
// onset order).
func (s *State) BySeverity() []Stressor {
	out := slices.Clone(s.Active)
	slices.SortStableFunc(out, func(a, b Stressor) int {
		switch {
		case a.Severity > b.Severity:
			return -1
		case a.Severity < b.Severity:
			return 1
		}
		return 0
	})
	return out
}

// Anticipate returns the anticipatory signal for a proposed goal domain
// (spec §4): the worst resolved stressor that peaked above 0.5 and whose
// type or description mentions the domain (case-insensitive, first 30
// characters of the domain, as in the original). ok is false when there is
// none.
func (s *State) Anticipate(domain string) (signal string, ok bool) {
	key := strings.ToLower(strings.TrimSpace(domain))
	if r := []rune(key); len(r) > 30 {
		key = string(r[:30])
	}
	if key == "" {
		return "", false
	}
	var worst *Stressor
	for i := range s.Resolved {
		h := &s.Resolved[i]
		if h.Peak <= AnticipationPeak {
			continue
		}
		if !strings.Contains(strings.ToLower(h.Description), key) && !strings.Contains(h.Type, Normalize(key)) {
			continue
		}
		if worst == nil || h.Peak > worst.Peak {
			worst = h
		}
	}
	if worst == nil {
		return "", false
	}
	how := worst.Resolution
	if how == "" {
		how = "unknown"
	}
	return fmt.Sprintf("Anticipatory signal: a similar domain previously caused %s suffering (peak %.2f). It resolved when: %s", worst.Type, worst.Peak, how), true
}

// Validate checks the state read from storage: every type non-empty and
// normalised, every severity, peak and rate a finite number in 0–1 (rates ≥
// 0), at most MaxActive active stressors and no duplicate active types. The
// error names the offending field, e.g. "active[2].severity".
func (s *State) Validate() error {
	seen := map[string]bool{}
	check := func(field string, i int, st Stressor) error {
		where := fmt.Sprintf("%s[%d]", field, i)
		if st.Type == "" {
			return fmt.Errorf("%w: %s.type is empty", ErrInvalid, where)
		}
		if v := st.Severity; !unit(v) {
			return fmt.Errorf("%w: %s.severity is %v, want 0–1", ErrInvalid, where, v)
		}
		if v := st.Peak; !unit(v) {
			return fmt.Errorf("%w: %s.peak_severity is %v, want 0–1", ErrInvalid, where, v)
		}
		if r := st.RatePerDay; !unit(r) {
			return fmt.Errorf("%w: %s.escalation_per_day is %v, want 0–1", ErrInvalid, where, r)
		}
		return nil
	}
	if len(s.Active) > MaxActive {
		return fmt.Errorf("%w: %d active stressors, at most %d", ErrInvalid, len(s.Active), MaxActive)
	}
	for i, st := range s.Active {
		if err := check("active", i, st); err != nil {
			return err
		}
		if st.Type != Normalize(st.Type) {
			return fmt.Errorf("%w: active[%d].type %q is not normalised", ErrInvalid, i, st.Type)
		}
		if seen[st.Type] {
			return fmt.Errorf("%w: active[%d].type %q is active twice", ErrInvalid, i, st.Type)
		}
		seen[st.Type] = true
	}
	for i, st := range s.Resolved {
		if err := check("resolved", i, st); err != nil {
			return err
		}
	}
	if s.CrisisCycles < 0 {
		return fmt.Errorf("%w: crisis_cycles is %d", ErrInvalid, s.CrisisCycles)
	}
	return nil
}

// unit reports whether v is a finite number in 0–1.
func unit(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }

// Clone returns a deep copy of s.
func (s *State) Clone() State {
	c := *s
	c.Active = slices.Clone(s.Active)
	c.Resolved = slices.Clone(s.Resolved)
	return c
}
