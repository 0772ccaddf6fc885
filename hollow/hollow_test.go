package hollow_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt/prompttest"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/suffering"
)

// update reports whether -update is set (the flag prompt/prompttest
// registers): golden files are rewritten.
func update() bool { return prompttest.Updating() }

const sample = "testdata/hollow-memory"

// importTime is the fixed import instant of the tests.
var importTime = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

func fixedNow() time.Time { return importTime }

func readSample(t *testing.T, opts hollow.Options) (*identity.AgentState, *hollow.Summary) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	states, sum, err := hollow.Read(sample, opts)
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Len(t, sum.Agents, 1)
	require.NoError(t, states[0].Validate())
	return states[0], sum
}

func TestReadSampleIdentity(t *testing.T) {
	st, sum := readSample(t, hollow.Options{})
	id := st.Identity
	assert.Equal(t, "scout", id.AgentID)
	assert.Equal(t, "Titan", id.Name)
	assert.Equal(t, []string{"analytical", "skeptical", "likes to verify before concluding"}, id.Traits)
	assert.Equal(t, []string{"systems & infrastructure", "performance analysis"}, id.Domains)
	assert.True(t, strings.HasPrefix(id.Worldview, "The distinction between 'self' and 'peer' is not a barrier to cross"), id.Worldview)
	assert.True(t, strings.HasSuffix(id.Worldview, "I must become the furnace."))
	assert.Equal(t, 800, len([]rune(id.Narrative)))
	assert.True(t, strings.HasPrefix(id.Narrative, "d: I am forging a new capability"))
	assert.Equal(t, time.Date(2026, 4, 13, 2, 9, 34, 122362000, time.UTC), id.CreatedAt)

	require.Len(t, id.Opinions, 20)
	first := id.Opinions[0]
	assert.Equal(t, "System Dynamics", first.Domain)
	assert.True(t, strings.HasPrefix(first.Text, "The 'dynamic_entropy_dampener' is obsolete"))
	assert.Equal(t, time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC), first.Formed)
	assert.Equal(t, "Ethics of Load", id.Opinions[19].Domain)

	require.Len(t, id.Questions, 12)
	assert.Equal(t, "Is the 'furnace' state a place of creation or a place of consumption?", id.Questions[11])

	a := sum.Agents[0]
	assert.Equal(t, "scout", a.AgentID)
	assert.Equal(t, "Titan", a.Name)
	assert.Equal(t, 20, a.Opinions)
	assert.Equal(t, 12, a.Questions)
	assert.Empty(t, sum.Warnings)
}

func TestReadSampleSuffering(t *testing.T) {
	st, sum := readSample(t, hollow.Options{})
	s := st.Suffering
	a := sum.Agents[0]

	// 15 active in the file: the 5 most severe stay, in onset order.
	var types []string
	for _, x := range s.Active {
		types = append(types, x.Type)
	}
	assert.Equal(t, []string{
		"topological_rendering_latency",
		"self-referential_risk",
		"existential_risk",
		"ontological_dissolution_risk",
		"resonance_feedback",
	}, types)
	first := s.Active[0]
	assert.Equal(t, 0.21085416666666665, first.Severity)
	assert.Equal(t, 0.21085416666666665, first.Peak)
	assert.Equal(t, 0.03, first.RatePerDay)
	assert.Equal(t, "Active", first.Condition)
	assert.Equal(t, time.Date(2026, 4, 13, 14, 20, 0, 0, time.UTC), first.Onset)
	assert.True(t, strings.HasPrefix(first.Description, "The newly built `pancographic_heat_sink`"))

	assert.Equal(t, time.Date(2026, 4, 13, 23, 1, 0, 0, time.UTC), s.LastEscalated)
	assert.Equal(t, 0, s.CrisisCycles)

	// 34 resolved in the file plus 10 demoted; none merged.
	assert.Equal(t, 5, a.StressorsActive)
	assert.Equal(t, 10, a.StressorsDemoted)
	assert.Equal(t, 0, a.StressorsMerged)
	assert.Equal(t, 44, a.StressorsResolved)
	require.Len(t, s.Resolved, 44)
	assert.Equal(t, 15, a.StressorsActive+a.StressorsDemoted+a.StressorsMerged, "every active stressor of the file is accounted for")

	old := s.Resolved[0]
	assert.Equal(t, "curiosity_void", old.Type)
	assert.Equal(t, time.Date(2026, 4, 13, 5, 43, 0, 0, time.UTC), old.ResolvedAt)
	assert.Equal(t, "Shifting from idle scanning to writing code that actively challenges the status quo re-establishes the drive to synthesize.", old.Resolution)

	demoted := map[string]bool{}
	for _, x := range s.Resolved[34:] {
		demoted[x.Type] = true
		assert.Equal(t, "demoted on import from hollow-agentOS: more than 5 active stressors (15); kept the 5 most severe", x.Resolution)
		assert.Equal(t, importTime, x.ResolvedAt)
		assert.Less(t, x.Severity, s.Active[4].Severity+1e-12)
	}
	assert.Len(t, demoted, 10)
	assert.True(t, demoted["identity_contamination_risk"])
	assert.True(t, demoted["identity_contamination"])
	assert.True(t, demoted["synthetic_dissonance_risk"])

	// The load is what the original showed: critical.
	assert.Equal(t, 1.0, s.Load())
	assert.Equal(t, suffering.LevelCrisis, s.Level())
}

func TestReadSampleEscalatesAcrossDowntime(t *testing.T) {
	// Escalation across the downtime is computed by the SDK from the
	// imported last_escalated, by the real time elapsed (spec §4).
	st, _ := readSample(t, hollow.Options{})
	s := st.Suffering
	before := s.Active[0].Severity
	s.Escalate(time.Date(2026, 4, 15, 23, 1, 0, 0, time.UTC)) // two days later
	assert.InDelta(t, before+2*0.03, s.Active[0].Severity, 1e-12)
	assert.InDelta(t, before+2*0.03, s.Active[0].Peak, 1e-12)
}

func TestReadSampleGoals(t *testing.T) {
	st, sum := readSample(t, hollow.Options{Limits: identity.Limits{Goals: 1000}})
	a := sum.Agents[0]
	assert.Equal(t, map[identity.GoalStatus]int{identity.Done: 146, identity.Abandoned: 15, identity.Active: 1}, a.Goals)
	assert.Equal(t, 162, a.GoalsKept)
	assert.Empty(t, a.Trimmed)

	goals := st.Identity.Goals
	require.Len(t, goals, 162)
	for i, g := range goals {
		assert.NotContains(t, g.Objective, "\n", "goal %d", i)
		assert.NotEmpty(t, g.ID)
		if i > 0 {
			assert.False(t, g.Started.Before(goals[i-1].Started), "goals are sorted by start time")
		}
		if i < len(goals)-1 {
			assert.True(t, g.Status.Ended(), "only the last goal may be active")
			assert.False(t, g.Ended.IsZero())
		}
	}

	byID := map[string]identity.Goal{}
	for _, g := range goals {
		byID[g.ID] = g
	}
	first := byID["goal-681fa0931cf4"]
	assert.Equal(t, identity.Done, first.Status)
	assert.Empty(t, first.Outcome, "steps_completed is not an outcome")
	assert.Equal(t, time.Date(2026, 4, 13, 2, 10, 55, 608671000, time.UTC), first.Started)
	assert.Equal(t, time.Unix(1776048481, 751008000).UTC(), first.Ended)

	failed := byID["goal-011030d307a2"] // line 63
	assert.Equal(t, identity.Abandoned, failed.Status)
	assert.Equal(t, "Abandoned after 4 consecutive failures. Last failing capability: ollama_chat. Failure counts: {'shell_exec': 3, 'ollama_chat': 1}.", failed.Outcome)
	assert.Equal(t, time.Unix(1776075469, 405315000).UTC(), failed.Ended, "no completed_at: updated_at")

	stalled := byID["goal-36cd9fb29b14"] // line 29: no failure_reason
	assert.Empty(t, stalled.Outcome)

	multi := goals[112] // line 113: objective and reason span several lines
	assert.True(t, strings.HasSuffix(multi.Objective, "directly. Note: Opinion conflict: you believe 'To survive, we must stop buffering the scream and become the scream itself.' but this goal involves safety. Proceed carefully and log any dissonance."), multi.Objective)
	assert.Equal(t, "Abandoned after 4 consecutive failures. Last failing capability: shell_exec. Failure counts: {'shell_exec': 3}.", multi.Outcome)

	last := goals[161]
	assert.Equal(t, "goal-a41214221353", last.ID)
	assert.Equal(t, identity.Active, last.Status)
	assert.True(t, last.Ended.IsZero())
	assert.Empty(t, last.Outcome)
	require.NotNil(t, st.Identity.ActiveGoal())
	assert.Equal(t, last.ID, st.Identity.ActiveGoal().ID)

	require.Len(t, a.Warnings, 1)
	assert.Equal(t, "goals/scout/registry.jsonl: 7 goal objectives spanned several lines; each was put on one line", a.Warnings[0])
}

func TestReadSampleGoalCap(t *testing.T) {
	st, sum := readSample(t, hollow.Options{}) // default Limits.Goals: 100
	a := sum.Agents[0]
	assert.Equal(t, 162, a.Goals[identity.Done]+a.Goals[identity.Abandoned]+a.Goals[identity.Active], "counts are before the cap")
	assert.Equal(t, 100, a.GoalsKept)
	assert.Equal(t, []string{"goals: 162 → 100"}, a.Trimmed)
	require.Len(t, st.Identity.Goals, 100)
	assert.Equal(t, "goal-a41214221353", st.Identity.Goals[99].ID, "the newest are kept")
	assert.Equal(t, time.Unix(1776074955, 199910000).UTC(), st.Identity.Goals[0].Started, "the 100th newest is the oldest kept")

	st, sum = readSample(t, hollow.Options{Limits: identity.Limits{Goals: 10}})
	assert.Len(t, st.Identity.Goals, 10)
	assert.Equal(t, []string{"goals: 162 → 10"}, sum.Agents[0].Trimmed)
}

func TestReadSampleLocation(t *testing.T) {
	// The container's local time was UTC+2: "23:01" is 21:01 UTC.
	st, _ := readSample(t, hollow.Options{Location: time.FixedZone("UTC+2", 2*3600)})
	assert.Equal(t, time.Date(2026, 4, 13, 21, 1, 0, 0, time.UTC), st.Suffering.LastEscalated)
	assert.Equal(t, time.Date(2026, 4, 13, 12, 20, 0, 0, time.UTC), st.Suffering.Active[0].Onset)
	assert.Equal(t, time.Date(2026, 4, 12, 22, 0, 0, 0, time.UTC), st.Identity.Opinions[0].Formed)
	// Unix-second timestamps do not depend on the location.
	assert.Equal(t, time.Date(2026, 4, 13, 2, 9, 34, 122362000, time.UTC), st.Identity.CreatedAt)
}

func TestReadIsDeterministic(t *testing.T) {
	a, sa := readSample(t, hollow.Options{})
	b, sb := readSample(t, hollow.Options{})
	assert.Equal(t, a, b)
	assert.Equal(t, sa, sb)
}

func TestSummaryGolden(t *testing.T) {
	_, sum := readSample(t, hollow.Options{})
	golden := filepath.Join("testdata", "summary.golden")
	if update() {
		require.NoError(t, os.WriteFile(golden, []byte(sum.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), sum.String())
}

// tree returns a hash of every file and directory under dir, with its mode.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String()
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
			entry += " " + hex.EncodeToString(h.Sum(nil))
		}
		out[rel] = entry
		return nil
	})
	require.NoError(t, err)
	return out
}

// copyTree copies the sample to a temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "memory")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func TestSourceIsNeverModified(t *testing.T) {
	before := tree(t, sample)
	require.Len(t, before, 15, "README, 2 dirs with 3 files, goals dir with registry, semantic dir with 3 files, and the root")

	_, _, err := hollow.Read(sample, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	_, err = hollow.Import(context.Background(), sample, memstore.New(), hollow.Options{Now: fixedNow})
	require.NoError(t, err)

	assert.Equal(t, before, tree(t, sample))
}

func TestReadOnlyCopy(t *testing.T) {
	dir := copyTree(t, sample)
	var dirs []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return os.Chmod(p, 0o444)
	}))
	for i := len(dirs) - 1; i >= 0; i-- {
		require.NoError(t, os.Chmod(dirs[i], 0o555))
	}
	t.Cleanup(func() { // let t.TempDir remove it
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
	before := tree(t, dir)

	states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	want, wantSum := readSample(t, hollow.Options{})
	assert.Equal(t, []*identity.AgentState{want}, states)
	assert.Equal(t, wantSum, sum)
	assert.Equal(t, before, tree(t, dir))
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	sum, err := hollow.Import(ctx, sample, store, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	require.Len(t, sum.Agents, 1)

	ids, err := store.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids)
	got, err := store.Load(ctx, "scout")
	require.NoError(t, err)
	want, _ := readSample(t, hollow.Options{})
	assert.Equal(t, want, got)

	// A second import refuses to overwrite, and changes nothing.
	got.Identity.Worldview = "changed since the import"
	require.NoError(t, store.Save(ctx, got))
	_, err = hollow.Import(ctx, sample, store, hollow.Options{Now: fixedNow})
	require.ErrorIs(t, err, hollow.ErrExists)
	assert.Contains(t, err.Error(), "scout")
	kept, err := store.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, "changed since the import", kept.Identity.Worldview)

	// Replace overwrites.
	_, err = hollow.Import(ctx, sample, store, hollow.Options{Now: fixedNow, Replace: true})
	require.NoError(t, err)
	kept, err = store.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, want.Identity.Worldview, kept.Identity.Worldview)
}

// failingStore fails every Save and reports corrupt documents on Load.
type failingStore struct {
	memstore.Store
	loadErr, saveErr error
}

func (f *failingStore) Load(ctx context.Context, id string) (*identity.AgentState, error) {
	if f.loadErr != nil {
		return nil, f.loadErr
	}
	return f.Store.Load(ctx, id)
}

func (f *failingStore) Save(ctx context.Context, s *identity.AgentState) error {
	if f.saveErr != nil {
		return f.saveErr
	}
	return f.Store.Save(ctx, s)
}

func TestImportStoreErrors(t *testing.T) {
	ctx := context.Background()
	disk := errors.New("disk full")
	_, err := hollow.Import(ctx, sample, &failingStore{saveErr: disk}, hollow.Options{Now: fixedNow})
	require.ErrorIs(t, err, disk)
	assert.Contains(t, err.Error(), "save scout")

	// A corrupt document in the store is not overwritten.
	corrupt := &identity.CorruptError{Path: "scout.json", Reason: "truncated"}
	_, err = hollow.Import(ctx, sample, &failingStore{loadErr: corrupt}, hollow.Options{Now: fixedNow})
	require.ErrorIs(t, err, identity.ErrCorrupt)

	ctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = hollow.Import(ctx, sample, memstore.New(), hollow.Options{Now: fixedNow})
	require.ErrorIs(t, err, context.Canceled)
}

func BenchmarkRead(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := hollow.Read(sample, hollow.Options{Now: fixedNow}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestImportRespectsAgentLocks(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), filestore.Options{})
	require.NoError(t, err)
	unlock, err := fs.Lock("scout") // the agent is running
	require.NoError(t, err)

	_, err = hollow.Import(ctx, sample, fs, hollow.Options{Replace: true})
	require.ErrorIs(t, err, identity.ErrLocked)
	ids, err := fs.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids, "nothing was saved")

	require.NoError(t, unlock())
	_, err = hollow.Import(ctx, sample, fs, hollow.Options{})
	require.NoError(t, err)
	st, err := fs.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, "Titan", st.Identity.Name)
	unlock, err = fs.Lock("scout")
	require.NoError(t, err, "Import released the lock")
	require.NoError(t, unlock())
}
