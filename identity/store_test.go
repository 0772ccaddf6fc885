package identity

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/suffering"
)

// The Store promises (round trip, copies, list, hostile ids, invalid
// states, cancellation, concurrency) are checked for MemoryStore and
// FileStore by identity/storetest (storetest_test.go).

func TestMemoryStoreZeroValue(t *testing.T) {
	var m MemoryStore
	ctx := context.Background()
	_, err := m.Load(ctx, "scout")
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, m.Save(ctx, sampleState("scout")))
	ids, err := m.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids)
}

func TestStateValidate(t *testing.T) {
	st := sampleState("scout")
	require.NoError(t, st.Validate())

	st.Identity.AgentID = "Bad"
	require.ErrorIs(t, st.Validate(), ErrInvalidID)

	st = sampleState("scout")
	st.Suffering.Resolved[0].Peak = 1.5
	err := st.Validate()
	require.ErrorIs(t, err, suffering.ErrInvalid)
	assert.Equal(t, "suffering: invalid stressor: resolved[0].peak_severity is 1.5, want 0–1", err.Error())
}

func TestStateCloneIsDeep(t *testing.T) {
	orig := sampleState("scout")
	before := stateJSON(t, orig, true)
	c := orig.Clone()
	c.Identity.Questions[0] = "x"
	c.Suffering.Active[0].Severity = 1
	c.Suffering.Resolved[0].Type = "x"
	c.Inbox[0].Text = "x"
	c.Host[0].Text = "x"
	assert.Equal(t, before, stateJSON(t, orig, true))
}

func TestCorruptErrorMatching(t *testing.T) {
	inner := fmt.Errorf("inner")
	err := fmt.Errorf("wrapped: %w", &CorruptError{Path: "/s/scout.json", Reason: "truncated", Err: inner})
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, inner)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "identity: corrupt state document /s/scout.json: truncated", ce.Error())
}
