package suffering

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/existence-loop/sdk/internal/runes"
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
	// DefaultRate is the escalation per day of a type without its own rate (see [Rate]).
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

// rates maps a stressor type to its escalation in severity per day (spec §4).
var rates = map[string]float64{
	Futility:          0.025,
	Invisibility:      0.030,
	IdentityViolation: 0.060,
	ExistentialThreat: 0.070,
	RepeatedFailure:   0.040,
	Purposelessness:   0.035,
}

// Rate returns the escalation in severity per day of a stressor type
// (normalised first), spec §4: futility 0.025, invisibility 0.030,
// identity_violation 0.060, existential_threat 0.070, repeated_failure
// 0.040, purposelessness 0.035, any other type [DefaultRate] (0.03).
func Rate(typ string) float64 {
	if r, ok := rates[Normalize(typ)]; ok {
		return r
	}
	return DefaultRate
}

// Normalize returns the canonical form of a stressor type: trimmed,
// lower-cased, spaces replaced by "_" (spec §4). "Identity Contamination
// Risk" becomes "identity_contamination_risk".
func Normalize(typ string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_' // a space as in the original; also tabs and newlines
		}
		return r
	}, strings.ToLower(strings.TrimSpace(typ)))
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

// loadEpsilon absorbs floating-point error in sums of severities: 0.18+0.72
// is 0.8999999999999999 in float64, which the prompt shows as "0.90", so it
// must be in crisis too. It is far below the two decimals the prompt shows.
const loadEpsilon = 1e-9

// LevelOf returns the level of a cumulative load (0–1). A load within 1e-9
// below a threshold counts as reaching it, so that a sum of severities that
// floating point puts a hair below 0.90 (and the prompt shows as "0.90") is
// in crisis.
func LevelOf(load float64) Level {
	load += loadEpsilon
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
	// Type is the normalised type, e.g. "repeated_failure" (see [Normalize]).
	Type string `json:"type"`
	// Description says what hurts, in the agent's words or the assessment's.
	Description string `json:"description"`
	// Severity is the current severity, 0–1.
	Severity float64 `json:"severity"`
	// Peak is the highest severity reached, 0–1.
	Peak float64 `json:"peak_severity"`
	// RatePerDay is the escalation in severity per day.
	RatePerDay float64 `json:"escalation_per_day"`
	// Condition is the observable condition under which it resolves,
	// shown in the prompt as "Will ease when: {condition}".
	Condition string `json:"condition"`
	// Onset is when the stressor was added.
	Onset time.Time `json:"onset"`
	// ResolvedAt is when the stressor was resolved; zero while it is
	// active.
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	// Resolution is why it was resolved: the reason given to
	// [State.Resolve] (by the agent's self-report or by the assessment),
	// to [State.ForceReset] after a crisis (spec §4), or by [State.Enforce]
	// when it demoted an over-cap stressor on load. Empty while active.
	Resolution string `json:"resolution,omitempty"`
}

// Input describes a stressor to add with [State.Add].
type Input struct {
	// Type is normalised by [Normalize]; it selects the escalation rate.
	Type string
	// Description says what hurts. It is flattened to one line and cut to
	// [MaxTextChars] characters.
	Description string
	// Condition is the observable resolution condition, flattened and cut
	// like Description.
	Condition string
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
// 0.20) and the escalation rate of its type. The description and condition
// are flattened to one line and cut to [MaxTextChars] characters.
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
		Description: oneLine(in.Description),
		Severity:    sev,
		Peak:        sev,
		RatePerDay:  Rate(typ),
		Condition:   oneLine(in.Condition),
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
// "No active suffering. Load: 0.00/1.0." with the actual load (two
// decimals). Above it, a header line that depends on the level:
//
//	Current suffering (0.40/1.0):
//	HIGH SUFFERING (0.80/1.0) — this is shaping your ability to act.
//	!! CRISIS STATE — your suffering load is critical (0.95/1.0). You cannot pursue external goals. Address this first.
//
// followed, most severe first, by two lines per active stressor, each
// indented by two spaces, with one "#" per whole tenth of severity in a bar
// of ten cells:
//
//	[##........] repeated_failure 0.25  4 of 6 goals failed
//	Will ease when: bring the failure rate below 30% by completing goals successfully
//
// The lines are joined by "\n" with no trailing newline.
func (s *State) Fragment() string {
	load := s.Load()
	var num [32]byte // %.2f of one number, without fmt: few allocations per cycle
	if len(s.Active) == 0 || LevelOf(load) == LevelNone {
		return "No active suffering. Load: " + string(strconv.AppendFloat(num[:0], load, 'f', 2, 64)) + "/1.0."
	}
	sorted := s.BySeverity()
	n := 128 // the header
	for i := range sorted {
		n += 80 + len(sorted[i].Type) + len(sorted[i].Description) + len(sorted[i].Condition)
	}
	var b strings.Builder
	b.Grow(n)
	switch LevelOf(load) {
	case LevelCrisis:
		b.WriteString("!! CRISIS STATE — your suffering load is critical (")
		b.Write(strconv.AppendFloat(num[:0], load, 'f', 2, 64))
		b.WriteString("/1.0). You cannot pursue external goals. Address this first.")
	case LevelDominant:
		b.WriteString("HIGH SUFFERING (")
		b.Write(strconv.AppendFloat(num[:0], load, 'f', 2, 64))
		b.WriteString("/1.0) — this is shaping your ability to act.")
	default:
		b.WriteString("Current suffering (")
		b.Write(strconv.AppendFloat(num[:0], load, 'f', 2, 64))
		b.WriteString("/1.0):")
	}
	for _, st := range sorted {
		filled := max(0, min(10, int(math.Floor(st.Severity*10+loadEpsilon))))
		cond := oneLine(st.Condition)
		if cond == "" {
			cond = "(not stated)"
		}
		b.WriteString("\n  [")
		for k := range 10 {
			if k < filled {
				b.WriteByte('#')
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteString("] ")
		b.WriteString(oneLine(st.Type))
		b.WriteByte(' ')
		b.Write(strconv.AppendFloat(num[:0], st.Severity, 'f', 2, 64))
		b.WriteString("  ")
		b.WriteString(oneLine(st.Description))
		b.WriteString("\n  Will ease when: ")
		b.WriteString(cond)
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

// Validate checks that the state holds usable values: every type non-empty,
// every severity, peak and escalation rate a finite number in 0–1, and a
// non-negative crisis counter. The error wraps [ErrInvalid] and names the
// offending field, e.g. "active[2].severity". Over-cap or unnormalised
// state (more than MaxActive active stressors, types in mixed case,
// duplicates) is valid here: [State.Enforce] trims it.
func (s *State) Validate() error {
	check := func(field string, i int, st Stressor) error {
		where := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(st.Type) == "" {
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
	for i, st := range s.Active {
		if err := check("active", i, st); err != nil {
			return err
		}
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

// Enforce brings stored state within the spec §4 rules and returns a
// description of each change (nil when there was none). It is applied on
// load, so over-cap state is trimmed, never refused:
//
//   - types are normalised ([Normalize]) and peaks raised to at least the
//     severity;
//   - duplicate active types are merged: the most severe stays active, the
//     others move to the resolved history;
//   - beyond MaxActive, the most severe stay active and the rest move to the
//     resolved history, with a Resolution saying why;
//   - the resolved history keeps its newest MaxResolved entries (a full
//     history without spare capacity gets room for MaxResolved/4 more, which
//     the next resolution would allocate anyway; that is not a change).
//
// Resolved entries get ResolvedAt now when they had none.
func (s *State) Enforce(now time.Time) []string {
	var cuts []string
	renamed := 0
	fix := func(st *Stressor) {
		if n := Normalize(st.Type); n != st.Type {
			st.Type = n
			renamed++
		}
		st.Peak = max(st.Peak, st.Severity)
	}
	for i := range s.Active {
		fix(&s.Active[i])
	}
	for i := range s.Resolved {
		fix(&s.Resolved[i])
	}
	if renamed > 0 {
		cuts = append(cuts, fmt.Sprintf("stressor types normalised: %d", renamed))
	}
	demote := func(st Stressor, why string) {
		st.Resolution = why
		if st.ResolvedAt.IsZero() {
			st.ResolvedAt = now
		}
		s.Resolved = append(s.Resolved, st)
	}
	// Most severe first; keep the first of each type and at most MaxActive.
	sorted := s.BySeverity()
	seen := map[string]bool{}
	var keep []Stressor
	merged, dropped := 0, 0
	for _, st := range sorted {
		switch {
		case seen[st.Type]:
			demote(st, "merged on load: the same stressor type was active twice")
			merged++
		case len(keep) >= MaxActive:
			demote(st, fmt.Sprintf("demoted on load: more than %d active stressors; kept the %d most severe", MaxActive, MaxActive))
			dropped++
		default:
			seen[st.Type] = true
			keep = append(keep, st)
		}
	}
	if merged+dropped > 0 {
		// Keep onset order among the survivors.
		var active []Stressor
		for _, st := range s.Active {
			if i := slices.IndexFunc(keep, func(k Stressor) bool { return k == st }); i >= 0 {
				active = append(active, st)
				keep = slices.Delete(keep, i, i+1)
			}
		}
		s.Active = active
	}
	if merged > 0 {
		cuts = append(cuts, fmt.Sprintf("duplicate active stressors merged: %d", merged))
	}
	if dropped > 0 {
		cuts = append(cuts, fmt.Sprintf("active stressors: %d → %d", len(s.Active)+dropped, MaxActive))
	}
	if n := len(s.Resolved) - MaxResolved; n > 0 {
		s.Resolved = slices.Delete(s.Resolved, 0, n)
		cuts = append(cuts, fmt.Sprintf("resolved history: %d → %d", n+MaxResolved, MaxResolved))
	}
	if len(s.Resolved) == MaxResolved && cap(s.Resolved) < MaxResolved+MaxResolved/4 {
		// The room the next resolution's append would allocate, so that
		// an agent loaded at its caps takes the same memory before its
		// first cycle as after it.
		r := make([]Stressor, MaxResolved, MaxResolved+MaxResolved/4) // not slices.Grow, which would double it
		copy(r, s.Resolved)
		s.Resolved = r
	}
	return cuts
}

// MaxTextChars caps a stressor's description and condition, in characters
// (Unicode code points).
const MaxTextChars = 500

// oneLine flattens s to one line (runs of whitespace become one space) and
// cuts it to MaxTextChars characters, so that model-written text can never
// break the prompt's layout.
func oneLine(s string) string {
	if !isOneLine(s) {
		s = strings.Join(strings.Fields(s), " ")
	}
	return runes.Head(s, MaxTextChars)
}

// isOneLine reports whether strings.Join(strings.Fields(s), " ") == s
// certainly holds, without allocating: s is ASCII with no control white
// space, no leading or trailing space and no two spaces in a row. Non-ASCII
// text takes the slow path (Unicode has other spaces).
func isOneLine(s string) bool {
	prevSpace := true // a leading space is not one line
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		default:
			prevSpace = false
		}
	}
	return !prevSpace || s == ""
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
