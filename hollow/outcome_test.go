package hollow_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/hollow"
)

// Spec §2 row 13: an imported goal's outcome is the text the original recorded
// (a failure reason; last_outcome.txt for the last completed goal), never
// a step count.
func TestImportedOutcomes(t *testing.T) {
	registry := `{"goal_id": "g1", "objective": "one", "status": "completed", "metrics": {"steps_completed": 7}, "created_at": 1776000000}
{"goal_id": "g2", "objective": "two", "status": "completed", "metrics": {"steps_completed": 3}, "created_at": 1776000100}
{"goal_id": "g3", "objective": "three", "status": "failed", "metrics": {"steps_completed": 1, "failure_reason": "Goal 'three' failed: no such file."}, "created_at": 1776000200}
`
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json":   `{"name": "Ash"}`,
		"goals/a/registry.jsonl":    registry,
		"goals/a/last_outcome.txt":  "  Wrote notes.md with the three findings.\n",
		"identity/a/suffering.json": sufferingJSON(),
	})
	st, _ := readOne(t, dir, hollow.Options{})
	g := st.Identity.Goals
	assert.Equal(t, "", g[0].Outcome, "a step count is not an outcome")
	assert.Equal(t, "Wrote notes.md with the three findings.", g[1].Outcome, "last_outcome.txt belongs to the last completed goal")
	assert.Equal(t, "Failed: no such file.", g[2].Outcome)

	dir = writeTree(t, map[string]string{
		"identity/a/profile.json":  `{"name": "Ash"}`,
		"goals/a/last_outcome.txt": "orphan",
	})
	st, as := readOne(t, dir, hollow.Options{})
	assert.Empty(t, st.Identity.Goals)
	assert.True(t, hasWarning(as.Warnings, "goals/a/last_outcome.txt: no completed goal to hold it"), "%q", as.Warnings)
}
