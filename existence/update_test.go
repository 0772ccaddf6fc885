package existence_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/prompt"
)

// TestUpdate: a running agent takes a new prompt, temperature, reply
// limit and working memory at its next cycle, its state kept; a bad
// update changes nothing.
func TestUpdate(t *testing.T) {
	f := newFixture(goalReply(t, "first"), goalReply(t, "second"))
	a := f.agent(t, existence.Config{Prompt: prompt.New(prompt.Config{Situation: "You are the old role."})})
	tick(t, a)
	assert.Contains(t, lastPrompt(t, f), "You are the old role.")

	neg := -1
	require.Error(t, a.Update(existence.Update{MaxTokens: &neg}))
	temp, tokens := 0.2, 321
	tp := &temp
	require.NoError(t, a.Update(existence.Update{
		Prompt:        prompt.New(prompt.Config{Situation: "You are the new role."}),
		Temperature:   &tp,
		MaxTokens:     &tokens,
		WorkingMemory: &existence.WorkingMemory{Enabled: true},
	}))
	tick(t, a)
	p := lastPrompt(t, f)
	assert.Contains(t, p, "You are the new role.")
	assert.Contains(t, p, prompt.WorkingMemoryHeader)
	req := f.model.Requests()[1]
	require.NotNil(t, req.Temperature)
	assert.InDelta(t, 0.2, *req.Temperature, 1e-9)
	assert.Equal(t, 321, req.MaxTokens)
	goals := a.State().Identity.Goals
	require.Len(t, goals, 2, "the state is kept")
	assert.Equal(t, "first", goals[0].Objective)
}
