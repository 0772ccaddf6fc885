package prompttest

import (
	"strings"
	"testing"

	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/prompt"
)

// The assertions below report failures with t.Errorf (the test goes on) and
// return whether they held, so a test can stop early when it must:
//
//	if !prompttest.SectionPresent(t, p, prompt.SectionTask) {
//		t.FailNow()
//	}

// Assemble assembles v with a, failing the test at once on an error.
func Assemble(t testing.TB, a *prompt.Assembler, v *prompt.View) *prompt.Prompt {
	t.Helper()
	p, err := a.Assemble(v)
	if err != nil {
		t.Fatalf("prompttest.Assemble: %v", err)
		return nil
	}
	return p
}

// SectionPresent asserts that the section called name is in p.
func SectionPresent(t testing.TB, p *prompt.Prompt, name string) bool {
	t.Helper()
	if _, ok := p.Section(name); !ok {
		t.Errorf("section %q is absent; present: %s", name, strings.Join(p.Names(), ", "))
		return false
	}
	return true
}

// SectionAbsent asserts that the section called name is not in p.
func SectionAbsent(t testing.TB, p *prompt.Prompt, name string) bool {
	t.Helper()
	if s, ok := p.Section(name); ok {
		t.Errorf("section %q is present, want it absent; its text:\n%s", name, s.Text)
		return false
	}
	return true
}

// SectionOrder asserts that the named sections are all present in p and
// appear in this order (other sections may come between them).
func SectionOrder(t testing.TB, p *prompt.Prompt, names ...string) bool {
	t.Helper()
	have := p.Names()
	pos := 0
	for _, name := range names {
		i := indexFrom(have, name, pos)
		if i < 0 {
			if indexFrom(have, name, 0) < 0 {
				t.Errorf("section order: %q is absent; present: %s", name, strings.Join(have, ", "))
			} else {
				t.Errorf("section order: %q comes too early; want order %s, have %s", name, strings.Join(names, ", "), strings.Join(have, ", "))
			}
			return false
		}
		pos = i + 1
	}
	return true
}

func indexFrom(s []string, x string, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == x {
			return i
		}
	}
	return -1
}

// SectionWithHeader returns the rendered text of the section called name, or ""
// (and an error reported) when it is absent.
func SectionWithHeader(t testing.TB, p *prompt.Prompt, name string) string {
	t.Helper()
	s, ok := p.Section(name)
	if !ok {
		t.Errorf("section %q is absent; present: %s", name, strings.Join(p.Names(), ", "))
		return ""
	}
	return s.Text
}

// SectionBody returns the text of the section called name after its first
// line (its header), or "" (and an error reported) when it is absent.
func SectionBody(t testing.TB, p *prompt.Prompt, name string) string {
	t.Helper()
	_, body, _ := strings.Cut(SectionWithHeader(t, p, name), "\n")
	return body
}

// Items returns the number of list items the section called name shows:
// its lines after the header that are indented by two spaces, not counting
// placeholders such as "  (none pending)" or a [prompt.CutMarker] line. It
// reports an error and returns 0 when the section is absent.
func Items(t testing.TB, p *prompt.Prompt, name string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(SectionBody(t, p, name), "\n") {
		rest, ok := strings.CutPrefix(line, "  ")
		if !ok || rest == "" || strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, prompt.CutMarker) {
			continue
		}
		n++
	}
	return n
}

// ShownOpinions returns how many opinions the opinions section shows (6 at
// most by default, spec §2 row 7).
func ShownOpinions(t testing.TB, p *prompt.Prompt) int {
	t.Helper()
	return Items(t, p, prompt.SectionOpinions)
}

// ShownQuestions returns how many open questions are shown (5 at most by
// default, spec §2 row 8).
func ShownQuestions(t testing.TB, p *prompt.Prompt) int {
	t.Helper()
	return Items(t, p, prompt.SectionQuestions)
}

// ShownGoals returns how many goals the recent-goals section shows (5 at
// most by default, spec §2 row 14), or 0 when the section is absent.
func ShownGoals(t testing.TB, p *prompt.Prompt) int {
	t.Helper()
	if _, ok := p.Section(prompt.SectionRecentGoals); !ok {
		return 0
	}
	return Items(t, p, prompt.SectionRecentGoals)
}

// ShownMessages returns how many peer messages are shown (5 at most by
// default, spec §2 row 15), or 0 when the section is absent.
func ShownMessages(t testing.TB, p *prompt.Prompt) int {
	t.Helper()
	if _, ok := p.Section(prompt.SectionPeerMessages); !ok {
		return 0
	}
	return Items(t, p, prompt.SectionPeerMessages)
}

// HistoryChars returns the number of characters of the narrative the
// history section shows (400 at most by default, spec §2 row 9); 0 for
// "(no history yet)".
func HistoryChars(t testing.TB, p *prompt.Prompt) int {
	t.Helper()
	body := SectionBody(t, p, prompt.SectionHistory)
	if body == "(no history yet)" {
		return 0
	}
	return runes.Count(body)
}

// FitsBudget asserts that p's text fits b (see [prompt.Budget.Check]).
func FitsBudget(t testing.TB, p *prompt.Prompt, b prompt.Budget) bool {
	t.Helper()
	if err := b.Check(p.Text); err != nil {
		t.Errorf("the prompt does not fit its budget: %v", err)
		return false
	}
	return true
}

// SectionCut asserts that the budget cut the section called name: it is
// reported in p.Cuts and its text shows [prompt.CutMarker].
func SectionCut(t testing.TB, p *prompt.Prompt, name string) bool {
	t.Helper()
	s, ok := p.Section(name)
	if !ok {
		t.Errorf("section %q is absent; present: %s", name, strings.Join(p.Names(), ", "))
		return false
	}
	reported := false
	for _, c := range p.Cuts {
		reported = reported || c.Section == name
	}
	switch {
	case !s.Cut || !reported:
		t.Errorf("section %q was not cut; cuts: %v", name, p.Cuts)
		return false
	case !strings.Contains(s.Text, prompt.CutMarker):
		t.Errorf("section %q was cut but shows no marker %q:\n%s", name, prompt.CutMarker, s.Text)
		return false
	}
	return true
}

// SectionIntact asserts that the section called name is present and was
// not cut by the budget.
func SectionIntact(t testing.TB, p *prompt.Prompt, name string) bool {
	t.Helper()
	s, ok := p.Section(name)
	if !ok {
		t.Errorf("section %q is absent; present: %s", name, strings.Join(p.Names(), ", "))
		return false
	}
	if s.Cut || strings.Contains(s.Text, prompt.CutMarker) {
		t.Errorf("section %q was cut:\n%s", name, s.Text)
		return false
	}
	return true
}
