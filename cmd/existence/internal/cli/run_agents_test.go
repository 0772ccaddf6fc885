package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/agentdef"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/filestore"
)

// runAgents runs `existence run -agents DIR` with args on the in-process
// stand-in, the directory's watcher off (a synctest bubble).
func runAgents(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	o, err := parseRunFlags(args, io.Discard)
	require.NoError(t, err)
	o.standinHTTP, o.noReload = true, true
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	err = runTrio(ctx, o, &out, &errb)
	return out.String(), errb.String(), err
}

// TestEcologyExample: examples/ecology on the stand-in, for 6 cycles per
// agent (about a minute of virtual time): every agent cycles; the
// workflow agents' steps are events in order, each cycle; the strategic
// integrator's review comes on its schedule (cycles 1 and 6); the keeper
// completes its commissioning, takes its name, and its BOOTSTRAP.md is
// archived; the working memories are stored; the ignored key is listed.
func TestEcologyExample(t *testing.T) {
	dir := t.TempDir()
	defs := filepath.Join(dir, "ecology")
	require.NoError(t, os.CopyFS(defs, os.DirFS(filepath.Join("..", "..", "..", "..", "examples", "ecology"))))
	synctest.Test(t, func(t *testing.T) {
		t.Chdir(dir)
		out, errb, err := runAgents(t, "-agents", "ecology", "-llm-url", "standin:", "-heartbeat", "6s", "-json", "-cycles", "6")
		require.NoError(t, err, errb)
		assert.Contains(t, errb, filepath.Join("ecology", "keeper", "agent.yaml")+":4: starting_scrip ignored")

		chosen := map[string]int{}
		steps := map[string][]event.StepInfo{}
		var commissioned []event.Event
		wm := map[string]int{}
		for _, e := range events(t, out) {
			switch e.Kind {
			case event.GoalChosen:
				chosen[e.AgentID]++
			case event.Step:
				steps[e.AgentID] = append(steps[e.AgentID], *e.Step)
			case event.Commissioning:
				if e.Reason == "completed" {
					commissioned = append(commissioned, e)
				}
			case event.WorkingMemory:
				wm[e.AgentID+":"+e.Reason]++
			case event.Fallback:
				t.Errorf("%s: fallback: %s", e.AgentID, e.Error)
			}
		}
		assert.Equal(t, map[string]int{"keeper": 6, "architect": 6, "integrator": 6}, chosen, "every agent cycles")

		order := func(id string, names ...string) [][]string {
			var cycles [][]string
			for _, s := range steps[id] {
				require.Equal(t, names[s.Index-1], s.Name, "%s: step %d", id, s.Index)
				if s.Index == 1 {
					cycles = append(cycles, nil)
				}
				require.NotEmpty(t, cycles, "%s: a cycle starts at step 1", id)
				c := &cycles[len(cycles)-1]
				require.Len(t, *c, s.Index-1, "%s: steps in order", id)
				*c = append(*c, s.Status)
			}
			return cycles
		}
		arch := order("architect", "compute_metrics", "self_audit", "review_strategy", "decide_action")
		require.Len(t, arch, 6)
		var metrics []map[string]any
		for _, s := range steps["architect"] {
			if s.Name == "compute_metrics" {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(s.Output), &m))
				metrics = append(metrics, m)
			}
		}
		for i, c := range arch {
			m := metrics[i]
			review := m["stuck_in_loop"] == true || (m["success_rate"].(float64) >= 0 && m["success_rate"].(float64) < 0.5)
			want := map[bool]string{true: "done", false: "skipped"}[review]
			assert.Equal(t, []string{"done", "done", want, "done"}, c, "cycle %d: the review only when stuck or failing (%v)", i+1, m)
		}
		integ := order("integrator", "load_goals", "strategic_review", "update_goals", "tactical_plan", "decide_action")
		require.Len(t, integ, 6)
		var reviews []string
		for _, c := range integ {
			reviews = append(reviews, c[1])
		}
		assert.Equal(t, []string{"done", "skipped", "skipped", "skipped", "skipped", "done"}, reviews, "every 5 cycles")
		assert.Empty(t, steps["keeper"], "the plain agent runs the existence prompt")

		require.Len(t, commissioned, 1)
		assert.Equal(t, "keeper", commissioned[0].AgentID)
		assert.Equal(t, llmtest.CommissionedName, commissioned[0].Text)
		_, err = os.Stat(filepath.Join(defs, "keeper", agentdef.BootstrapFile))
		assert.ErrorIs(t, err, os.ErrNotExist, "BOOTSTRAP.md archived")
		archived, _ := filepath.Glob(filepath.Join(defs, "keeper", "BOOTSTRAP.commissioned-*.md"))
		require.Len(t, archived, 1, "renamed, not lost")
		b, err := os.ReadFile(archived[0])
		require.NoError(t, err)
		assert.Contains(t, string(b), "# Commissioning")

		assert.Positive(t, wm["architect:stored"])
		assert.Positive(t, wm["integrator:stored"])
		assert.Zero(t, wm["keeper:stored"], "working memory is off by default")

		store, err := filestore.Open("trio-state", filestore.Options{})
		require.NoError(t, err)
		st, err := store.Load(context.Background(), "keeper")
		require.NoError(t, err)
		assert.False(t, st.Commissioned.IsZero(), "the state records when")
		assert.Equal(t, llmtest.CommissionedName, st.Identity.Name)
		st, err = store.Load(context.Background(), "integrator")
		require.NoError(t, err)
		assert.Contains(t, string(st.WorkingMemory), `"strategic_goal":"make the workspace a mapped, documented place"`)
		_ = identity.Done
	})
}

// TestRunAgentsRefusesBadDefinitions: a directory with a bad definition
// starts nothing and names the file and line.
func TestRunAgentsRefusesBadDefinitions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "defs", "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "defs", "a", "agent.yaml"), []byte("id: a\nrag:\n  limt: 3\n"), 0o644))
	t.Chdir(dir)
	_, _, err := runAgents(t, "-agents", "defs", "-llm-url", "standin:", "-cycles", "1")
	require.Error(t, err)
	assert.ErrorIs(t, err, agentdef.ErrUnknownKey)
	assert.Contains(t, err.Error(), filepath.Join("defs", "a", "agent.yaml")+":3:")
	_, statErr := os.Stat(filepath.Join(dir, "trio-state"))
	assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing started")
}

// TestInitWritesTheTrio: existence init writes the trio as definitions
// that load, and never overwrites.
func TestInitWritesTheTrio(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	var out, errb bytes.Buffer
	require.Equal(t, ExitOK, Main([]string{"init", dir}, strings.NewReader(""), &out, &errb), errb.String())
	assert.Contains(t, out.String(), "run them: existence run -agents "+dir)
	set, err := agentdef.Load(dir, agentdef.Options{})
	require.NoError(t, err)
	require.Len(t, set.Agents, 3)
	for i, m := range members {
		d := set.Agents[[]int{2, 0, 1}[i]] // folders in name order: analyst, builder, scout
		assert.Equal(t, m.id, d.ID)
		assert.Equal(t, m.name, d.Name)
		assert.Equal(t, m.role, d.Role)
		assert.Equal(t, m.traits, d.Traits)
	}
	assert.Empty(t, set.Ignored)
	errb.Reset()
	assert.Equal(t, ExitError, Main([]string{"init", dir}, strings.NewReader(""), &out, &errb))
	assert.Contains(t, errb.String(), "exists")
}
