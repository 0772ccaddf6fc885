package identity_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/storetest"
	"github.com/existence-loop/sdk/suffering"
)

func TestStateValidate(t *testing.T) {
	st := storetest.FullState("scout")
	require.NoError(t, st.Validate())

	st.Identity.AgentID = "Bad"
	require.ErrorIs(t, st.Validate(), identity.ErrInvalidID)

	st = storetest.FullState("scout")
	st.Suffering.Resolved[0].Peak = 1.5
	err := st.Validate()
	require.ErrorIs(t, err, suffering.ErrInvalid)
	assert.Equal(t, "suffering: invalid stressor: resolved[0].peak_severity is 1.5, want 0–1", err.Error())
}

func TestStateCloneIsDeep(t *testing.T) {
	orig := storetest.FullState("scout")
	before := storetest.StateJSON(t, orig)
	c := orig.Clone()
	c.Identity.Questions[0] = "x"
	c.Suffering.Active[0].Severity = 1
	c.Suffering.Resolved[0].Type = "x"
	c.Inbox[0].Text = "x"
	c.Host[0].Text = "x"
	assert.Equal(t, before, storetest.StateJSON(t, orig))
}

func TestCorruptErrorMatching(t *testing.T) {
	inner := fmt.Errorf("inner")
	err := fmt.Errorf("wrapped: %w", &identity.CorruptError{Path: "/s/scout.json", Reason: "truncated", Err: inner})
	require.ErrorIs(t, err, identity.ErrCorrupt)
	require.ErrorIs(t, err, inner)
	var ce *identity.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "corrupt state document /s/scout.json: truncated", ce.Error())
}

func TestIdentityCloneIsDeep(t *testing.T) {
	orig := storetest.FullState("scout").Identity
	before := fmt.Sprintf("%#v", orig)
	c := orig.Clone()
	c.Traits[0] = "x"
	c.Domains[0] = "x"
	c.Opinions[0].Text = "x"
	c.Questions[0] = "x"
	c.Discoveries[0].Text = "x"
	c.Goals[0].Objective = "x"
	c.Goals[1].BrokenTools[0] = "x"
	assert.Equal(t, before, fmt.Sprintf("%#v", orig))
}
