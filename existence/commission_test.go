package existence_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/prompt"
)

// TestCommissioning: the instructions lead every prompt until the agent
// completes the ceremony (validated), which renames it, records when,
// and archives the instructions; a restart in the middle resumes it; an
// agent is never commissioned twice.
func TestCommissioning(t *testing.T) {
	ctx := context.Background()
	f := newFixture(goalReply(t, "follow my commissioning"), goalReply(t, "again"), goalReply(t, "now free"), goalReply(t, "later"))
	f.model.Repeat = true
	archived := 0
	cfg := existence.Config{Commissioning: &existence.Commissioning{
		Instructions: "# Bootstrap\nTake a name. Ask who your human is.",
		Archive:      func() error { archived++; return nil },
	}}
	a := f.agent(t, cfg)
	tick(t, a)
	assert.True(t, strings.HasPrefix(lastPrompt(t, f), prompt.CommissioningHeader+"\n# Bootstrap\nTake a name."), "the instructions come first")

	// A restart in the middle resumes the ceremony.
	require.NoError(t, a.Close())
	a = f.agent(t, cfg)
	tick(t, a)
	assert.Contains(t, lastPrompt(t, f), "Take a name.")

	for _, bad := range []existence.CommissionReport{
		{Name: "Ada\nLovelace", Personality: "curious", Human: "a Go programmer"},
		{Name: "Ada", Personality: " ", Human: "a Go programmer"},
		{Name: "Ada", Personality: "curious", Human: strings.Repeat("h", 501)},
	} {
		err := a.CompleteCommissioning(ctx, bad)
		assert.ErrorIs(t, err, existence.ErrCommissioning, "%+v", bad)
	}
	assert.True(t, a.State().Commissioned.IsZero(), "nothing recorded for a refused report")

	require.NoError(t, a.CompleteCommissioning(ctx, existence.CommissionReport{Name: "Ada", Personality: "curious, dry, precise", Human: "a Go programmer who likes maps"}))
	st := a.State()
	assert.Equal(t, t0, st.Commissioned)
	assert.Equal(t, "Ada", st.Identity.Name)
	assert.Equal(t, "Ada", a.Name())
	assert.Equal(t, []string{"curious", "dry", "precise"}, st.Identity.Traits)
	assert.Equal(t, "My human: a Go programmer who likes maps", st.Identity.Discoveries[len(st.Identity.Discoveries)-1].Text)
	assert.Equal(t, 1, archived)
	tick(t, a)
	assert.NotContains(t, lastPrompt(t, f), "COMMISSIONING", "later runs use the normal prompt")
	assert.True(t, strings.HasPrefix(lastPrompt(t, f), "You are Ada."))
	assert.ErrorIs(t, a.CompleteCommissioning(ctx, existence.CommissionReport{Name: "Bob", Personality: "x", Human: "y"}), existence.ErrCommissioning, "never twice")

	// Restarted with its instructions back: not commissioned again, they
	// are archived again.
	require.NoError(t, a.Close())
	f.rec.Reset()
	a = f.agent(t, cfg)
	tick(t, a)
	assert.NotContains(t, lastPrompt(t, f), "COMMISSIONING")
	assert.Equal(t, 2, archived)
	evs := f.rec.Kind(event.Commissioning)
	require.NotEmpty(t, evs)
	assert.Equal(t, "already_commissioned", evs[0].Reason)
}
