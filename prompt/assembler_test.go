package prompt_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

func trio() *prompt.Assembler { return prompt.New(prompttest.HollowConfig()) }

// TestGoldenDefault pins the default prompt for a representative state:
// every section of spec §2 present. Regenerate with go test -update.
func TestGoldenDefault(t *testing.T) {
	p := prompttest.Assemble(t, trio(), prompttest.Cedar().View())
	assert.Equal(t, prompt.DefaultOrder(), p.Names(), "every default section is present, in spec order")
	prompttest.Golden(t, "default", p.Text)
}

// TestGoldenNewAgent pins the prompt of a brand-new agent: every
// placeholder, no conditional section.
func TestGoldenNewAgent(t *testing.T) {
	p := prompttest.Assemble(t, trio(), prompttest.NewAgent("Cedar").View())
	assert.Equal(t, []string{
		prompt.SectionIdentity, prompt.SectionWorld, prompt.SectionSituation,
		prompt.SectionInnerState, prompt.SectionWorldview, prompt.SectionOpinions,
		prompt.SectionQuestions, prompt.SectionHistory, prompt.SectionPeers,
		prompt.SectionDiscoveries, prompt.SectionTime, prompt.SectionDirective,
		prompt.SectionResponseFormat,
	}, p.Names())
	prompttest.Golden(t, "empty", p.Text)
}

func TestAssembleIsPure(t *testing.T) {
	a := trio()
	v := prompttest.Cedar().View()
	first := prompttest.Assemble(t, a, v)
	for range 3 {
		again := prompttest.Assemble(t, a, v)
		require.Equal(t, first.Text, again.Text)
	}
	// Assembling did not modify the view.
	assert.Equal(t, prompttest.Cedar().View(), v)
	// A fresh assembler gives the same bytes.
	assert.Equal(t, first.Text, prompttest.Assemble(t, trio(), prompttest.Cedar().View()).Text)
}

func TestAssembleConcurrent(t *testing.T) {
	a := trio()
	v := prompttest.Cedar().View()
	extra := prompt.SectionFunc{ID: "extra", Text: func(*prompt.View) string { return "EXTRA" }}
	want := prompttest.Assemble(t, a, v).Text
	withExtra := a.Clone()
	require.NoError(t, withExtra.InsertAfter(prompt.SectionTime, extra))
	wantExtra := prompttest.Assemble(t, withExtra, v).Text

	var wg sync.WaitGroup
	bad := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				p, err := a.Assemble(v)
				// Builder operations run concurrently (copy on write): each
				// Assemble sees the layout either with "extra" or without,
				// never half an edit.
				if err != nil || (p.Text != want && p.Text != wantExtra) {
					bad <- "concurrent Assemble gave an unexpected prompt"
					return
				}
			}
		}()
	}
	for range 50 {
		require.NoError(t, a.InsertAfter(prompt.SectionTime, extra))
		require.NoError(t, a.Remove("extra"))
	}
	wg.Wait()
	close(bad)
	for e := range bad {
		assert.Fail(t, e)
	}
	assert.Equal(t, want, prompttest.Assemble(t, a, v).Text)
}

func TestLayoutInvariants(t *testing.T) {
	states := map[string]*prompttest.State{
		"cedar":     prompttest.Cedar(),
		"new agent": prompttest.NewAgent("Vault"),
		"task only": prompttest.NewAgent("Vault").Task("do it"),
		"host only": prompttest.NewAgent("Vault").Host("hello"),
	}
	for name, st := range states {
		t.Run(name, func(t *testing.T) {
			p := prompttest.Assemble(t, trio(), st.View())
			assert.NotContains(t, p.Text, "\n\n\n", "sections are separated by exactly one blank line")
			assert.False(t, strings.HasPrefix(p.Text, "\n"), "no leading newline")
			assert.False(t, strings.HasSuffix(p.Text, "\n"), "no trailing newline")
			texts := make([]string, len(p.Sections))
			chars := 0
			for i, s := range p.Sections {
				texts[i] = s.Text
				chars += s.Chars
				assert.Equal(t, len([]rune(s.Text)), s.Chars, s.Name)
				assert.False(t, s.Cut)
			}
			assert.Equal(t, strings.Join(texts, "\n\n"), p.Text)
			assert.Equal(t, len([]rune(p.Text)), p.Chars)
			assert.Nil(t, p.Cuts)
		})
	}
}

func TestAssembleNilView(t *testing.T) {
	p, err := trio().Assemble(nil)
	assert.Nil(t, p)
	assert.ErrorIs(t, err, prompt.ErrNilView)
}

func TestAssembleNilIdentity(t *testing.T) {
	p := prompttest.Assemble(t, trio(), &prompt.View{})
	assert.Equal(t, "You are .", prompttest.SectionWithHeader(t, p, prompt.SectionIdentity))
	assert.Equal(t, "TIME:\n  Running for: unknown\n  Last goal completed: unknown", prompttest.SectionWithHeader(t, p, prompt.SectionTime))
}

func TestConfigIsCopied(t *testing.T) {
	cfg := prompttest.HollowConfig()
	a := prompt.New(cfg)
	cfg.Goals[0] = "changed"
	p := prompttest.Assemble(t, a, prompttest.NewAgent("Cedar").View())
	assert.Contains(t, p.Text, "  1. Read real source files")
	got := a.Config()
	got.Goals[0] = "changed again"
	assert.Equal(t, prompttest.HollowConfig().Goals, a.Config().Goals)
}

func TestNames(t *testing.T) {
	assert.Equal(t, prompt.DefaultOrder(), trio().Names())
	assert.Len(t, prompt.DefaultOrder(), 18)
}

func TestSectionLookup(t *testing.T) {
	a := trio()
	s, ok := a.Section(prompt.SectionHistory)
	require.True(t, ok)
	assert.Equal(t, prompt.SectionHistory, s.Name())
	assert.Equal(t, "YOUR HISTORY:\n(no history yet)", s.Render(prompttest.NewAgent("x").View()))
	_, ok = a.Section("nope")
	assert.False(t, ok)
}

func notes(id, text string) prompt.SectionFunc {
	return prompt.SectionFunc{ID: id, Text: func(*prompt.View) string { return text }}
}

func TestBuilderOperations(t *testing.T) {
	v := prompttest.NewAgent("Cedar").View()
	tests := []struct {
		name string
		edit func(a *prompt.Assembler) error
		want []string // resulting order, checked on Names
	}{
		{"replace", func(a *prompt.Assembler) error { return a.Replace(prompt.SectionHistory, notes("my_history", "H")) },
			replaceName(prompt.DefaultOrder(), prompt.SectionHistory, "my_history")},
		{"replace same name", func(a *prompt.Assembler) error {
			return a.Replace(prompt.SectionHistory, notes(prompt.SectionHistory, "H"))
		},
			prompt.DefaultOrder()},
		{"remove", func(a *prompt.Assembler) error { return a.Remove(prompt.SectionPeers) },
			without(prompt.DefaultOrder(), prompt.SectionPeers)},
		{"insert before", func(a *prompt.Assembler) error { return a.InsertBefore(prompt.SectionIdentity, notes("banner", "B")) },
			insertAt(prompt.DefaultOrder(), 1, "banner")},
		{"insert after", func(a *prompt.Assembler) error { return a.InsertAfter(prompt.SectionWorldview, notes("memory", "M")) },
			insertAt(prompt.DefaultOrder(), 6, "memory")},
		{"insert after last", func(a *prompt.Assembler) error {
			return a.InsertAfter(prompt.SectionResponseFormat, notes("tail", "T"))
		},
			append(prompt.DefaultOrder(), "tail")},
		{"move before", func(a *prompt.Assembler) error { return a.MoveBefore(prompt.SectionTime, prompt.SectionIdentity) },
			insertAt(without(prompt.DefaultOrder(), prompt.SectionTime), 1, prompt.SectionTime)},
		{"move after", func(a *prompt.Assembler) error { return a.MoveAfter(prompt.SectionTask, prompt.SectionResponseFormat) },
			append(without(prompt.DefaultOrder(), prompt.SectionTask), prompt.SectionTask)},
		{"reorder", func(a *prompt.Assembler) error { return a.Reorder(reversed(prompt.DefaultOrder())...) },
			reversed(prompt.DefaultOrder())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := trio()
			require.NoError(t, tt.edit(a))
			assert.Equal(t, tt.want, a.Names())
			// The assembled prompt follows the new order.
			p := prompttest.Assemble(t, a, v)
			var present []string
			for _, n := range tt.want {
				if _, ok := p.Section(n); ok {
					present = append(present, n)
				}
			}
			assert.Equal(t, present, p.Names())
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(a *prompt.Assembler) error
		want error
	}{
		{"replace unknown", func(a *prompt.Assembler) error { return a.Replace("nope", notes("x", "X")) }, prompt.ErrUnknownSection},
		{"remove unknown", func(a *prompt.Assembler) error { return a.Remove("nope") }, prompt.ErrUnknownSection},
		{"remove twice", func(a *prompt.Assembler) error {
			_ = a.Remove(prompt.SectionPeers)
			return a.Remove(prompt.SectionPeers)
		}, prompt.ErrUnknownSection},
		{"insert before unknown", func(a *prompt.Assembler) error { return a.InsertBefore("nope", notes("x", "X")) }, prompt.ErrUnknownSection},
		{"insert after unknown", func(a *prompt.Assembler) error { return a.InsertAfter("nope", notes("x", "X")) }, prompt.ErrUnknownSection},
		{"move unknown", func(a *prompt.Assembler) error { return a.MoveBefore("nope", prompt.SectionTime) }, prompt.ErrUnknownSection},
		{"move before unknown", func(a *prompt.Assembler) error { return a.MoveAfter(prompt.SectionTime, "nope") }, prompt.ErrUnknownSection},
		{"move to itself", func(a *prompt.Assembler) error { return a.MoveAfter(prompt.SectionTime, prompt.SectionTime) }, prompt.ErrInvalidSection},
		{"reorder unknown", func(a *prompt.Assembler) error { return a.Reorder(append(prompt.DefaultOrder(), "nope")...) }, prompt.ErrUnknownSection},
		{"reorder duplicate", func(a *prompt.Assembler) error {
			return a.Reorder(append(prompt.DefaultOrder(), prompt.SectionTime)...)
		}, prompt.ErrDuplicateSection},
		{"reorder missing", func(a *prompt.Assembler) error { return a.Reorder(prompt.DefaultOrder()[1:]...) }, prompt.ErrOrder},
		{"insert duplicate", func(a *prompt.Assembler) error {
			return a.InsertAfter(prompt.SectionTime, notes(prompt.SectionHistory, "X"))
		}, prompt.ErrDuplicateSection},
		{"replace with another's name", func(a *prompt.Assembler) error {
			return a.Replace(prompt.SectionTime, notes(prompt.SectionHistory, "X"))
		}, prompt.ErrDuplicateSection},
		{"insert nil", func(a *prompt.Assembler) error { return a.InsertAfter(prompt.SectionTime, nil) }, prompt.ErrInvalidSection},
		{"replace with nil", func(a *prompt.Assembler) error { return a.Replace(prompt.SectionTime, nil) }, prompt.ErrInvalidSection},
		{"empty name", func(a *prompt.Assembler) error { return a.InsertAfter(prompt.SectionTime, notes("", "X")) }, prompt.ErrInvalidSection},
		{"func without text", func(a *prompt.Assembler) error {
			return a.InsertAfter(prompt.SectionTime, prompt.SectionFunc{ID: "x"})
		}, prompt.ErrInvalidSection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := trio()
			before := a.Names()
			err := tt.edit(a)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			if errors.Is(err, prompt.ErrUnknownSection) && tt.name != "remove twice" {
				assert.Contains(t, err.Error(), `"nope"`, "the error names the section")
			}
			if tt.name != "remove twice" {
				assert.Equal(t, before, a.Names(), "a failed edit changes nothing")
			}
		})
	}
}

func TestClone(t *testing.T) {
	a := trio()
	c := a.Clone()
	require.NoError(t, c.Remove(prompt.SectionPeers))
	require.NoError(t, c.InsertAfter(prompt.SectionTime, notes("x", "X")))
	c.SetBudget(prompt.Budget{MaxChars: 10_000})
	assert.Equal(t, prompt.DefaultOrder(), a.Names(), "the original is untouched")
	assert.Zero(t, a.Config().Budget.MaxChars)
	assert.Equal(t, 10_000, c.Config().Budget.MaxChars)
	assert.NotContains(t, c.Names(), prompt.SectionPeers)

	// And the other way round.
	require.NoError(t, a.Remove(prompt.SectionHistory))
	assert.Contains(t, c.Names(), prompt.SectionHistory)
}

func TestCustomSectionWithKey(t *testing.T) {
	type slots struct{ Free, Used int }
	key := prompt.NewKey[slots]("slots")
	sec := prompt.SectionFunc{
		ID:   "slots",
		When: func(v *prompt.View) bool { _, ok := key.Get(v); return ok },
		Text: func(v *prompt.View) string {
			s, _ := key.Get(v)
			return "SLOTS:\n  free: " + itoa(s.Free) + "\n  used: " + itoa(s.Used)
		},
	}
	a := trio()
	require.NoError(t, a.InsertAfter(prompt.SectionTime, sec))

	st := prompttest.NewAgent("Cedar")
	p := prompttest.Assemble(t, a, st.View())
	prompttest.SectionAbsent(t, p, "slots")

	key.Set(st.Values(), slots{Free: 2, Used: 3})
	p = prompttest.Assemble(t, a, st.View())
	assert.Equal(t, "SLOTS:\n  free: 2\n  used: 3", prompttest.SectionWithHeader(t, p, "slots"))
	prompttest.SectionOrder(t, p, prompt.SectionTime, "slots", prompt.SectionDirective)
	assert.Contains(t, p.Text, "Last goal completed: unknown\n\nSLOTS:\n  free: 2\n  used: 3\n\n---\n\nYou must pick a goal.")
}

func TestCustomSectionNewlinesTrimmed(t *testing.T) {
	a := trio()
	require.NoError(t, a.InsertAfter(prompt.SectionTime, notes("padded", "\n\nPADDED:\n  x\n\n\n")))
	require.NoError(t, a.InsertAfter("padded", notes("blank", " \n\t\n")))
	p := prompttest.Assemble(t, a, prompttest.NewAgent("Cedar").View())
	assert.Equal(t, "PADDED:\n  x", prompttest.SectionWithHeader(t, p, "padded"))
	prompttest.SectionAbsent(t, p, "blank")
	assert.NotContains(t, p.Text, "\n\n\n")
}

func TestDefaultSectionsRenderStandalone(t *testing.T) {
	// Each section's Render gives exactly the text Assemble places.
	a := trio()
	v := prompttest.Cedar().View()
	p := prompttest.Assemble(t, a, v)
	for _, name := range a.Names() {
		s, _ := a.Section(name)
		r, _ := p.Section(name)
		assert.Equal(t, r.Text, s.Render(v), name)
	}
	// Render tolerates a nil view.
	s, _ := a.Section(prompt.SectionOpinions)
	assert.Equal(t, "YOUR OPINIONS:\n  (none yet — still forming through experience)", s.Render(nil))
}

func TestAssemblerWithIdentityLimits(t *testing.T) {
	v := prompttest.NewAgent("Cedar").Opinions(10).Questions(10).
		Limits(identity.Limits{OpinionsShown: 2, QuestionsShown: 1}).View()
	p := prompttest.Assemble(t, trio(), v)
	assert.Equal(t, 2, prompttest.ShownOpinions(t, p))
	assert.Equal(t, 1, prompttest.ShownQuestions(t, p))
}

// ---- helpers

// isBlankText reports whether s shows nothing in a prompt: white space
// and code points the unsafe rule removes only.
func isBlankText(s string) bool { return len(promptFields(s)) == 0 }

// promptFields splits s into words as flattening does: at white space
// and at the code points the unsafe rule removes (runes.Unsafe).
func promptFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || runes.Unsafe(r)
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func replaceName(names []string, old, new string) []string {
	for i, n := range names {
		if n == old {
			names[i] = new
		}
	}
	return names
}

func without(names []string, drop string) []string {
	out := names[:0:0]
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

func insertAt(names []string, i int, name string) []string {
	out := append([]string{}, names[:i]...)
	out = append(out, name)
	return append(out, names[i:]...)
}

func reversed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[len(names)-1-i] = n
	}
	return out
}

// FuzzAssemble feeds model-written text (goals, opinions, questions,
// messages, a worldview, a narrative) into every section: assembly never
// fails or panics, item lines stay one line, and a blank line only ever
// separates sections (or comes from the application's own texts).
func FuzzAssemble(f *testing.F) {
	f.Add("read the code", "tools are clutter", "why?", "hello", "I think.", "I began.", "fix it")
	f.Add("a\n\n\nb", "x\r\ny", "\t", "\x00\xff\xfe", "para 1\n\n\npara 2\n", "  \n  ", "\u2028\u0085 task")
	f.Add("a\r\rb", "x\fy", "\v?", "m\u2029\u2029n", "para 1\r\rpara 2\u2028\u2028para 3", "one\u0085\u0085two\vthree", "t")
	f.Add(strings.Repeat("日本語", 300), "—", "🙂\n🙂", strings.Repeat("m ", 400), strings.Repeat("\n", 50), "\xe6\x97", "")
	a := trio()
	f.Fuzz(func(t *testing.T, goal, opinion, question, message, worldview, narrative, task string) {
		st := prompttest.NewState("Cedar").
			Goal(identity.Done, goal).Outcome(goal, goal).Goal(identity.Failed, goal).
			Opinion(opinion, opinion).Question(question).
			Inbox(message, message).Host(message).Host(narrative).Peer(message, narrative).
			Discovery(opinion, question).
			Worldview(worldview).Narrative(narrative).Task(task)
		p, err := a.Assemble(st.View())
		require.NoError(t, err)
		if !isBlankText(task) && utf8.ValidString(task) {
			want := "ASSIGNED TASK: " + strings.Join(promptFields(task), " ") + "\n"
			got := prompttest.SectionWithHeader(t, p, prompt.SectionTask)
			require.True(t, strings.HasPrefix(got, want), "task not flattened into its words: got %q, want prefix %q", got, want)
		}
		require.NotContains(t, p.Text, "\n\n\n", "a run of blank lines")
		for _, s := range p.Sections {
			switch s.Name {
			case prompt.SectionWorld, prompt.SectionSituation, prompt.SectionDirective:
				continue // the application's texts
			}
			require.NotContains(t, s.Text, "\n\n", "a blank line inside section %s", s.Name)
			require.False(t, strings.ContainsAny(s.Text, "\r\v\f\u0085\u2028\u2029"), "a line break other than \\n in section %s:\n%q", s.Name, s.Text)
			require.False(t, strings.HasPrefix(s.Text, "\n") || strings.HasSuffix(s.Text, "\n"), "section %s has a surrounding newline: %q", s.Name, s.Text)
		}
		// Budgets hold on hostile text too.
		b := prompt.Budget{MaxChars: p.Chars / 2}
		if bp, err := budgeted(b).Assemble(st.View()); err == nil {
			require.NoError(t, b.Check(bp.Text))
		} else {
			require.ErrorIs(t, err, prompt.ErrBudget)
		}
	})
}

// TestAssembleBuiltin checks that AssembleBuiltin assembles exactly what
// Assemble does when every section is built in, and runs nothing (no
// custom section's code) otherwise.
func TestAssembleBuiltin(t *testing.T) {
	v := prompttest.Cedar().View()
	t.Run("built in", func(t *testing.T) {
		a := trio()
		p, ok, err := a.AssembleBuiltin(v)
		require.NoError(t, err)
		require.True(t, ok, "the default sections are built in")
		assert.Equal(t, prompttest.Assemble(t, a, v).Text, p.Text)
	})
	t.Run("built in, reordered and one removed", func(t *testing.T) {
		a := trio()
		require.NoError(t, a.Remove(prompt.SectionDiscoveries))
		require.NoError(t, a.MoveBefore(prompt.SectionTime, prompt.SectionWorld))
		p, ok, err := a.AssembleBuiltin(v)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, prompttest.Assemble(t, a, v).Text, p.Text)
	})
	custom := func(called *bool) prompt.SectionFunc {
		return prompt.SectionFunc{ID: "extra", Text: func(*prompt.View) string { *called = true; return "EXTRA" }}
	}
	t.Run("a custom section", func(t *testing.T) {
		a := trio()
		var called bool
		require.NoError(t, a.InsertAfter(prompt.SectionTime, custom(&called)))
		p, ok, err := a.AssembleBuiltin(v)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Nil(t, p)
		assert.False(t, called, "a custom section ran")
	})
	t.Run("a built-in section replaced", func(t *testing.T) {
		a := trio()
		var called bool
		f := custom(&called)
		f.ID = prompt.SectionWorldview
		require.NoError(t, a.Replace(prompt.SectionWorldview, f))
		_, ok, err := a.AssembleBuiltin(v)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.False(t, called)
	})
	t.Run("a custom token counter", func(t *testing.T) {
		a := trio()
		var counted bool
		a.SetBudget(prompt.Budget{MaxTokens: 100000, Count: func(s string) int { counted = true; return len(s) / 4 }})
		_, ok, err := a.AssembleBuiltin(v)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.False(t, counted)
	})
	t.Run("nil view", func(t *testing.T) {
		_, ok, err := trio().AssembleBuiltin(nil)
		require.ErrorIs(t, err, prompt.ErrNilView)
		assert.False(t, ok)
	})
}
