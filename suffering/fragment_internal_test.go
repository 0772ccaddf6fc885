package suffering

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/runes"
)

// fragmentReference is Fragment written the plain way (fmt,
// strings.Fields on every field), before Fragment was rewritten to
// allocate little: the rewrite must produce exactly the same text.
func fragmentReference(s *State) string {
	load := s.Load()
	if len(s.Active) == 0 || LevelOf(load) == LevelNone {
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
	one := func(s string) string { return runes.Head(strings.Join(strings.Fields(s), " "), MaxTextChars) }
	for _, st := range s.BySeverity() {
		filled := max(0, min(10, int(math.Floor(st.Severity*10+loadEpsilon))))
		cond := one(st.Condition)
		if cond == "" {
			cond = "(not stated)"
		}
		fmt.Fprintf(&b, "\n  [%s%s] %s %.2f  %s\n  Will ease when: %s",
			strings.Repeat("#", filled), strings.Repeat(".", 10-filled),
			one(st.Type), st.Severity, one(st.Description), cond)
	}
	return b.String()
}

func TestFragmentMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name   string
		active []Stressor
	}{
		{"none", nil},
		{"low", []Stressor{{Type: "futility", Description: "d", Condition: "c", Severity: 0.05}}},
		{"present", []Stressor{{Type: "invisibility", Description: "no one cites my notes", Condition: "a peer cites one", Severity: 0.4}}},
		{"dominant", []Stressor{{Type: "a", Severity: 0.7}, {Type: "b  c", Description: " x\ty ", Condition: "", Severity: 0.66}}},
		{"crisis", []Stressor{{Type: "a", Severity: 1}, {Type: "b", Severity: 0.95}, {Type: "c", Severity: 0.9}}},
		{"unicode spaces", []Stressor{{Type: "t\u00a0u", Description: "a\u2003b\u0085c", Condition: "é  è", Severity: 0.5}}},
		{"odd numbers", []Stressor{{Type: "t", Severity: math.NaN()}, {Type: "u", Severity: math.Inf(1)}, {Type: "v", Severity: -0.0001}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &State{Active: tc.active}
			require.Equal(t, fragmentReference(s), s.Fragment(), "Fragment")
		})
	}
}

// FuzzFragment checks Fragment against fragmentReference on arbitrary
// stressor text and severities.
func FuzzFragment(f *testing.F) {
	f.Add("invisibility", "no one cites my notes", "a peer cites one", 0.4, "futility", 0.9)
	f.Add(" a  b ", "\t\n", "", 1.0, "x\u00a0y", 0.0)
	f.Fuzz(func(t *testing.T, typ, desc, cond string, sev float64, typ2 string, sev2 float64) {
		s := &State{Active: []Stressor{
			{Type: typ, Description: desc, Condition: cond, Severity: sev},
			{Type: typ2, Description: cond, Condition: desc, Severity: sev2},
		}}
		require.Equal(t, fragmentReference(s), s.Fragment(), "Fragment")
	})
}

func TestIsOneLine(t *testing.T) {
	for _, s := range []string{"", "a", "a b", " a", "a ", "a  b", "a\tb", "é", "a\u00a0b", " ", "ab cd ef"} {
		want := strings.Join(strings.Fields(s), " ") == s
		got := isOneLine(s)
		if got {
			assert.True(t, want, "isOneLine(%q) = true, but Fields/Join changes it", s)
		}
		if want && s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x80 }) {
			assert.True(t, got, "isOneLine(%q) = false for plain one-line ASCII", s)
		}
	}
}
