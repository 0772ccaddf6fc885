package hollow_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
	"github.com/existence-loop/sdk/store/memstore"
)

// promptTime is the fixed instant of the three agents' prompts: two days
// after the real sample's last run.
var promptTime = time.Date(2026, 4, 15, 23, 1, 0, 0, time.UTC)

// trioSample is the real sample (scout) with the synthetic files of
// testdata/hollow-trio laid over it (see its README).
func trioSample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(sample)))
	overlay := filepath.Join("testdata", "hollow-trio")
	require.NoError(t, filepath.WalkDir(overlay, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(overlay, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	}))
	return dir
}

// TestImportedTrioPromptsGolden imports the three sample agents and prints
// the prompt each would read at promptTime, through the existence loop,
// with the original's prompt configuration (prompttest.HollowConfig). On
// the way, a person speaks to the scout (presence) and the builder, in
// crisis, runs one cycle (its crisis message reaches both peers). Run with
// -update to rewrite testdata/trio-prompts.golden.
func TestImportedTrioPromptsGolden(t *testing.T) {
	ctx := context.Background()
	clock := existencetest.NewClock(promptTime)
	store := memstore.New()
	_, err := hollow.Import(ctx, trioSample(t), store, hollow.Options{Now: clock.Now})
	require.NoError(t, err)

	r, err := runner.New(runner.Config{Store: store, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	reply, err := json.Marshal(map[string]any{
		"action": "goal", "content": "build a caching layer for the capability loader", "reasoning": "nothing I make is used",
		"worldview_update":   "short",
		"new_open_questions": []string{"q1?", "q2?", "q3?", "q4?"},
	})
	require.NoError(t, err)
	wait := existence.ExecutorFunc(func(ctx context.Context, _ existence.Assignment) (existence.Outcome, error) {
		<-ctx.Done()
		return existence.Outcome{Status: identity.Abandoned}, ctx.Err()
	})
	rec := &existencetest.Recorder{}
	// The trio's default names: every imported agent keeps its own.
	// A fixed order (not a map's): r.Agents() lists the agents in the
	// order they were added, which is the golden file's.
	for _, a := range []struct{ id, name string }{{"scout", "Cedar"}, {"analyst", "Cipher"}, {"builder", "Vault"}} {
		_, err := r.Add(ctx, existence.Config{
			ID: a.id, Name: a.name,
			Model:    llmtest.NewFake(llmtest.Reply{Text: string(reply)}),
			Prompt:   prompt.New(prompttest.HollowConfig()),
			Executor: wait, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}},
			Observer: rec.Observe,
		})
		require.NoError(t, err)
	}
	require.NoError(t, r.Agent("scout").SayAsHost(ctx, "Titan, what does the heat sink do? Answer with a file."))
	require.NoError(t, r.Agent("builder").Tick(ctx))

	var b strings.Builder
	for _, a := range r.Agents() {
		p, err := a.Preview(ctx)
		require.NoError(t, err)
		b.WriteString("=== prompt: " + a.ID() + " ===\n" + p.Text + "\n")
	}
	got := b.String()
	scout := got[:strings.Index(got, "=== prompt: analyst")]
	for _, want := range []string{
		"You are Titan.\n",
		prompt.PresenceLine + "\n",
		"  Running for: 0s\n  Last goal completed: 48h 0m ago\n",
		"WHAT YOUR LAST GOAL PRODUCED:\n  [DONE] Wrote /agentOS/workspace/scout/execution_engine_notes.md",
		"  - [DONE] I am forging `entropy_decay_circuit.py`. This is not a tool to dampen the c\n",
		"  [Forge]: I am in crisis (suffering 0.95/1.0). Active stressors: futility, invisibility. I am stepping back from goals until my load drops.\n",
		"Do NOT repeat goals you've already done.",
		"\n  Ember: ", "\n  Forge: ",
	} {
		assert.Contains(t, scout, want)
	}
	assert.NotContains(t, got, "Cedar", "names come from each profile.json, not names.json or the defaults")
	assert.Contains(t, got, "WHAT YOUR LAST GOAL PRODUCED:\n  [FAILED] Failed after 3 consecutive failures. Last failing capability: shell_exec.")
	assert.NotContains(t, got, "steps\n", "a step count is never an outcome")
	assert.Len(t, rec.Kind(event.GoalAnnotated), 1, "the builder's goal conflicts with its opinion on caching")
	assert.Len(t, rec.Kind(event.Capped), 2, "a short worldview update and a fourth question")

	path := filepath.Join("testdata", "trio-prompts.golden")
	if update() {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./hollow -update to create it")
	assert.Equal(t, string(want), got)
}
