package prompttest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

func cedarPrompt(t *testing.T) *prompt.Prompt {
	return prompttest.Assemble(t, prompt.New(prompttest.HollowConfig()), prompttest.Cedar().View())
}

func TestAssertionsPass(t *testing.T) {
	p := cedarPrompt(t)
	f := &fakeTB{}
	assert.True(t, prompttest.SectionPresent(f, p, prompt.SectionTask))
	assert.True(t, prompttest.SectionOrder(f, p, prompt.SectionTask, prompt.SectionIdentity, prompt.SectionResponseFormat))
	assert.True(t, prompttest.SectionOrder(f, p, prompt.DefaultOrder()...))
	assert.Equal(t, "You are Cedar.", prompttest.SectionWithHeader(f, p, prompt.SectionIdentity))
	assert.Equal(t, "Please look at why fetch_url fails on https URLs before anything else.",
		prompttest.SectionBody(f, p, prompt.SectionHostMessage))
	assert.Equal(t, 6, prompttest.ShownOpinions(f, p))
	assert.Equal(t, 5, prompttest.ShownQuestions(f, p))
	assert.Equal(t, 5, prompttest.ShownGoals(f, p))
	assert.Equal(t, 2, prompttest.ShownMessages(f, p))
	assert.Equal(t, 2, prompttest.Items(f, p, prompt.SectionPeers))
	assert.Equal(t, 400, prompttest.HistoryChars(f, p))
	assert.True(t, prompttest.FitsBudget(f, p, prompt.Budget{MaxChars: p.Chars}))
	assert.True(t, prompttest.SectionIntact(f, p, prompt.SectionDirective))
	assert.False(t, f.failed(), "%v", f.errs)
}

func TestAssertionsFail(t *testing.T) {
	p := prompttest.Assemble(t, prompt.New(prompttest.HollowConfig()), prompttest.NewAgent("Cedar").View())
	checks := map[string]func(tb testing.TB) bool{
		"present": func(tb testing.TB) bool { return prompttest.SectionPresent(tb, p, prompt.SectionTask) },
		"absent":  func(tb testing.TB) bool { return prompttest.SectionAbsent(tb, p, prompt.SectionIdentity) },
		"order": func(tb testing.TB) bool {
			return prompttest.SectionOrder(tb, p, prompt.SectionTime, prompt.SectionIdentity)
		},
		"order, missing": func(tb testing.TB) bool {
			return prompttest.SectionOrder(tb, p, prompt.SectionIdentity, prompt.SectionTask)
		},
		"text of absent":   func(tb testing.TB) bool { return prompttest.SectionWithHeader(tb, p, prompt.SectionTask) != "" },
		"fits budget":      func(tb testing.TB) bool { return prompttest.FitsBudget(tb, p, prompt.Budget{MaxChars: 10}) },
		"cut, but was not": func(tb testing.TB) bool { return prompttest.SectionCut(tb, p, prompt.SectionHistory) },
		"intact, absent":   func(tb testing.TB) bool { return prompttest.SectionIntact(tb, p, prompt.SectionTask) },
	}
	for name, check := range checks {
		f := &fakeTB{}
		assert.False(t, check(f), name)
		assert.Len(t, f.errs, 1, name)
	}
	// Messages name what went wrong.
	f := &fakeTB{}
	prompttest.SectionOrder(f, p, prompt.SectionTime, prompt.SectionIdentity)
	assert.Contains(t, f.errs[0], `"identity" comes too early`)
	f = &fakeTB{}
	prompttest.FitsBudget(f, p, prompt.Budget{MaxChars: 10})
	assert.Contains(t, f.errs[0], "over budget by")
}

func TestAssertionsPlaceholders(t *testing.T) {
	p := prompttest.Assemble(t, prompt.New(prompttest.HollowConfig()), prompttest.NewAgent("Cedar").View())
	f := &fakeTB{}
	assert.Equal(t, 0, prompttest.ShownOpinions(f, p), "the placeholder is not an item")
	assert.Equal(t, 0, prompttest.ShownQuestions(f, p))
	assert.Equal(t, 0, prompttest.Items(f, p, prompt.SectionPeers))
	assert.Equal(t, 0, prompttest.ShownGoals(f, p), "absent section: 0, no error")
	assert.Equal(t, 0, prompttest.ShownMessages(f, p))
	assert.Equal(t, 0, prompttest.HistoryChars(f, p))
	assert.False(t, f.failed(), "%v", f.errs)
}

func TestAssertionsOnCutSections(t *testing.T) {
	cfg := prompttest.HollowConfig()
	v := prompttest.Cedar().Opinions(20).Discoveries(10).View()
	full := prompttest.Assemble(t, prompt.New(cfg), v)
	cfg.Budget = prompt.Budget{MaxChars: full.Chars - 800}
	p := prompttest.Assemble(t, prompt.New(cfg), v)

	f := &fakeTB{}
	assert.True(t, prompttest.FitsBudget(f, p, cfg.Budget))
	assert.True(t, prompttest.SectionCut(f, p, prompt.SectionDiscoveries))
	assert.True(t, prompttest.SectionIntact(f, p, prompt.SectionWorld))
	assert.Less(t, prompttest.Items(f, p, prompt.SectionDiscoveries), 5, "the marker line is not an item")
	assert.False(t, f.failed(), "%v", f.errs)

	g := &fakeTB{}
	assert.False(t, prompttest.SectionIntact(g, p, prompt.SectionDiscoveries))
	require.Len(t, g.errs, 1)
	assert.True(t, strings.Contains(g.errs[0], "was cut"))
}

func TestAssembleHelperFailsFast(t *testing.T) {
	f := &fakeTB{}
	cfg := prompttest.HollowConfig()
	cfg.Budget = prompt.Budget{MaxChars: 5}
	p := prompttest.Assemble(f, prompt.New(cfg), prompttest.NewState("Cedar").Goals(identity.Done).View())
	assert.Nil(t, p)
	assert.True(t, f.fatal)
	assert.Contains(t, f.errs[0], "over budget")
}
