package prompt_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// budgeted returns the trio assembler with budget b.
func budgeted(b prompt.Budget) *prompt.Assembler {
	cfg := prompttest.HollowConfig()
	cfg.Budget = b
	return prompt.New(cfg)
}

// big is a state whose trimmable sections are all large.
func big() *prompttest.State {
	s := prompttest.Cedar().Discoveries(20).Opinions(20).Questions(12).
		Narrative(strings.Repeat("history goes on. ", 40))
	for k := 0; k < 7; k++ {
		s.Inbox("Vault", strings.Repeat(fmt.Sprintf("message %d ", k), 20))
	}
	return s
}

func TestBudgetNotExceeded(t *testing.T) {
	full := prompttest.Assemble(t, trio(), big().View())
	p := prompttest.Assemble(t, budgeted(prompt.Budget{MaxChars: full.Chars}), big().View())
	assert.Equal(t, full.Text, p.Text, "a prompt that fits is not cut")
	assert.Nil(t, p.Cuts)
}

func TestBudgetCutsDiscoveriesFirst(t *testing.T) {
	full := prompttest.Assemble(t, trio(), big().View())
	b := prompt.Budget{MaxChars: full.Chars - 100}
	p := prompttest.Assemble(t, budgeted(b), big().View())

	prompttest.FitsBudget(t, p, b)
	require.Len(t, p.Cuts, 1)
	c := p.Cuts[0]
	assert.Equal(t, prompt.SectionDiscoveries, c.Section)
	before, _ := full.Section(prompt.SectionDiscoveries)
	assert.Equal(t, before.Chars, c.Before)
	assert.Less(t, c.After, c.Before)
	assert.Equal(t, fmt.Sprintf("discoveries: %d → %d characters", c.Before, c.After), c.String())
	prompttest.SectionCut(t, p, prompt.SectionDiscoveries)

	// The newest discoveries are kept; the marker stands where the older
	// ones were.
	text := prompttest.SectionWithHeader(t, p, prompt.SectionDiscoveries)
	assert.True(t, strings.HasPrefix(text, "WHAT YOU'VE FOUND OUTSIDE:\n  "+prompt.CutMarker+"\n  - "), text)
	assert.True(t, strings.HasSuffix(text, "  - discovery 22 (/workspace/22.md)"), text)
	for _, name := range p.Names() {
		if name != prompt.SectionDiscoveries {
			prompttest.SectionIntact(t, p, name)
		}
	}
}

func TestBudgetPriorityOrder(t *testing.T) {
	// A budget so tight that every trimmable section is cut: the cuts come
	// in the documented priority order.
	v := big().View()
	minimal := minimalChars(t, v)
	p := prompttest.Assemble(t, budgeted(prompt.Budget{MaxChars: minimal}), v)
	var got []string
	for _, c := range p.Cuts {
		got = append(got, c.Section)
	}
	assert.Equal(t, []string{
		prompt.SectionDiscoveries, prompt.SectionHistory, prompt.SectionOpinions,
		prompt.SectionQuestions, prompt.SectionPeers, prompt.SectionRecentGoals,
		prompt.SectionPeerMessages, prompt.SectionLastOutcome, prompt.SectionWorldview,
		prompt.SectionHostMessage, prompt.SectionSituation, prompt.SectionTask,
	}, got)
	for _, name := range []string{prompt.SectionIdentity, prompt.SectionWorld, prompt.SectionInnerState,
		prompt.SectionTime, prompt.SectionDirective, prompt.SectionResponseFormat} {
		prompttest.SectionIntact(t, p, name)
	}
	// At the minimum each cut section is its header and the marker (the
	// task keeps its instruction, recent goals drop the footer).
	assert.Equal(t, "YOUR HISTORY:\n"+prompt.CutMarker, prompttest.SectionWithHeader(t, p, prompt.SectionHistory))
	assert.Equal(t, "YOUR OPINIONS:\n  "+prompt.CutMarker, prompttest.SectionWithHeader(t, p, prompt.SectionOpinions))
	assert.Equal(t, "ASSIGNED TASK:\n"+prompt.CutMarker+"\nWork on this task only. Do not pick a self-directed goal.",
		prompttest.SectionWithHeader(t, p, prompt.SectionTask))
	assert.Equal(t, "WHAT YOUR LAST GOAL PRODUCED:\n  "+prompt.CutMarker+
		"\n  Broken tools (each failed 3 or more times in that goal; do not rely on them): fetch_url",
		prompttest.SectionWithHeader(t, p, prompt.SectionLastOutcome))
}

func TestBudgetOpinionsKeepNewest(t *testing.T) {
	v := prompttest.NewAgent("Cedar").Opinions(20).View()
	full := prompttest.Assemble(t, trio(), v)
	// Drop 4 of the 6 opinion lines (27 characters each with the newline)
	// and add the marker line (35).
	b := prompt.Budget{MaxChars: full.Chars - 4*27 + 35}
	p := prompttest.Assemble(t, budgeted(b), v)
	prompttest.FitsBudget(t, p, b)
	assert.Equal(t, "YOUR OPINIONS:\n  "+prompt.CutMarker+"\n  - [domain 19] opinion 19\n  - [domain 20] opinion 20",
		prompttest.SectionWithHeader(t, p, prompt.SectionOpinions))
}

func TestBudgetHostMessagesKeepNewest(t *testing.T) {
	first := "first: " + strings.Repeat("é", 50)
	second := "second: " + strings.Repeat("日本", 25)
	v := prompttest.NewAgent("Cedar").Host(first).Host(second).Host("third message").View()
	full := prompttest.Assemble(t, trio(), v)
	// Drop the 2 oldest lines (57 and 58 characters with the newline) and
	// add the marker line.
	marker := "\n  " + prompt.CutMarker
	b := prompt.Budget{MaxChars: full.Chars - 57 - 58 + utf8.RuneCountInString(marker)}
	p := prompttest.Assemble(t, budgeted(b), v)
	prompttest.FitsBudget(t, p, b)
	assert.Equal(t, "A PERSON SAID:"+marker+"\nthird message", prompttest.SectionWithHeader(t, p, prompt.SectionHostMessage))
	require.Len(t, p.Cuts, 1)
	assert.Equal(t, prompt.SectionHostMessage, p.Cuts[0].Section)
}

func TestBudgetHostMessageKeepsHead(t *testing.T) {
	// A single message keeps its beginning, as before several were shown.
	v := prompttest.NewAgent("Cedar").Host(strings.Repeat("please ", 70)).View()
	full := prompttest.Assemble(t, trio(), v)
	b := prompt.Budget{MaxChars: full.Chars - 200}
	p := prompttest.Assemble(t, budgeted(b), v)
	prompttest.FitsBudget(t, p, b)
	text := prompttest.SectionWithHeader(t, p, prompt.SectionHostMessage)
	assert.True(t, strings.HasPrefix(text, "A PERSON SAID:\nplease please"), text)
	assert.True(t, strings.HasSuffix(text, "\n"+prompt.CutMarker), text)
}

func TestBudgetHistoryKeepsHead(t *testing.T) {
	v := prompttest.NewAgent("Cedar").Narrative(strings.Repeat("abcde ", 100)).View()
	full := prompttest.Assemble(t, trio(), v)
	b := prompt.Budget{MaxChars: full.Chars - 200}
	p := prompttest.Assemble(t, budgeted(b), v)
	prompttest.FitsBudget(t, p, b)
	text := prompttest.SectionWithHeader(t, p, prompt.SectionHistory)
	assert.True(t, strings.HasPrefix(text, "YOUR HISTORY:\nabcde abcde"), text)
	assert.True(t, strings.HasSuffix(text, "\n"+prompt.CutMarker), text)
	assert.Equal(t, b.MaxChars, p.Chars, "the cut uses the whole budget")
}

func TestBudgetTooSmall(t *testing.T) {
	v := big().View()
	minimal := minimalChars(t, v)
	p, err := budgeted(prompt.Budget{MaxChars: minimal - 1}).Assemble(v)
	assert.Nil(t, p)
	require.ErrorIs(t, err, prompt.ErrBudget)
	var be *prompt.BudgetError
	require.True(t, errors.As(err, &be))
	assert.Equal(t, prompt.BudgetError{Unit: "characters", Need: minimal, Max: minimal - 1}, *be)
	assert.Contains(t, err.Error(), "over budget by 1 characters")

	_, err = budgeted(prompt.Budget{MaxChars: 10}).Assemble(v)
	require.ErrorIs(t, err, prompt.ErrBudget)
	assert.Contains(t, err.Error(), fmt.Sprintf("over budget by %d characters", minimal-10))
}

func TestBudgetTokens(t *testing.T) {
	v := big().View()
	full := prompttest.Assemble(t, trio(), v)
	b := prompt.Budget{MaxTokens: prompt.EstimateTokens(full.Text) - 50}
	p := prompttest.Assemble(t, budgeted(b), v)
	prompttest.FitsBudget(t, p, b)
	assert.LessOrEqual(t, (p.Chars+3)/4, b.MaxTokens)
	assert.NotEmpty(t, p.Cuts)

	// A custom counter: one token per word.
	words := func(s string) int { return len(strings.Fields(s)) }
	wb := prompt.Budget{MaxTokens: words(full.Text) - 100, Count: words}
	p = prompttest.Assemble(t, budgeted(wb), v)
	prompttest.FitsBudget(t, p, wb)
	assert.LessOrEqual(t, words(p.Text), wb.MaxTokens)
	assert.Greater(t, words(p.Text), wb.MaxTokens-40, "the cut is close to the budget, not wasteful")

	_, err := budgeted(prompt.Budget{MaxTokens: 5}).Assemble(v)
	var be *prompt.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "tokens", be.Unit)
}

func TestBudgetCheck(t *testing.T) {
	assert.False(t, prompt.Budget{}.Enabled())
	assert.NoError(t, prompt.Budget{}.Check(strings.Repeat("x", 1e6)))
	assert.NoError(t, prompt.Budget{MaxChars: 3}.Check("日本語"))
	assert.ErrorIs(t, prompt.Budget{MaxChars: 2}.Check("日本語"), prompt.ErrBudget)
	assert.NoError(t, prompt.Budget{MaxTokens: 1}.Check("abcd"))
	assert.ErrorIs(t, prompt.Budget{MaxTokens: 1}.Check("abcde"), prompt.ErrBudget)
	assert.Equal(t, 0, prompt.EstimateTokens(""))
	assert.Equal(t, 1, prompt.EstimateTokens("a"))
	assert.Equal(t, 2, prompt.EstimateTokens("日本語日本"))
}

func TestTrimText(t *testing.T) {
	text := "HEADER:\nline one\nline two\n" + strings.Repeat("more lines\n", 10)
	assert.Equal(t, text, prompt.TrimText(text, 1000))
	got := prompt.TrimText(text, 8+12+len([]rune(prompt.CutMarker)))
	assert.Equal(t, "HEADER:\nline one\nli\n"+prompt.CutMarker, got)
	assert.Equal(t, "HEADER:\n"+prompt.CutMarker, prompt.TrimText(text, 0))
	assert.Equal(t, "abc\n"+prompt.CutMarker, prompt.TrimText("abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz", 4+len([]rune(prompt.CutMarker))))
	assert.Equal(t, prompt.CutMarker, prompt.TrimText("one long line without header", 3))
	// Rune-safe.
	assert.Equal(t, "H:\n日本\n"+prompt.CutMarker, prompt.TrimText("H:\n"+strings.Repeat("日本語", 30), 3+3+len([]rune(prompt.CutMarker))))
}

func TestBudgetCustomSections(t *testing.T) {
	v := prompttest.NewAgent("Cedar").View()
	mem := prompt.SectionFunc{ID: "memory", Priority: 5, Text: func(*prompt.View) string {
		return "MEMORY:\n" + strings.Repeat("remember this. ", 40)
	}}
	pinned := prompt.SectionFunc{ID: "pinned", Text: func(*prompt.View) string {
		return "PINNED:\n" + strings.Repeat("never cut. ", 40)
	}}
	sloppy := prompt.SectionFunc{ID: "sloppy", Priority: 6,
		Text:   func(*prompt.View) string { return "SLOPPY:\n" + strings.Repeat("z", 300) },
		Shrink: func(_ *prompt.View, max int) string { return "SLOPPY:\nshort" }, // forgets the marker
	}
	vanish := prompt.SectionFunc{ID: "vanish", Priority: 4,
		Text:   func(*prompt.View) string { return "VANISH:\n" + strings.Repeat("v", 100) },
		Shrink: func(*prompt.View, int) string { return "" },
	}
	a := trio()
	require.NoError(t, a.InsertAfter(prompt.SectionTime, vanish))
	require.NoError(t, a.InsertAfter(prompt.SectionWorldview, mem))
	require.NoError(t, a.InsertAfter("memory", pinned))
	require.NoError(t, a.InsertAfter("pinned", sloppy))
	full := prompttest.Assemble(t, a, v)

	a.SetBudget(prompt.Budget{MaxChars: full.Chars - 700})
	p := prompttest.Assemble(t, a, v)
	prompttest.FitsBudget(t, p, a.Config().Budget)
	prompttest.SectionCut(t, p, "memory")
	prompttest.SectionCut(t, p, "sloppy")
	prompttest.SectionIntact(t, p, "pinned")
	assert.Equal(t, "SLOPPY:\nshort\n"+prompt.CutMarker, prompttest.SectionWithHeader(t, p, "sloppy"),
		"the assembler adds the marker a Trimmer forgot")
	assert.Equal(t, prompt.CutMarker, prompttest.SectionWithHeader(t, p, "vanish"), "a section cut to nothing still shows the marker")
	assert.Equal(t, []string{"vanish", "memory", "sloppy"}, []string{p.Cuts[0].Section, p.Cuts[1].Section, p.Cuts[2].Section},
		"priority 4, then 5, then 6")
}

// TestBudgetProperty checks, over many random states and budgets, that the
// budget always holds, that what never shrinks survives intact, and that
// every cut is marked and reported. Assemble fails only when the budget is
// below the minimal prompt.
func TestBudgetProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := range n {
		st := randomState(rng)
		v := st.View()
		full := prompttest.Assemble(t, trio(), v)
		minimal := minimalChars(t, v)
		require.LessOrEqual(t, minimal, full.Chars)

		var b prompt.Budget
		switch rng.IntN(3) {
		case 0:
			b.MaxChars = minimal + rng.IntN(full.Chars-minimal+50)
		case 1:
			b.MaxChars = max(1, minimal-1-rng.IntN(200))
		default:
			b.MaxTokens = (minimal+3)/4 + rng.IntN((full.Chars-minimal)/4+20)
		}
		p, err := budgeted(b).Assemble(v)
		if b.MaxChars > 0 && b.MaxChars < minimal {
			require.ErrorIs(t, err, prompt.ErrBudget, "state %d", i)
			continue
		}
		require.NoError(t, err, "state %d, budget %+v, minimal %d, full %d", i, b, minimal, full.Chars)
		require.NoError(t, b.Check(p.Text), "state %d", i)

		for _, name := range []string{prompt.SectionIdentity, prompt.SectionWorld, prompt.SectionInnerState,
			prompt.SectionTime, prompt.SectionDirective, prompt.SectionResponseFormat} {
			want, _ := full.Section(name)
			got, ok := p.Section(name)
			require.True(t, ok, "state %d: %s survives", i, name)
			require.Equal(t, want.Text, got.Text, "state %d: %s intact", i, name)
		}
		require.True(t, strings.HasSuffix(p.Text, specResponse))
		assert.Equal(t, full.Names(), p.Names(), "cutting never removes a section")

		cut := map[string]bool{}
		for _, c := range p.Cuts {
			cut[c.Section] = true
			require.Less(t, c.After, c.Before)
		}
		texts := make([]string, len(p.Sections))
		for k, s := range p.Sections {
			texts[k] = s.Text
			require.Equal(t, cut[s.Name], s.Cut, "state %d: %s", i, s.Name)
			if s.Cut {
				require.Contains(t, s.Text, prompt.CutMarker)
			} else {
				want, _ := full.Section(s.Name)
				require.Equal(t, want.Text, s.Text, "state %d: an uncut section is unchanged", i)
			}
		}
		require.Equal(t, strings.Join(texts, "\n\n"), p.Text)
		require.Equal(t, len([]rune(p.Text)), p.Chars)
	}
}

// minimalChars returns the size of the smallest prompt the budget can
// reach for v, from the error of an impossible budget.
func minimalChars(t *testing.T, v *prompt.View) int {
	t.Helper()
	_, err := budgeted(prompt.Budget{MaxChars: 1}).Assemble(v)
	var be *prompt.BudgetError
	require.ErrorAs(t, err, &be)
	return be.Need
}

// randomState returns a random agent state: any section may be empty, small
// or large, with multi-byte text.
func randomState(rng *rand.Rand) *prompttest.State {
	words := []string{"cache", "tool", "日本", "naïve", "—", "workspace", "design", "fetch_url", "x", "emoji🙂"}
	text := func(max int) string {
		n := rng.IntN(max + 1)
		var b strings.Builder
		for k := 0; k < n; k++ {
			if k > 0 {
				b.WriteString([]string{" ", " ", "\n", "  "}[rng.IntN(4)])
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	s := prompttest.NewState("Agent")
	if rng.IntN(2) == 0 {
		s.Worldview(text(120))
	}
	for range rng.IntN(25) {
		s.Opinion(text(2), text(30))
	}
	for range rng.IntN(15) {
		s.Question(text(20))
	}
	s.Narrative(text(200))
	for range rng.IntN(25) {
		s.Discovery(text(40), text(3))
	}
	for range rng.IntN(3) {
		s.Peer(text(2), text(60))
	}
	statuses := []identity.GoalStatus{identity.Done, identity.Failed, identity.Abandoned}
	for range rng.IntN(9) {
		s.Goal(statuses[rng.IntN(3)], text(25))
	}
	if rng.IntN(2) == 0 {
		s.Outcome(text(100), []string{"fetch_url", "grep"}[:rng.IntN(3)]...)
	}
	for range rng.IntN(8) {
		s.Inbox(text(1), text(60))
	}
	if rng.IntN(3) == 0 {
		s.Host(text(150))
	}
	if rng.IntN(3) == 0 {
		s.Task(text(60))
	}
	for _, typ := range []string{"futility", "repeated_failure", "invisibility"}[:rng.IntN(4)] {
		s.Stressor(typ, 0.1+0.3*rng.Float64(), text(15), text(10))
	}
	return s
}

// TestViewWindow: the model's window in View.Window cuts the prompt like a
// budget, visibly, and the smaller of it and the assembler's budget wins.
func TestViewWindow(t *testing.T) {
	full := prompttest.Assemble(t, trio(), big().View())
	count := func(s string) int { return utf8.RuneCountInString(s) / 3 }
	window := prompt.Budget{MaxTokens: count(full.Text) - 100, Count: count}

	v := big().View()
	v.Window = window
	p := prompttest.Assemble(t, trio(), v)
	require.NotEmpty(t, p.Cuts, "a prompt over the window is cut by the assembler, not by the server")
	assert.LessOrEqual(t, count(p.Text), window.MaxTokens)
	prompttest.SectionCut(t, p, prompt.SectionDiscoveries)

	t.Run("the smaller limit wins", func(t *testing.T) {
		v := big().View()
		v.Window = prompt.Budget{MaxTokens: count(full.Text) * 2, Count: count}
		b := prompt.Budget{MaxChars: full.Chars - 100}
		p := prompttest.Assemble(t, budgeted(b), v)
		prompttest.FitsBudget(t, p, b)
		require.Len(t, p.Cuts, 1, "the assembler's budget is the tighter one")

		v.Window = window
		p = prompttest.Assemble(t, budgeted(prompt.Budget{MaxChars: full.Chars * 2}), v)
		assert.LessOrEqual(t, count(p.Text), window.MaxTokens, "the window is the tighter one")
	})
	t.Run("assembled straight from the state", func(t *testing.T) {
		v := big().View()
		v.Window = window
		p, builtin, err := trio().AssembleBuiltin(v)
		require.NoError(t, err)
		assert.True(t, builtin, "a window counter is the SDK's: no copy of the state needed")
		assert.LessOrEqual(t, count(p.Text), window.MaxTokens)
	})
}
