package hollow_test

import (
	"errors"
	"fmt"
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
	"github.com/existence-loop/sdk/suffering"
)

// writeTree writes files (slash-separated path → content) under a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// readOne reads dir, which must hold exactly one agent, and checks that
// its state validates.
func readOne(t *testing.T, dir string, opts hollow.Options) (*identity.AgentState, hollow.AgentSummary) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	states, sum, err := hollow.Read(dir, opts)
	require.NoError(t, err)
	require.Len(t, states, 1, "summary:\n%s", sum)
	require.NoError(t, states[0].Validate())
	return states[0], sum.Agents[0]
}

// hasWarning reports whether some warning contains every part.
func hasWarning(warnings []string, parts ...string) bool {
next:
	for _, w := range warnings {
		for _, p := range parts {
			if !strings.Contains(w, p) {
				continue next
			}
		}
		return true
	}
	return false
}

const profileA = `{"agent_id": "a", "name": "Ash", "created_at": 1776046174.5}`

func stressorJSON(typ string, sev any, onset string) string {
	return fmt.Sprintf(`{"type": %q, "description": "d %s", "severity": %v, "onset": %q, "escalation_per_day": 0.03, "observable_condition": "c", "resolved": false, "resolved_at": null, "resolution_note": "", "peak_severity": %v}`, typ, typ, sev, onset, sev)
}

func sufferingJSON(active ...string) string {
	return `{"active_stressors": [` + strings.Join(active, ",") + `], "resolved_history": [], "last_escalated": "2026-04-13 23:01"}`
}

func TestStressorTypesNormalisedAndMerged(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"identity/a/suffering.json": sufferingJSON(
			stressorJSON("Identity Contamination Risk", 0.21, "2026-04-13 10:00"),
			stressorJSON("  identity contamination risk ", 0.30, "2026-04-13 11:00"),
			stressorJSON("IDENTITY CONTAMINATION RISK", 0.25, "2026-04-13 12:00"),
			stressorJSON("Repeated Failure", 0.2, "2026-04-13 09:00"),
		),
	})
	st, a := readOne(t, dir, hollow.Options{})
	s := st.Suffering
	require.Len(t, s.Active, 2)
	assert.Equal(t, "repeated_failure", s.Active[0].Type, "active stressors in onset order")
	assert.Equal(t, "identity_contamination_risk", s.Active[1].Type)
	assert.Equal(t, 0.30, s.Active[1].Severity, "the most severe duplicate stays active")
	assert.Equal(t, 0.03, s.Active[0].RatePerDay, "the stored rate is kept")

	assert.Equal(t, 2, a.StressorsMerged)
	assert.Equal(t, 0, a.StressorsDemoted)
	require.Len(t, s.Resolved, 2)
	for _, r := range s.Resolved {
		assert.Equal(t, "identity_contamination_risk", r.Type)
		assert.Equal(t, importTime, r.ResolvedAt)
		assert.Contains(t, r.Resolution, "merged on import from hollow-agentOS")
		assert.Contains(t, r.Resolution, "kept the more severe one active")
	}
	assert.Contains(t, s.Resolved[0].Resolution, `"Identity Contamination Risk"`)
	assert.Contains(t, s.Resolved[1].Resolution, `"IDENTITY CONTAMINATION RISK"`)
}

func TestMoreThanFiveActiveStressors(t *testing.T) {
	var active []string
	for i := range 8 {
		active = append(active, stressorJSON(fmt.Sprintf("Type %d", i), 0.2+0.01*float64(i%4), fmt.Sprintf("2026-04-13 %02d:00", 10+i)))
	}
	// Two of the eight are duplicates after normalisation: merge first,
	// then demote.
	active = append(active, stressorJSON("type 7", 0.1, "2026-04-13 20:00"))
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json":   profileA,
		"identity/a/suffering.json": sufferingJSON(active...),
	})
	st, a := readOne(t, dir, hollow.Options{})
	s := st.Suffering
	assert.Equal(t, 1, a.StressorsMerged)
	assert.Equal(t, 3, a.StressorsDemoted)
	assert.Equal(t, 5, a.StressorsActive)
	require.Len(t, s.Active, 5)

	// Severities: type 0..7 = .20 .21 .22 .23 .20 .21 .22 .23; keep the
	// five most severe (ties: earlier first): 3, 7, 2, 6, 1.
	var kept []string
	for _, x := range s.Active {
		kept = append(kept, x.Type)
	}
	assert.Equal(t, []string{"type_1", "type_2", "type_3", "type_6", "type_7"}, kept)

	require.Len(t, s.Resolved, 4)
	var demoted []string
	for _, r := range s.Resolved[1:] {
		demoted = append(demoted, r.Type)
		assert.Equal(t, "demoted on import from hollow-agentOS: more than 5 active stressors (8); kept the 5 most severe", r.Resolution)
	}
	assert.Equal(t, []string{"type_0", "type_4", "type_5"}, demoted, "demoted in onset order")
}

func TestSeveritiesClamped(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"identity/a/suffering.json": `{"active_stressors": [
			{"type": "nan", "severity": NaN, "peak_severity": NaN, "escalation_per_day": NaN, "onset": "2026-04-13 10:00"},
			{"type": "inf", "severity": Infinity, "peak_severity": -Infinity, "escalation_per_day": 2, "onset": "2026-04-13 10:00"},
			{"type": "negative", "severity": -0.5, "peak_severity": 0.4, "escalation_per_day": -1, "onset": "2026-04-13 10:00"},
			{"type": "high", "severity": 1.7, "onset": "2026-04-13 10:00"},
			{"type": "word", "severity": "high", "onset": "2026-04-13 10:00"}
		], "resolved_history": [
			{"type": "old", "severity": 1e999, "peak_severity": "NaN", "onset": "2026-04-13 09:00", "resolved_at": "2026-04-13 09:30", "resolution_note": "gone"}
		], "last_escalated": "2026-04-13 23:01"}`,
	})
	st, a := readOne(t, dir, hollow.Options{})
	s := st.Suffering
	sev := map[string][3]float64{}
	for _, x := range append(s.Active, s.Resolved...) {
		sev[x.Type] = [3]float64{x.Severity, x.Peak, x.RatePerDay}
	}
	assert.Equal(t, map[string][3]float64{
		"nan":      {0.20, 0.20, 0.03},
		"inf":      {1, 1, 0.03},
		"negative": {0, 0.4, 0.03},
		"high":     {1, 1, 0.03},
		"word":     {0.20, 0.20, 0.03},
		"old":      {1, 1, 0.03},
	}, sev)
	w := a.Warnings
	assert.True(t, hasWarning(w, "active_stressors[0]: severity is NaN; set to 0.20"), "%q", w)
	assert.True(t, hasWarning(w, "active_stressors[0]: escalation_per_day NaN outside 0–1"))
	assert.True(t, hasWarning(w, "active_stressors[1]: severity +Inf above 1; clamped to 1"))
	assert.True(t, hasWarning(w, "active_stressors[2]: severity -0.5 below 0; clamped to 0"))
	assert.True(t, hasWarning(w, "active_stressors[3]: severity 1.7 above 1"))
	assert.True(t, hasWarning(w, "active_stressors[4]: severity: want a number, got a string"))
	assert.True(t, hasWarning(w, "active_stressors[4]: no severity; set to 0.20"))
	assert.True(t, hasWarning(w, "resolved_history[0]: severity +Inf above 1"))
}

func TestOverCapLists(t *testing.T) {
	var ops, qs []string
	for i := range 30 {
		ops = append(ops, fmt.Sprintf(`{"opinion": "opinion %d", "domain": "d", "formed": "2026-04-%02d"}`, i, 1+i%28))
		qs = append(qs, fmt.Sprintf("%q", fmt.Sprintf("question %d?", i)))
	}
	worldview := strings.Repeat("é", 900)
	narrative := strings.Repeat("n", 1000) + "END"
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": fmt.Sprintf(`{"agent_id": "a", "name": "Ash", "worldview": %q, "narrative": %q, "opinions_list": [%s], "open_questions": [%s]}`,
			worldview, narrative, strings.Join(ops, ","), strings.Join(qs, ",")),
	})
	st, a := readOne(t, dir, hollow.Options{})
	id := st.Identity
	assert.Equal(t, strings.Repeat("é", 600), id.Worldview)
	assert.Equal(t, 800, len([]rune(id.Narrative)))
	assert.True(t, strings.HasSuffix(id.Narrative, "END"), "the narrative keeps its tail")
	require.Len(t, id.Opinions, 20)
	assert.Equal(t, "opinion 10", id.Opinions[0].Text, "the newest opinions are kept")
	require.Len(t, id.Questions, 12)
	assert.Equal(t, "question 29?", id.Questions[11])
	assert.Equal(t, 20, a.Opinions)
	assert.Equal(t, 12, a.Questions)
	assert.ElementsMatch(t, []string{
		"worldview characters: 900 → 600",
		"narrative characters: 1003 → 800",
		"opinions: 30 → 20",
		"open questions: 30 → 12",
	}, a.Trimmed)

	// Smaller limits from the options.
	_, a = readOne(t, dir, hollow.Options{Limits: identity.Limits{Opinions: 5, Questions: 2}})
	assert.Equal(t, 5, a.Opinions)
	assert.Equal(t, 2, a.Questions)
}

func TestMissingFiles(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantName string
		warnings [][]string
		check    func(t *testing.T, st *identity.AgentState)
	}{
		{
			name:     "no suffering.json",
			files:    map[string]string{"identity/a/profile.json": profileA, "goals/a/registry.jsonl": ""},
			wantName: "Ash",
			warnings: [][]string{{"identity/a/suffering.json: missing; no stressors imported"}},
			check: func(t *testing.T, st *identity.AgentState) {
				assert.Empty(t, st.Suffering.Active)
				assert.Equal(t, importTime, st.Suffering.LastEscalated)
			},
		},
		{
			name:     "no registry.jsonl",
			files:    map[string]string{"identity/a/profile.json": profileA, "identity/a/suffering.json": sufferingJSON()},
			wantName: "Ash",
			warnings: [][]string{{"goals/a/registry.jsonl: missing; no goal history imported"}},
			check:    func(t *testing.T, st *identity.AgentState) { assert.Empty(t, st.Identity.Goals) },
		},
		{
			name:     "no profile.json, name from names.json",
			files:    map[string]string{"identity/names.json": `{"Ash": "a"}`, "identity/a/suffering.json": sufferingJSON()},
			wantName: "Ash",
			warnings: [][]string{{"identity/a/profile.json: missing; identity built from identity/names.json"}},
			check:    func(t *testing.T, st *identity.AgentState) { assert.Equal(t, importTime, st.Identity.CreatedAt) },
		},
		{
			name:     "only names.json",
			files:    map[string]string{"identity/names.json": `{"Ash": "a"}`},
			wantName: "Ash",
			warnings: [][]string{
				{"identity/a/profile.json: missing; identity built from identity/names.json"},
				{"identity/a/suffering.json: missing"},
				{"goals/a/registry.jsonl: missing"},
			},
		},
		{
			name:     "only goals, no name anywhere",
			files:    map[string]string{"goals/a/registry.jsonl": `{"goal_id": "g1", "objective": "x", "status": "completed", "created_at": 1776046174}`},
			wantName: "a",
			warnings: [][]string{{"no name in profile.json or identity/names.json; using the agent id \"a\""}},
			check:    func(t *testing.T, st *identity.AgentState) { assert.Len(t, st.Identity.Goals, 1) },
		},
		{
			name:     "missing fields",
			files:    map[string]string{"identity/a/profile.json": `{}`, "identity/a/suffering.json": `{"active_stressors": [{}]}`},
			wantName: "a",
			warnings: [][]string{
				{"profile.json: no created_at; set to the import time"},
				{"active_stressors[0]: no type; imported as \"unspecified\""},
				{"active_stressors[0]: no severity; set to 0.20"},
				{"active_stressors[0]: no onset; set to the import time"},
				{"suffering.json: no last_escalated; escalation counts from the import time"},
			},
			check: func(t *testing.T, st *identity.AgentState) {
				require.Len(t, st.Suffering.Active, 1)
				x := st.Suffering.Active[0]
				assert.Equal(t, "unspecified", x.Type)
				assert.Equal(t, 0.20, x.Severity)
				assert.Equal(t, importTime, x.Onset)
				assert.Equal(t, importTime, st.Suffering.LastEscalated)
				assert.Equal(t, importTime, st.Identity.CreatedAt)
			},
		},
		{
			name: "names.json and profile disagree",
			files: map[string]string{
				"identity/names.json":     `{"Other": "a", "Zed": "a"}`,
				"identity/a/profile.json": `{"agent_id": "b", "name": "Ash", "created_at": 1}`,
			},
			wantName: "Ash",
			warnings: [][]string{
				{`"Other" and "Zed" both name agent "a"; using "Other"`},
				{`identity/names.json calls a "Other"; using "Ash" from profile.json`},
				{`agent_id is "b"; imported as "a", its directory name`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
			require.NoError(t, err)
			require.Len(t, states, 1)
			st := states[0]
			require.NoError(t, st.Validate())
			assert.Equal(t, "a", st.Identity.AgentID)
			assert.Equal(t, tt.wantName, st.Identity.Name)
			all := append(sum.Agents[0].Warnings, sum.Warnings...)
			for _, w := range tt.warnings {
				assert.True(t, hasWarning(all, w...), "want a warning with %q in\n%s", w, strings.Join(all, "\n"))
			}
			if tt.check != nil {
				tt.check(t, st)
			}
		})
	}
}

func TestBadRegistryLines(t *testing.T) {
	long := `{"goal_id": "long", "objective": "` + strings.Repeat("x", hollow.MaxLineSize) + `", "status": "completed", "created_at": 1}`
	lines := []string{
		`{"goal_id": "g1", "objective": "first", "status": "completed", "created_at": 1776000001, "completed_at": 1776000002, "metrics": {"steps_completed": 3}}`,
		`this is not json`,
		`[1, 2, 3]`,
		``,
		`{"goal_id": "g2", "objective": "truncated", "status": "compl`,
		`{"goal_id": "g3", "status": "completed", "created_at": 1776000003}`,
		long,
		`{"goal_id": "g4", "objective": "fourth", "status": "failed", "created_at": 1776000004, "metrics": "not an object"}`,
		`{"goal_id": "g5", "objective": "fifth", "status": "active", "created_at": 1776000005}` + "\r",
	}
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"goals/a/registry.jsonl":  strings.Join(lines, "\n"), // no final newline
	})
	st, a := readOne(t, dir, hollow.Options{})
	var ids []string
	for _, g := range st.Identity.Goals {
		ids = append(ids, g.ID)
	}
	assert.Equal(t, []string{"g1", "g4", "g5"}, ids)
	assert.Equal(t, map[identity.GoalStatus]int{identity.Done: 1, identity.Failed: 1, identity.Active: 1}, a.Goals)
	assert.Empty(t, st.Identity.Goals[0].Outcome, "a step count is not an outcome")

	w := a.Warnings
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:2: skipped: not a JSON object"), "%q", w)
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:3: skipped: not a JSON object"))
	assert.False(t, hasWarning(w, "registry.jsonl:4:"), "a blank line is not a warning")
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:5: skipped: not a JSON object"))
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:6: skipped: no objective"))
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:7: skipped: line longer than 1048576 bytes"))
	assert.True(t, hasWarning(w, "goals/a/registry.jsonl:8: metrics: skipped: not a JSON object"))
}

func TestRegistryGoals(t *testing.T) {
	lines := []string{
		// Out of order on purpose.
		`{"goal_id": "g3", "objective": "third\n\n  with   a\r\nbreak  ", "status": "abandoned", "created_at": 1776000300, "updated_at": 1776000350, "metrics": {"steps_completed": 4, "progress": 0.25}}`,
		`{"goal_id": "g1", "objective": "first", "status": "active", "created_at": 1776000100, "updated_at": 1776000150}`,
		`{"goal_id": "g2", "objective": "second", "status": "Completed", "created_at": 1776000200, "completed_at": 1776000250, "metrics": {"steps_completed": 1}}`,
		`{"goal_id": "g4", "objective": "fourth", "status": "paused", "created_at": 1776000400}`,
		`{"goal_id": "g5", "objective": "fifth", "status": "failed", "created_at": 1776000500, "metrics": {"failure_reason": "Goal 'fifth' failed after 4 consecutive failures."}}`,
		`{"goal_id": "g6", "objective": "sixth", "status": "active", "created_at": 1776000600}`,
		`{"goal_id": "g7", "objective": "seventh", "status": "active", "updated_at": "2026-04-12 13:16"}`,
		`{"goal_id": "g8", "objective": "eighth", "status": "completed"}`,
		`{"objective": "no id", "status": "completed", "created_at": 1776000000}`,
		`{"goal_id": "g2", "objective": "same id", "status": "completed", "created_at": 1776000001, "agent_id": "b"}`,
	}
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"goals/a/registry.jsonl":  strings.Join(lines, "\n") + "\n",
	})
	st, a := readOne(t, dir, hollow.Options{})
	goals := st.Identity.Goals
	type row struct {
		ID        string
		Objective string
		Status    identity.GoalStatus
		Outcome   string
	}
	var got []row
	for _, g := range goals {
		got = append(got, row{g.ID, g.Objective, g.Status, g.Outcome})
	}
	stale := "abandoned on import from hollow-agentOS: only the newest goal can stay active"
	// Sorted by start time: g7 has only updated_at (2026-04-12 13:16 UTC,
	// before every unix time here) and g8 no time at all (the import time).
	assert.Equal(t, []row{
		{"g7", "seventh", identity.Abandoned, stale},
		{"hollow-line-9", "no id", identity.Done, ""},
		{"g2", "same id", identity.Done, ""},
		{"g1", "first", identity.Abandoned, stale},
		{"g2", "second", identity.Done, ""},                    // step counts are not outcomes (spec §2 row 13)
		{"g3", "third with   a break", identity.Abandoned, ""}, // nor is progress
		{"g4", "fourth", identity.Abandoned, `status "paused" in hollow-agentOS`},
		{"g5", "fifth", identity.Failed, "Failed after 4 consecutive failures."},
		{"g6", "sixth", identity.Abandoned, stale},
		{"g8", "eighth", identity.Done, ""},
	}, got)

	byObjective := map[string]identity.Goal{}
	for _, g := range goals {
		byObjective[g.Objective] = g
	}
	assert.Equal(t, time.Unix(1776000200, 0).UTC(), byObjective["first"].Ended, "a stale active goal ended when the next one started")
	assert.Equal(t, time.Unix(1776000350, 0).UTC(), byObjective["third with   a break"].Ended)
	assert.Equal(t, time.Unix(1776000250, 0).UTC(), byObjective["second"].Ended)
	eighth := byObjective["eighth"]
	assert.Equal(t, importTime, eighth.Started)
	assert.Equal(t, importTime, eighth.Ended)
	assert.Nil(t, st.Identity.ActiveGoal())

	assert.Equal(t, map[identity.GoalStatus]int{identity.Done: 4, identity.Abandoned: 5, identity.Failed: 1}, a.Goals)
	w := a.Warnings
	assert.True(t, hasWarning(w, "registry.jsonl: 1 goal objectives spanned several lines"), "%q", w)
	assert.True(t, hasWarning(w, "registry.jsonl: 3 older active goals marked ABANDONED"))
	assert.True(t, hasWarning(w, `registry.jsonl:4: status "paused"; imported as ABANDONED`))
	assert.True(t, hasWarning(w, `registry.jsonl:8: no created_at; set to the import time`))
	assert.True(t, hasWarning(w, `registry.jsonl:9: no goal_id; set to "hollow-line-9"`))
	assert.True(t, hasWarning(w, `registry.jsonl:10: goal_id "g2" also on line 3`))
	assert.True(t, hasWarning(w, `registry.jsonl:10: agent_id is "b"`))
}

func TestNewestActiveGoalStays(t *testing.T) {
	lines := []string{
		`{"goal_id": "old", "objective": "old", "status": "active", "created_at": 1776000100}`,
		`{"goal_id": "done", "objective": "done", "status": "completed", "created_at": 1776000200}`,
		`{"goal_id": "new", "objective": "new", "status": "active", "created_at": 1776000300}`,
	}
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"goals/a/registry.jsonl":  strings.Join(lines, "\n"),
	})
	st, a := readOne(t, dir, hollow.Options{})
	require.NotNil(t, st.Identity.ActiveGoal())
	assert.Equal(t, "new", st.Identity.ActiveGoal().ID)
	assert.Equal(t, identity.Abandoned, st.Identity.Goals[0].Status)
	assert.Equal(t, map[identity.GoalStatus]int{identity.Done: 1, identity.Abandoned: 1, identity.Active: 1}, a.Goals)
}

func TestGoalCapKeepsNewest(t *testing.T) {
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"goal_id": "g%d", "objective": "goal %d", "status": "completed", "created_at": %d}`, i, i, 1776000000+i))
	}
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"goals/a/registry.jsonl":  strings.Join(lines, "\n"),
	})
	st, a := readOne(t, dir, hollow.Options{Limits: identity.Limits{Goals: 3}})
	require.Len(t, st.Identity.Goals, 3)
	assert.Equal(t, "g7", st.Identity.Goals[0].ID)
	assert.Equal(t, "g9", st.Identity.Goals[2].ID)
	assert.Equal(t, 10, a.Goals[identity.Done])
	assert.Equal(t, 3, a.GoalsKept)
	assert.Equal(t, []string{"goals: 10 → 3"}, a.Trimmed)
}

func TestTimestamps(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": `{"name": "Ash", "created_at": "2026-04-13T02:09:34Z", "opinions_list": [
			{"opinion": "a", "domain": "d", "formed": "2026-04-13"},
			{"opinion": "b", "domain": "d", "formed": "yesterday"},
			{"opinion": "c", "domain": "d"}]}`,
		"identity/a/suffering.json": `{"active_stressors": [
			{"type": "a", "severity": 0.2, "onset": "2026-04-13 10:00:30"},
			{"type": "b", "severity": 0.2, "onset": "2026-04-13T10:00"},
			{"type": "c", "severity": 0.2, "onset": 1776074400.25},
			{"type": "d", "severity": 0.2, "onset": "not a time"},
			{"type": "e", "severity": 0.2, "onset": -5}
		], "last_escalated": "2026-04-13T23:01:00+02:00"}`,
	})
	st, a := readOne(t, dir, hollow.Options{Location: time.FixedZone("UTC-5", -5*3600)})
	assert.Equal(t, time.Date(2026, 4, 13, 2, 9, 34, 0, time.UTC), st.Identity.CreatedAt)
	assert.Equal(t, time.Date(2026, 4, 13, 5, 0, 0, 0, time.UTC), st.Identity.Opinions[0].Formed)
	assert.True(t, st.Identity.Opinions[1].Formed.IsZero())
	assert.True(t, st.Identity.Opinions[2].Formed.IsZero())
	assert.Equal(t, time.Date(2026, 4, 13, 21, 1, 0, 0, time.UTC), st.Suffering.LastEscalated, "RFC 3339 keeps its own zone")
	onsets := map[string]time.Time{}
	for _, x := range st.Suffering.Active {
		onsets[x.Type] = x.Onset
	}
	assert.Equal(t, time.Date(2026, 4, 13, 15, 0, 30, 0, time.UTC), onsets["a"])
	assert.Equal(t, time.Date(2026, 4, 13, 15, 0, 0, 0, time.UTC), onsets["b"])
	assert.Equal(t, time.Date(2026, 4, 13, 10, 0, 0, 250000000, time.UTC), onsets["c"])
	assert.Equal(t, importTime, onsets["d"])
	assert.Equal(t, importTime, onsets["e"])
	assert.True(t, hasWarning(a.Warnings, `opinions_list[1]: formed: unreadable time "yesterday"`), "%q", a.Warnings)
	assert.True(t, hasWarning(a.Warnings, `active_stressors[3]: onset: unreadable time "not a time"`))
	assert.True(t, hasWarning(a.Warnings, `active_stressors[4]: onset: -5 is not a plausible unix time`))
}

func TestWrongTypes(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": `{"name": 7, "traits": "curious", "domains": [1, "infra", null, "  "], "worldview": ["x"],
			"open_questions": {"q": 1}, "opinions_list": ["text", {"domain": "no text"}, {"opinion": "ok", "domain": 3}], "created_at": true}`,
		"identity/a/suffering.json": `{"active_stressors": {"type": "x"}, "resolved_history": [1, {"type": "r", "severity": 0.3, "onset": "2026-04-13 10:00", "resolved_at": "2026-04-13 11:00"}], "last_escalated": 5e12}`,
		"identity/names.json":       `{"Ash": "a", "Bad": 3}`,
	})
	st, a := readOne(t, dir, hollow.Options{})
	id := st.Identity
	assert.Equal(t, "Ash", id.Name, "name from names.json when the profile's is not a string")
	assert.Equal(t, []string{"curious"}, id.Traits)
	assert.Equal(t, []string{"infra"}, id.Domains)
	assert.Empty(t, id.Worldview)
	assert.Empty(t, id.Questions)
	require.Len(t, id.Opinions, 1)
	assert.Equal(t, identity.Opinion{Text: "ok"}, id.Opinions[0])
	assert.Empty(t, st.Suffering.Active)
	require.Len(t, st.Suffering.Resolved, 1)
	assert.Equal(t, "r", st.Suffering.Resolved[0].Type)
	assert.Equal(t, importTime, st.Suffering.LastEscalated)

	for _, w := range []string{
		"profile.json: name: want a string, got a number",
		"profile.json: traits: want a list of strings, got one string",
		"profile.json: domains[0]: want a string, got a number",
		"profile.json: worldview: want a string, got a list",
		"profile.json: open_questions: want a list, got an object",
		"opinions_list[0]: skipped: not a JSON object",
		"opinions_list[1]: no opinion text; skipped",
		"opinions_list[2]: domain: want a string, got a number",
		"profile.json: created_at: want a time, got a boolean",
		"suffering.json: active_stressors: want a list, got an object",
		"resolved_history[0]: skipped: not a JSON object",
		"last_escalated: 5e+12 is not a plausible unix time",
	} {
		assert.True(t, hasWarning(a.Warnings, w), "want %q in\n%s", w, strings.Join(a.Warnings, "\n"))
	}
}

func TestLegacyOpinionsObject(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": `{"name": "Ash", "created_at": 1, "opinions": {"ethics": "be kind", "art": {"opinion": "less is more", "formed": "2026-01-02"}, "empty": ""}}`,
	})
	st, a := readOne(t, dir, hollow.Options{})
	assert.Equal(t, []identity.Opinion{
		{Text: "less is more", Domain: "art", Formed: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{Text: "be kind", Domain: "ethics"},
	}, st.Identity.Opinions)
	assert.True(t, hasWarning(a.Warnings, `opinions["empty"]: no opinion text; skipped`), "%q", a.Warnings)
	assert.True(t, hasWarning(a.Warnings, `no opinions_list; imported 2 opinions from the "opinions" object`))

	// opinions_list wins when both are there.
	dir = writeTree(t, map[string]string{
		"identity/a/profile.json": `{"name": "Ash", "created_at": 1, "opinions": {"ethics": "be kind"}, "opinions_list": [{"opinion": "new", "domain": "d"}]}`,
	})
	st, a = readOne(t, dir, hollow.Options{})
	assert.Equal(t, []identity.Opinion{{Text: "new", Domain: "d"}}, st.Identity.Opinions)
	assert.True(t, hasWarning(a.Warnings, "opinions: 1 entries ignored in favour of opinions_list"))
}

func TestResolvedHistory(t *testing.T) {
	var hist []string
	for i := range 120 {
		hist = append(hist, fmt.Sprintf(`{"type": "R %d", "severity": 0.2, "onset": "2026-04-13 10:00", "resolved_at": "2026-04-13 11:00", "resolution_note": "n%d", "peak_severity": 0.6}`, i, i))
	}
	marked := `{"type": "Was Resolved", "severity": 0.3, "onset": "2026-04-13 10:00", "resolved": true, "resolution_note": "done already"}`
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json":   profileA,
		"identity/a/suffering.json": `{"active_stressors": [` + marked + `], "resolved_history": [` + strings.Join(hist, ",") + `], "last_escalated": "2026-04-13 23:01"}`,
	})
	st, a := readOne(t, dir, hollow.Options{})
	s := st.Suffering
	assert.Empty(t, s.Active, "a stressor marked resolved is not active")
	require.Len(t, s.Resolved, suffering.MaxResolved)
	assert.Equal(t, "r_21", s.Resolved[0].Type, "the newest 100 are kept")
	last := s.Resolved[99]
	assert.Equal(t, "was_resolved", last.Type)
	assert.Equal(t, "done already", last.Resolution)
	assert.Equal(t, importTime, last.ResolvedAt)
	assert.Equal(t, 0.6, s.Resolved[0].Peak)
	assert.Equal(t, "n21", s.Resolved[0].Resolution)
	assert.Equal(t, []string{"resolved stressors: 121 → 100"}, a.Trimmed)
	assert.True(t, hasWarning(a.Warnings, "active_stressors[0]: marked resolved; moved to the resolved history"))
	assert.True(t, hasWarning(a.Warnings, "active_stressors[0]: no resolved_at; set to the import time"))

	// The anticipatory signal works on the imported history.
	sig, ok := s.Anticipate("R 50")
	assert.True(t, ok)
	assert.Contains(t, sig, "r_50")
}

func TestBadDocumentsAreErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		file  string // the path the error names
		is    error
	}{
		{"truncated profile", map[string]string{"identity/a/profile.json": `{"name": "Ash", "trai`}, "identity/a/profile.json", hollow.ErrMalformed},
		{"empty profile", map[string]string{"identity/a/profile.json": ``}, "identity/a/profile.json", hollow.ErrMalformed},
		{"profile is a list", map[string]string{"identity/a/profile.json": `[]`}, "identity/a/profile.json", hollow.ErrMalformed},
		{"profile is null", map[string]string{"identity/a/profile.json": `null`}, "identity/a/profile.json", hollow.ErrMalformed},
		{"trailing data", map[string]string{"identity/a/profile.json": `{} {}`}, "identity/a/profile.json", hollow.ErrMalformed},
		{"truncated suffering", map[string]string{"identity/a/profile.json": profileA, "identity/a/suffering.json": `{"active_stressors": [`}, "identity/a/suffering.json", hollow.ErrMalformed},
		{"corrupt names", map[string]string{"identity/names.json": `{"Ash": `, "identity/a/profile.json": profileA}, "identity/names.json", hollow.ErrMalformed},
		{"directory instead of a file", map[string]string{"identity/a/profile.json": profileA, "identity/a/suffering.json/x": ""}, "identity/a/suffering.json", hollow.ErrMalformed},
		{"directory instead of the registry", map[string]string{"identity/a/profile.json": profileA, "goals/a/registry.jsonl/x": ""}, "goals/a/registry.jsonl", hollow.ErrMalformed},
		{"identity is a file", map[string]string{"identity": "x", "goals/a/registry.jsonl": ""}, "identity", hollow.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
			require.Error(t, err)
			assert.Nil(t, states)
			assert.Nil(t, sum)
			require.ErrorIs(t, err, tt.is)
			var fe *hollow.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(tt.file)), fe.Path)
			assert.Contains(t, err.Error(), fe.Path)
		})
	}
}

func TestSymlinkLeavingTheDirectory(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.json": profileA})
	dir := writeTree(t, map[string]string{"identity/a/suffering.json": sufferingJSON()})
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "identity", "a", "profile.json")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	_, _, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
	require.Error(t, err)
	var fe *hollow.FileError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, fe.Path, "profile.json")
	assert.False(t, errors.Is(err, fs.ErrNotExist))

	// A symlinked agent directory is skipped with a warning.
	dir = writeTree(t, map[string]string{"identity/a/profile.json": profileA})
	require.NoError(t, os.Symlink(filepath.Join(dir, "identity", "a"), filepath.Join(dir, "identity", "b")))
	states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	assert.Len(t, states, 1)
	assert.True(t, hasWarning(sum.Warnings, "identity/b: skipped: a symlink"), "%q", sum.Warnings)
}

func TestDirectoryErrors(t *testing.T) {
	_, _, err := hollow.Read(filepath.Join(t.TempDir(), "nope"), hollow.Options{})
	require.ErrorIs(t, err, fs.ErrNotExist)

	dir := writeTree(t, map[string]string{"README.md": "hi"})
	_, _, err = hollow.Read(dir, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrNotMemoryDir)

	// An empty memory directory imports nothing, and says so.
	dir = writeTree(t, map[string]string{"identity/.keep": ""})
	states, sum, err := hollow.Read(dir, hollow.Options{})
	require.NoError(t, err)
	assert.Empty(t, states)
	assert.True(t, hasWarning(sum.Warnings, "no agents found"))
}

func TestInvalidAgentIDsSkipped(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/names.json":             `{"Ash": "a", "Evil": "../etc"}`,
		"identity/a/profile.json":         profileA,
		"identity/Bad Agent/profile.json": profileA,
		"identity/empty/.keep":            "",
		"goals/__pycache__/x.pyc":         "",
	})
	states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	require.Len(t, states, 1)
	assert.Equal(t, "a", states[0].Identity.AgentID)
	for _, w := range []string{
		`agent "../etc" skipped: not a valid agent id`,
		`agent "Bad Agent" skipped: not a valid agent id`,
		`agent "__pycache__" skipped`,
		`identity/empty, goals/empty: skipped: no profile.json, suffering.json or registry.jsonl`,
	} {
		assert.True(t, hasWarning(sum.Warnings, w), "want %q in\n%s", w, strings.Join(sum.Warnings, "\n"))
	}
	assert.Contains(t, sum.String(), "warning: agent \"Bad Agent\" skipped")
}

func TestSeveralAgents(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/names.json":             "\xef\xbb\xbf" + `{"Cedar": "scout", "Cipher": "analyst", "Vault": "builder"}`, // with a byte order mark
		"identity/scout/profile.json":     `{"agent_id": "scout", "name": "Cedar", "created_at": 1}`,
		"identity/analyst/suffering.json": sufferingJSON(stressorJSON("Logical Dissonance", 0.5, "2026-04-13 10:00")),
		"goals/builder/registry.jsonl":    `{"goal_id": "g", "objective": "build", "status": "active", "created_at": 1776000000}`,
	})
	states, sum, err := hollow.Read(dir, hollow.Options{Now: fixedNow})
	require.NoError(t, err)
	require.Len(t, states, 3)
	var got []string
	for _, s := range states {
		got = append(got, s.Identity.AgentID+"="+s.Identity.Name)
		require.NoError(t, s.Validate())
	}
	assert.Equal(t, []string{"analyst=Cipher", "builder=Vault", "scout=Cedar"}, got)
	lines := strings.Split(strings.TrimSpace(sum.String()), "\n")
	var agentLines []string
	for _, l := range lines {
		if !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "warning:") {
			agentLines = append(agentLines, l)
		}
	}
	assert.Equal(t, []string{
		"analyst (Cipher): 0 opinions, 0 questions; goals: 0 read (none), 0 kept; stressors: 1 active, 0 demoted, 0 merged, 0 resolved",
		"builder (Vault): 0 opinions, 0 questions; goals: 1 read (1 active), 1 kept; stressors: 0 active, 0 demoted, 0 merged, 0 resolved",
		"scout (Cedar): 0 opinions, 0 questions; goals: 0 read (none), 0 kept; stressors: 0 active, 0 demoted, 0 merged, 0 resolved",
	}, agentLines)
}

func TestWarningsAreCapped(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"identity/a/profile.json": profileA,
		"goals/a/registry.jsonl":  strings.Repeat("garbage\n", 500),
	})
	_, a := readOne(t, dir, hollow.Options{})
	require.Len(t, a.Warnings, 201)
	assert.Equal(t, "… and 301 more warnings", a.Warnings[200]) // 500 lines and the missing suffering.json
}
