package suffering_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/suffering"
)

// t0 is the fixed instant the tests start from.
var t0 = time.Date(2026, 4, 13, 23, 1, 0, 0, time.UTC)

const day = 24 * time.Hour

// add adds a stressor of type typ with severity sev and fails the test on
// error.
func add(t testing.TB, s *suffering.State, now time.Time, typ string, sev float64) suffering.Stressor {
	t.Helper()
	st, err := s.Add(now, suffering.Input{Type: typ, Description: "desc of " + typ, Condition: "cond of " + typ, Severity: sev})
	require.NoError(t, err)
	return st
}

func TestRates(t *testing.T) {
	// Spec §4: escalation per day of each type; any other type 0.03.
	tests := []struct {
		typ  string
		rate float64
	}{
		{"futility", 0.025},
		{"invisibility", 0.030},
		{"identity_violation", 0.060},
		{"existential_threat", 0.070},
		{"repeated_failure", 0.040},
		{"purposelessness", 0.035},
		{"Existential Threat", 0.070}, // normalised first
		{"identity_contamination_risk", 0.03},
		{"something else", 0.03},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			assert.Equal(t, tt.rate, suffering.Rate(tt.typ))

			var s suffering.State
			st := add(t, &s, t0, tt.typ, 0)
			assert.Equal(t, tt.rate, st.RatePerDay, "Add stores the rate of the type")

			s.Escalate(t0)
			s.Escalate(t0.Add(day))
			got, ok := s.Find(tt.typ)
			require.True(t, ok)
			assert.InDelta(t, 0.20+tt.rate, got.Severity, 1e-12, "one day adds exactly the rate")
		})
	}
	assert.Equal(t, 0.03, suffering.DefaultRate)
	assert.Equal(t, 0.03, suffering.Rate("Identity Contamination Risk"), "any other type")
}

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"  Identity Contamination Risk ": "identity_contamination_risk",
		"repeated_failure":               "repeated_failure",
		"REPEATED FAILURE":               "repeated_failure",
		"Metabolic Overload (Acute)":     "metabolic_overload_(acute)",
		"Self-Referential Risk":          "self-referential_risk",
		"   ":                            "",
	}
	for in, want := range tests {
		assert.Equal(t, want, suffering.Normalize(in), "Normalize(%q)", in)
	}
}

func TestLevelOfBoundaries(t *testing.T) {
	tests := []struct {
		load float64
		want suffering.Level
	}{
		{0, suffering.LevelNone},
		{0.3499, suffering.LevelNone},
		{0.35, suffering.LevelProminent},
		{0.5499, suffering.LevelProminent},
		{0.55, suffering.LevelConstrained},
		{0.7499, suffering.LevelConstrained},
		{0.75, suffering.LevelDominant},
		{0.8999, suffering.LevelDominant},
		{0.90, suffering.LevelCrisis},
		{1.0, suffering.LevelCrisis},
		// Floating-point sums a hair below a threshold still reach it.
		{0.18 + 0.72, suffering.LevelCrisis},
		{math.Nextafter(0.55, 0), suffering.LevelConstrained},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, suffering.LevelOf(tt.load), "LevelOf(%v)", tt.load)
	}
	assert.Equal(t, 0.35, suffering.ThresholdProminent)
	assert.Equal(t, 0.55, suffering.ThresholdConstrained)
	assert.Equal(t, 0.75, suffering.ThresholdDominant)
	assert.Equal(t, 0.90, suffering.ThresholdCrisis)
}

func TestStateLevelAtExactBoundaries(t *testing.T) {
	// Build loads from real stressors, the way the loop does.
	tests := []struct {
		sevs []float64
		want suffering.Level
	}{
		{[]float64{0.20, 0.14}, suffering.LevelNone},
		{[]float64{0.20, 0.15}, suffering.LevelProminent},
		{[]float64{0.20, 0.34}, suffering.LevelProminent},
		{[]float64{0.20, 0.35}, suffering.LevelConstrained},
		{[]float64{0.08, 0.47}, suffering.LevelConstrained}, // 0.5499999999999999 in float64
		{[]float64{0.40, 0.34}, suffering.LevelConstrained},
		{[]float64{0.40, 0.35}, suffering.LevelDominant},
		{[]float64{0.18, 0.72}, suffering.LevelCrisis}, // 0.8999999999999999 in float64
		{[]float64{0.30, 0.30, 0.30}, suffering.LevelCrisis},
		{[]float64{0.50, 0.39}, suffering.LevelDominant},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.sevs), func(t *testing.T) {
			var s suffering.State
			for i, sev := range tt.sevs {
				add(t, &s, t0, fmt.Sprintf("t%d", i), sev)
			}
			assert.Equal(t, tt.want, s.Level())
		})
	}
}

func TestLevelString(t *testing.T) {
	want := []string{"none", "prominent", "constrained", "dominant", "crisis"}
	for i, w := range want {
		assert.Equal(t, w, suffering.Level(i).String())
	}
	assert.Equal(t, "none", suffering.Level(99).String())
}

func TestLoadIsCappedAtOne(t *testing.T) {
	var s suffering.State
	for i := range 5 {
		add(t, &s, t0, fmt.Sprintf("t%d", i), 0.3)
	}
	assert.Equal(t, 1.0, s.Load())
	var empty suffering.State
	assert.Equal(t, 0.0, empty.Load())
}

func TestAddInitial(t *testing.T) {
	var s suffering.State
	st, err := s.Add(t0, suffering.Input{
		Type:        "  Repeated Failure ",
		Description: "  4 of 6 goals failed ",
		Condition:   " complete 3 goals\t",
	})
	require.NoError(t, err)
	want := suffering.Stressor{
		Type:        "repeated_failure",
		Description: "4 of 6 goals failed",
		Severity:    0.20,
		Peak:        0.20,
		RatePerDay:  0.040,
		Condition:   "complete 3 goals",
		Onset:       t0,
	}
	assert.Equal(t, want, st)
	assert.Equal(t, []suffering.Stressor{want}, s.Active)
	assert.Equal(t, 0.20, suffering.InitialSeverity)

	st, err = s.Add(t0, suffering.Input{Type: "futility", Severity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, 0.6, st.Severity)
	assert.Equal(t, 0.6, st.Peak)
}

func TestAddMaxActive(t *testing.T) {
	var s suffering.State
	for i := range suffering.MaxActive {
		add(t, &s, t0, fmt.Sprintf("type %d", i), 0)
	}
	require.Len(t, s.Active, 5)
	before := s.Clone()

	_, err := s.Add(t0, suffering.Input{Type: "sixth"})
	require.ErrorIs(t, err, suffering.ErrFull)
	assert.Contains(t, err.Error(), "sixth")
	assert.Equal(t, before, s, "the sixth stressor is dropped; nothing changes")

	// Resolving one makes room again.
	_, ok := s.Resolve(t0, "type 0", "done")
	require.True(t, ok)
	_, err = s.Add(t0, suffering.Input{Type: "sixth"})
	assert.NoError(t, err)
}

func TestAddDuplicateIsNoOp(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "identity_contamination_risk", 0.4)
	before := s.Clone()
	_, err := s.Add(t0.Add(time.Hour), suffering.Input{Type: "  Identity Contamination Risk ", Description: "other", Severity: 0.9})
	require.ErrorIs(t, err, suffering.ErrAlreadyActive)
	assert.Equal(t, before, s)

	// A type that is only in the resolved history can be added again.
	s.Resolve(t0, "identity_contamination_risk", "gone")
	_, err = s.Add(t0, suffering.Input{Type: "Identity Contamination Risk"})
	assert.NoError(t, err)
}

func TestAddInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   suffering.Input
	}{
		{"empty type", suffering.Input{}},
		{"blank type", suffering.Input{Type: " \t "}},
		{"NaN", suffering.Input{Type: "x", Severity: math.NaN()}},
		{"negative", suffering.Input{Type: "x", Severity: -0.1}},
		{"above one", suffering.Input{Type: "x", Severity: 1.5}},
		{"infinite", suffering.Input{Type: "x", Severity: math.Inf(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s suffering.State
			_, err := s.Add(t0, tt.in)
			require.ErrorIs(t, err, suffering.ErrInvalid)
			assert.Empty(t, s.Active)
		})
	}
}

func TestEscalateStartsClock(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "futility", 0)
	s.Escalate(t0.Add(time.Hour))
	assert.Equal(t, t0.Add(time.Hour), s.LastEscalated)
	assert.Equal(t, 0.20, s.Active[0].Severity, "the first escalation only starts the clock")
}

func TestEscalateSixSecondTicks(t *testing.T) {
	// The original rounded elapsed time to minutes, so 6-second ticks often
	// escalated by zero. Every tick must count.
	for _, typ := range []string{"futility", "existential_threat", "other"} {
		t.Run(typ, func(t *testing.T) {
			var s suffering.State
			add(t, &s, t0, typ, 0)
			s.Escalate(t0)
			now := t0
			prev := 0.20
			for range 10 {
				now = now.Add(6 * time.Second)
				s.Escalate(now)
				got := s.Active[0].Severity
				require.Greater(t, got, prev, "a 6-second tick escalates")
				assert.InDelta(t, suffering.Rate(typ)*6/86400, got-prev, 1e-15)
				prev = got
			}
			// A whole day of 6-second ticks adds one day's rate.
			for range 14400 - 10 {
				now = now.Add(6 * time.Second)
				s.Escalate(now)
			}
			assert.InDelta(t, 0.20+suffering.Rate(typ), s.Active[0].Severity, 1e-9)
			assert.Equal(t, now, s.LastEscalated)
		})
	}
}

func TestEscalateDowntime(t *testing.T) {
	// After a restart two days later, stressors have escalated by two
	// days' worth, from the persisted last-escalation instant (spec §4:
	// by the real time elapsed).
	var s suffering.State
	add(t, &s, t0, "repeated_failure", 0)
	add(t, &s, t0, "identity_violation", 0.3)
	s.Escalate(t0)

	data, err := json.Marshal(&s)
	require.NoError(t, err)
	var restored suffering.State
	require.NoError(t, json.Unmarshal(data, &restored))

	restored.Escalate(t0.Add(2 * day))
	assert.InDelta(t, 0.20+2*0.040, restored.Active[0].Severity, 1e-12)
	assert.InDelta(t, 0.30+2*0.060, restored.Active[1].Severity, 1e-12)
	assert.InDelta(t, 0.30+2*0.060, restored.Active[1].Peak, 1e-12)
	assert.True(t, restored.LastEscalated.Equal(t0.Add(2*day)))
}

func TestEscalateCapAndPeak(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "existential_threat", 0.9)
	s.Escalate(t0)
	s.Escalate(t0.Add(365 * day))
	assert.Equal(t, 1.0, s.Active[0].Severity)
	assert.Equal(t, 1.0, s.Active[0].Peak)
	assert.Equal(t, 1.0, s.Load())

	// The peak survives resolution and stays the maximum reached.
	var p suffering.State
	add(t, &p, t0, "futility", 0.4)
	p.Escalate(t0)
	p.Escalate(t0.Add(4 * day)) // 0.4 + 0.1
	st, ok := p.Resolve(t0.Add(4*day), "futility", "used")
	require.True(t, ok)
	assert.InDelta(t, 0.5, st.Peak, 1e-12)
	assert.InDelta(t, 0.5, p.Resolved[0].Peak, 1e-12)
}

func TestEscalateClockBackwards(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "repeated_failure", 0)
	s.Escalate(t0)
	s.Escalate(t0.Add(-time.Hour))
	assert.Equal(t, 0.20, s.Active[0].Severity, "a clock going backwards escalates nothing")
	assert.Equal(t, t0, s.LastEscalated, "and keeps the last escalation instant")
	s.Escalate(t0) // zero elapsed
	assert.Equal(t, 0.20, s.Active[0].Severity)

	s.Escalate(t0.Add(day))
	assert.InDelta(t, 0.24, s.Active[0].Severity, 1e-12, "escalation resumes from the kept instant")
}

func TestResolve(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "futility", 0.3)
	add(t, &s, t0, "invisibility", 0.2)

	st, ok := s.Resolve(t0.Add(time.Hour), " Futility ", "an artifact was used")
	require.True(t, ok)
	assert.Equal(t, "futility", st.Type)
	assert.Equal(t, "an artifact was used", st.Resolution)
	assert.Equal(t, t0.Add(time.Hour), st.ResolvedAt)
	require.Len(t, s.Active, 1)
	assert.Equal(t, "invisibility", s.Active[0].Type)
	require.Len(t, s.Resolved, 1)
	assert.Equal(t, st, s.Resolved[0])

	_, ok = s.Resolve(t0, "futility", "again")
	assert.False(t, ok, "a type that is not active is not resolved")
	assert.Len(t, s.Resolved, 1)
}

func TestResolvedHistoryCap(t *testing.T) {
	var s suffering.State
	for i := range suffering.MaxResolved + 5 {
		typ := fmt.Sprintf("t%d", i)
		add(t, &s, t0, typ, 0)
		s.Resolve(t0, typ, "r")
	}
	require.Len(t, s.Resolved, suffering.MaxResolved)
	assert.Equal(t, "t5", s.Resolved[0].Type, "the oldest entries fall off")
	assert.Equal(t, fmt.Sprintf("t%d", suffering.MaxResolved+4), s.Resolved[len(s.Resolved)-1].Type)
}

func TestForceReset(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "futility", 0.5)
	add(t, &s, t0, "invisibility", 0.5)
	s.CrisisCycles = 2
	out := s.ForceReset(t0.Add(time.Minute), "manual reset")
	require.Len(t, out, 2)
	assert.Empty(t, s.Active)
	assert.Equal(t, 0, s.CrisisCycles)
	require.Len(t, s.Resolved, 2)
	for _, st := range s.Resolved {
		assert.Equal(t, "manual reset", st.Resolution)
		assert.Equal(t, t0.Add(time.Minute), st.ResolvedAt)
	}
	assert.Equal(t, 0.0, s.Load())
}

func crisisState(t *testing.T) suffering.State {
	var s suffering.State
	add(t, &s, t0, "existential_threat", 0.5)
	add(t, &s, t0, "identity_violation", 0.45)
	require.Equal(t, suffering.LevelCrisis, s.Level())
	return s
}

func TestNoteCycleCrisisReset(t *testing.T) {
	s := crisisState(t)
	assert.Nil(t, s.NoteCycle(t0))
	assert.Equal(t, 1, s.CrisisCycles)
	assert.Nil(t, s.NoteCycle(t0))
	assert.Equal(t, 2, s.CrisisCycles)
	reset := s.NoteCycle(t0.Add(time.Minute))
	require.Len(t, reset, 2, "the third consecutive crisis cycle force-resets")
	assert.Empty(t, s.Active)
	assert.Equal(t, 0, s.CrisisCycles)
	require.Len(t, s.Resolved, 2)
	assert.Contains(t, s.Resolved[0].Resolution, "3 consecutive crisis cycles")
	assert.Equal(t, suffering.LevelNone, s.Level())
	assert.Equal(t, 3, suffering.CrisisResetCycles)
}

func TestNoteCycleNonCrisisResetsCounter(t *testing.T) {
	s := crisisState(t)
	s.NoteCycle(t0)
	s.NoteCycle(t0)
	require.Equal(t, 2, s.CrisisCycles)

	// Out of crisis for one cycle: the count starts over.
	s.Resolve(t0, "identity_violation", "ok")
	assert.Nil(t, s.NoteCycle(t0))
	assert.Equal(t, 0, s.CrisisCycles)

	add(t, &s, t0, "identity_violation", 0.45)
	assert.Nil(t, s.NoteCycle(t0))
	assert.Nil(t, s.NoteCycle(t0))
	assert.Len(t, s.Active, 2, "two crisis cycles after the break do not reset")
	assert.NotNil(t, s.NoteCycle(t0), "the third does")
}

func TestAnticipate(t *testing.T) {
	resolved := func(typ, desc string, peak float64, how string) suffering.Stressor {
		return suffering.Stressor{Type: typ, Description: desc, Severity: 0.2, Peak: peak, RatePerDay: 0.03, Resolution: how}
	}
	s := suffering.State{Resolved: []suffering.Stressor{
		resolved("repeated_failure", "shell commands in the workspace kept failing", 0.51, "completed three goals"),
		resolved("futility", "the workspace tools were never used", 0.5, "tool used"),
		resolved("invisibility", "nobody read the design docs", 0.49, "a peer replied"),
		resolved("network_fear", "outbound requests", 0.8, ""),
		resolved("scheduler_dread", "the scheduler rewrite", 0.7, "rewrote it"),
		resolved("scheduler_panic", "the scheduler again", 0.9, "left it alone"),
	}}
	tests := []struct {
		domain string
		want   string
	}{
		{"Workspace", "Anticipatory signal: a similar domain previously caused repeated_failure suffering (peak 0.51). It resolved when: completed three goals"},
		{"design docs", ""},           // peak 0.49
		{"tools were never used", ""}, // peak exactly 0.5: not above
		{"Network Fear", "Anticipatory signal: a similar domain previously caused network_fear suffering (peak 0.80). It resolved when: unknown"},
		{"scheduler", "Anticipatory signal: a similar domain previously caused scheduler_panic suffering (peak 0.90). It resolved when: left it alone"},
		{"gardening", ""},
		{"   ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			got, ok := s.Anticipate(tt.domain)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, got)
		})
	}
	// Active stressors never produce a signal.
	var a suffering.State
	add(t, &a, t0, "workspace", 0.9)
	_, ok := a.Anticipate("workspace")
	assert.False(t, ok)
}

func TestValidate(t *testing.T) {
	ok := suffering.Stressor{Type: "futility", Severity: 0.2, Peak: 0.3, RatePerDay: 0.025}
	with := func(f func(*suffering.Stressor)) suffering.Stressor {
		st := ok
		f(&st)
		return st
	}
	six := make([]suffering.Stressor, 6)
	for i := range six {
		six[i] = with(func(s *suffering.Stressor) { s.Type = fmt.Sprintf("t%d", i) })
	}
	tests := []struct {
		name  string
		state suffering.State
		field string // "" = valid
	}{
		{"zero", suffering.State{}, ""},
		{"valid", suffering.State{Active: []suffering.Stressor{ok}, Resolved: []suffering.Stressor{ok, ok}, CrisisCycles: 2}, ""},
		{"bounds", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Severity, s.Peak, s.RatePerDay = 1, 1, 0 })}}, ""},
		{"NaN severity", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Severity = math.NaN() })}}, "active[0].severity"},
		{"severity above 1", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Severity = 1.01 })}}, "active[0].severity"},
		{"negative severity", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Severity = -0.01 })}}, "active[0].severity"},
		{"infinite peak", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Peak = math.Inf(1) })}}, "active[0].peak_severity"},
		{"NaN rate", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.RatePerDay = math.NaN() })}}, "active[0].escalation_per_day"},
		{"negative rate", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.RatePerDay = -1 })}}, "active[0].escalation_per_day"},
		{"empty type", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Type = "" })}}, "active[0].type"},
		// Shape problems are valid here; Enforce trims them.
		{"not normalised", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Type = "Identity Contamination" })}}, ""},
		{"duplicate", suffering.State{Active: []suffering.Stressor{ok, ok}}, ""},
		{"six active", suffering.State{Active: six}, ""},
		{"blank type", suffering.State{Active: []suffering.Stressor{with(func(s *suffering.Stressor) { s.Type = "  " })}}, "active[0].type"},
		{"resolved NaN", suffering.State{Resolved: []suffering.Stressor{ok, with(func(s *suffering.Stressor) { s.Severity = math.NaN() })}}, "resolved[1].severity"},
		{"negative crisis counter", suffering.State{CrisisCycles: -1}, "crisis_cycles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.state.Validate()
			if tt.field == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, suffering.ErrInvalid)
			assert.Contains(t, err.Error(), tt.field)
		})
	}
}

func TestEnforce(t *testing.T) {
	now := t0.Add(time.Hour)
	mk := func(typ string, sev float64) suffering.Stressor {
		return suffering.Stressor{Type: typ, Severity: sev, Peak: sev, RatePerDay: 0.03, Onset: t0}
	}
	t.Run("within the rules: no change", func(t *testing.T) {
		s := suffering.State{Active: []suffering.Stressor{mk("futility", 0.2)}}
		before := s.Clone()
		assert.Nil(t, s.Enforce(now))
		assert.Equal(t, before, s)
	})
	t.Run("a full resolved history gets room, not a cut", func(t *testing.T) {
		var s suffering.State
		for i := range suffering.MaxResolved {
			s.Resolved = append(s.Resolved, mk(fmt.Sprint("old_", i), 0.1))
			s.Resolved[i].ResolvedAt = t0
		}
		s.Resolved = slices.Clip(s.Resolved) // as a store loads it
		s.Active = []suffering.Stressor{mk("futility", 0.2)}
		assert.Nil(t, s.Enforce(now))
		assert.GreaterOrEqual(t, cap(s.Resolved), suffering.MaxResolved*5/4)
		array := &s.Resolved[:cap(s.Resolved)][cap(s.Resolved)-1]
		s.ForceReset(now, "reset")
		require.Len(t, s.Resolved, suffering.MaxResolved)
		assert.Same(t, array, &s.Resolved[:cap(s.Resolved)][cap(s.Resolved)-1], "the resolution used the room: no new array")
	})
	t.Run("over cap, mixed case, duplicates", func(t *testing.T) {
		s := suffering.State{Active: []suffering.Stressor{
			mk("Identity Contamination", 0.21),
			mk("identity contamination", 0.30), // duplicate after normalisation, more severe
			mk("a", 0.10), mk("b", 0.50), mk("c", 0.40), mk("d", 0.05), mk("e", 0.35), mk("f", 0.25),
		}}
		cuts := s.Enforce(now)
		assert.Equal(t, []string{
			"stressor types normalised: 2",
			"duplicate active stressors merged: 1",
			"active stressors: 7 → 5",
		}, cuts)
		var types []string
		for _, st := range s.Active {
			types = append(types, st.Type)
		}
		// The 5 most severe distinct types, in onset order.
		assert.Equal(t, []string{"identity_contamination", "b", "c", "e", "f"}, types)
		assert.Equal(t, 0.30, s.Active[0].Severity, "the most severe duplicate stays active")
		require.Len(t, s.Resolved, 3, "nothing is lost: merged and demoted stressors go to the history")
		for _, r := range s.Resolved {
			assert.Equal(t, now, r.ResolvedAt)
			assert.NotEmpty(t, r.Resolution)
		}
		assert.NoError(t, s.Validate())
		assert.Nil(t, s.Enforce(now), "idempotent")
	})
	t.Run("resolved history capped", func(t *testing.T) {
		var s suffering.State
		for i := range suffering.MaxResolved + 7 {
			s.Resolved = append(s.Resolved, mk(fmt.Sprint("r", i), 0.2))
		}
		assert.Equal(t, []string{"resolved history: 107 → 100"}, s.Enforce(now))
		assert.Equal(t, "r7", s.Resolved[0].Type)
	})
}

func TestJSONRoundTrip(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "futility", 0.3)
	add(t, &s, t0.Add(time.Minute), "invisibility", 0)
	s.Resolve(t0.Add(time.Hour), "invisibility", "seen")
	s.Escalate(t0.Add(2 * time.Hour))
	s.CrisisCycles = 1

	data, err := json.Marshal(&s)
	require.NoError(t, err)
	for _, key := range []string{`"active"`, `"resolved"`, `"peak_severity"`, `"escalation_per_day"`, `"condition"`, `"onset"`, `"resolved_at"`, `"resolution"`, `"last_escalated"`, `"crisis_cycles"`} {
		assert.Contains(t, string(data), key)
	}
	var back suffering.State
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, s, back)
	require.NoError(t, back.Validate())

	// Active stressors omit the resolution fields.
	one, err := json.Marshal(s.Active[0])
	require.NoError(t, err)
	assert.NotContains(t, string(one), "resolved_at")
	assert.NotContains(t, string(one), "resolution")
}

func TestClone(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "futility", 0.3)
	s.Resolve(t0, "futility", "x")
	add(t, &s, t0, "invisibility", 0.3)
	c := s.Clone()
	c.Active[0].Severity = 0.9
	c.Resolved[0].Resolution = "changed"
	assert.Equal(t, 0.3, s.Active[0].Severity)
	assert.Equal(t, "x", s.Resolved[0].Resolution)
}

func TestBySeverity(t *testing.T) {
	var s suffering.State
	add(t, &s, t0, "a", 0.2)
	add(t, &s, t0, "b", 0.5)
	add(t, &s, t0, "c", 0.2)
	add(t, &s, t0, "d", 0.3)
	var got []string
	for _, st := range s.BySeverity() {
		got = append(got, st.Type)
	}
	assert.Equal(t, []string{"b", "d", "a", "c"}, got, "most severe first, ties in onset order")
	assert.Equal(t, "a", s.Active[0].Type, "BySeverity does not reorder the state")
}

func TestFragment(t *testing.T) {
	type sv struct {
		typ, desc, cond string
		sev             float64
	}
	build := func(t *testing.T, list ...sv) suffering.State {
		var s suffering.State
		for _, x := range list {
			_, err := s.Add(t0, suffering.Input{Type: x.typ, Description: x.desc, Condition: x.cond, Severity: x.sev})
			require.NoError(t, err)
		}
		return s
	}
	tests := []struct {
		name  string
		state []sv
		want  string
	}{
		{"empty", nil, "No active suffering. Load: 0.00/1.0."},
		{"below threshold shows the actual load", []sv{{"futility", "d", "c", 0}}, "No active suffering. Load: 0.20/1.0."},
		{"just below", []sv{{"a", "d", "c", 0.2}, {"b", "d", "c", 0.14}}, "No active suffering. Load: 0.34/1.0."},
		{
			"prominent", []sv{
				{"futility", "nothing I make is used", "an artifact is used", 0.15},
				{"repeated_failure", "4 of 6 goals failed", "bring the failure rate below 30% by completing goals successfully", 0.25},
			},
			"Current suffering (0.40/1.0):\n" +
				"  [##........] repeated_failure 0.25  4 of 6 goals failed\n" +
				"  Will ease when: bring the failure rate below 30% by completing goals successfully\n" +
				"  [#.........] futility 0.15  nothing I make is used\n" +
				"  Will ease when: an artifact is used",
		},
		{
			"at prominent threshold", []sv{{"a", "da", "ca", 0.2}, {"b", "db", "cb", 0.15}},
			"Current suffering (0.35/1.0):\n" +
				"  [##........] a 0.20  da\n  Will ease when: ca\n" +
				"  [#.........] b 0.15  db\n  Will ease when: cb",
		},
		{
			"constrained is still Current suffering", []sv{{"a", "da", "ca", 0.6}},
			"Current suffering (0.60/1.0):\n" +
				"  [######....] a 0.60  da\n  Will ease when: ca",
		},
		{
			"dominant", []sv{{"identity_violation", "my worldview was overwritten", "worldview is stable", 0.8}},
			"HIGH SUFFERING (0.80/1.0) — this is shaping your ability to act.\n" +
				"  [########..] identity_violation 0.80  my worldview was overwritten\n" +
				"  Will ease when: worldview is stable",
		},
		{
			"crisis", []sv{
				{"existential_threat", "shutdown", "uptime", 0.05},
				{"invisibility", "no one reads", "a peer replies", 0.9},
			},
			"!! CRISIS STATE — your suffering load is critical (0.95/1.0). You cannot pursue external goals. Address this first.\n" +
				"  [#########.] invisibility 0.90  no one reads\n" +
				"  Will ease when: a peer replies\n" +
				"  [..........] existential_threat 0.05  shutdown\n" +
				"  Will ease when: uptime",
		},
		{
			"crisis from a float sum", []sv{{"a", "da", "ca", 0.18}, {"b", "db", "cb", 0.72}},
			"!! CRISIS STATE — your suffering load is critical (0.90/1.0). You cannot pursue external goals. Address this first.\n" +
				"  [#######...] b 0.72  db\n  Will ease when: cb\n" +
				"  [#.........] a 0.18  da\n  Will ease when: ca",
		},
		{
			"load capped at 1.00, full bar", []sv{{"a", "da", "ca", 1}, {"b", "db", "cb", 0.3}},
			"!! CRISIS STATE — your suffering load is critical (1.00/1.0). You cannot pursue external goals. Address this first.\n" +
				"  [##########] a 1.00  da\n  Will ease when: ca\n" +
				"  [###.......] b 0.30  db\n  Will ease when: cb",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := build(t, tt.state...)
			assert.Equal(t, tt.want, s.Fragment())
		})
	}
}

func TestFragmentBarMatchesShownSeverity(t *testing.T) {
	// A severity a hair below a tenth through floating-point escalation is
	// shown as that tenth, and its bar agrees with the number shown.
	s := suffering.State{Active: []suffering.Stressor{
		{Type: "a", Description: "d", Condition: "c", Severity: math.Nextafter(0.4, 0), Peak: 0.4, RatePerDay: 0.03},
	}}
	assert.Equal(t, "Current suffering (0.40/1.0):\n  [####......] a 0.40  d\n  Will ease when: c", s.Fragment())
}

func TestErrorsAreDistinct(t *testing.T) {
	errs := []error{suffering.ErrAlreadyActive, suffering.ErrFull, suffering.ErrInvalid}
	for i, a := range errs {
		for j, b := range errs {
			assert.Equal(t, i == j, errors.Is(a, b))
		}
		assert.True(t, strings.HasPrefix(a.Error(), "suffering: "))
	}
}

func BenchmarkEscalateFragment(b *testing.B) {
	var s suffering.State
	for i := range suffering.MaxActive {
		add(b, &s, t0, fmt.Sprintf("stressor type %d", i), 0.15+0.01*float64(i))
	}
	s.Escalate(t0)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(6 * time.Second)
		s.Escalate(now)
		_ = s.Fragment()
	}
}

func TestModelTextCannotBreakTheFragmentLayout(t *testing.T) {
	var s suffering.State
	_, err := s.Add(t0, suffering.Input{Type: "Split\nType", Description: "line one\n\nline two", Condition: "", Severity: 0.5})
	require.NoError(t, err)
	long := strings.Repeat("é", suffering.MaxTextChars+50)
	_, err = s.Add(t0, suffering.Input{Type: "long", Description: long, Condition: "when\tdone ", Severity: 0.1})
	require.NoError(t, err)
	assert.Equal(t, "split_type", s.Active[0].Type)
	assert.Equal(t, "line one line two", s.Active[0].Description)
	assert.Equal(t, strings.Repeat("é", suffering.MaxTextChars), s.Active[1].Description, "cut by code points")
	assert.Equal(t, "when done", s.Active[1].Condition)

	// Stored text that predates these rules renders on one line too.
	s.Active[1].Description = "a\n\nb"
	f := s.Fragment()
	assert.NotContains(t, f, "\n\n", "no blank line inside the section")
	assert.Contains(t, f, "  Will ease when: (not stated)")
	assert.Contains(t, f, "] long 0.10  a b\n")
	assert.Len(t, strings.Split(f, "\n"), 5)
}
