package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunStandin runs the trio against the in-process stand-in model for a
// few cycles: each member prints exactly that many goals, run returns by
// itself, and the file store under -dir holds each agent with its goals
// ended (the last one's outcome recorded, no cycle past the limit).
func TestRunStandin(t *testing.T) {
	for _, cycles := range []int{1, 3} {
		dir := t.TempDir()
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), options{llmURL: "standin:", model: "qwen3.5:9b", dir: dir, cycles: cycles}, &out))
		goals := map[string]int{}
		for line := range strings.Lines(out.String()) {
			name, goal, ok := strings.Cut(line, "🎯")
			require.True(t, ok, "line %q is not a goal", line)
			assert.NotEmpty(t, strings.TrimSpace(goal), "line %q", line)
			goals[strings.TrimSpace(name)]++
		}
		store, err := filestore.Open(dir, filestore.Options{})
		require.NoError(t, err)
		for _, m := range trio.Members() {
			assert.Equal(t, cycles, goals[m.Name], "%s's goals printed", m.Name)
			st, err := store.Load(context.Background(), m.ID)
			require.NoError(t, err, m.ID)
			assert.Equal(t, m.Name, st.Identity.Name)
			assert.Equal(t, m.Traits, st.Identity.Traits)
			assert.Nil(t, st.Identity.ActiveGoal(), "%s's last goal ended", m.Name)
			assert.Len(t, st.Identity.Goals, cycles, "%s's goals stored", m.Name)
		}
		assert.Len(t, goals, len(trio.Members()), "only the trio printed")
	}
}

// TestRunBadURL: a model URL the adapter refuses is an error, not a run.
func TestRunBadURL(t *testing.T) {
	err := run(context.Background(), options{llmURL: "unix:///tmp/x", model: "m", cycles: 1}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "unix")
}
