package identity_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/identity"
)

// The original's caps on what the model writes (spec §3, §5).
func TestQuestionAndOpinionCaps(t *testing.T) {
	var l identity.Limits
	var id identity.Identity

	assert.True(t, id.AddQuestion(strings.Repeat("é", 250), l))
	assert.Equal(t, strings.Repeat("é", 200), id.Questions[0], "a question is at most 200 code points")

	assert.True(t, id.AddQuestion("Why does fetch_url fail?", l))
	assert.False(t, id.AddQuestion("  why DOES fetch_url FAIL?\t", l), "a question already held is not added again")
	assert.True(t, id.HasQuestion("WHY does fetch_url fail?"))
	assert.Len(t, id.Questions, 2)

	assert.True(t, id.AddOpinion(identity.Opinion{Text: strings.Repeat("o", 250), Domain: strings.Repeat("日", 70)}, l))
	assert.Equal(t, strings.Repeat("o", 200), id.Opinions[0].Text)
	assert.Equal(t, strings.Repeat("日", 60), id.Opinions[0].Domain)

	d := identity.DefaultLimits()
	assert.Equal(t, []int{200, 200, 60, 20, 3, 2, 2, 80},
		[]int{d.QuestionChars, d.OpinionChars, d.DomainChars, d.WorldviewIgnored, d.QuestionsPerReply, d.OpinionsPerReply, d.ResolvedPerReply, d.GoalChars})
}

func TestEnforceCutsQuestionsAndOpinionsOnLoad(t *testing.T) {
	id := identity.Identity{
		Questions: []string{strings.Repeat("q", 300)},
		Opinions:  []identity.Opinion{{Text: strings.Repeat("o", 300), Domain: strings.Repeat("d", 100)}},
	}
	cuts := id.Enforce(identity.Limits{})
	assert.NotEmpty(t, cuts)
	assert.Len(t, id.Questions[0], 200)
	assert.Len(t, id.Opinions[0].Text, 200)
	assert.Len(t, id.Opinions[0].Domain, 60)
}
