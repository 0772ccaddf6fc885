package filestore

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

var update = flag.Bool("update", false, "rewrite golden files")

// t0 is the fixed instant of the test fixtures.
var t0 = time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// sampleState returns the state of the golden documents testdata/scout.v0.json
// (a fixed historical format) and scout.v1.json, with multi-byte text; the
// state using every field is storetest.FullState.
func sampleState(id string) *identity.AgentState {
	return &identity.AgentState{
		Identity: identity.Identity{
			AgentID:   id,
			Name:      "Cedar",
			Traits:    []string{"curious", "methodical"},
			Domains:   []string{"exploration", "mapping"},
			Worldview: "Maps before moves — the workspace rewards patience. 日本語 ✓",
			Opinions: []identity.Opinion{
				{Text: "Small tools beat big plans.", Domain: "engineering", Formed: t0.Add(-48 * time.Hour)},
				{Text: "Peers notice <useful> things & say so.", Domain: "social", Formed: t0.Add(-24 * time.Hour)},
			},
			Questions: []string{"What is outside the workspace?", "Why do goals stall?"},
			Narrative: "[2026-11-20] Completed: map the workspace. [2026-11-21] Failed: index the logs.",
			Discoveries: []identity.Discovery{
				{Text: "The logs rotate hourly.", Source: "workspace/logs", At: t0.Add(-time.Hour)},
			},
			Goals: []identity.Goal{
				{ID: "g1", Objective: "map the workspace", Status: identity.Done,
					Started: t0.Add(-50 * time.Hour), Ended: t0.Add(-49 * time.Hour), Outcome: "a map of 12 directories"},
				{ID: "g2", Objective: "index the logs", Status: identity.Failed, Started: t0.Add(-26 * time.Hour),
					Ended: t0.Add(-25 * time.Hour), Outcome: "permission denied", BrokenTools: []string{"shell"}},
				{ID: "g3", Objective: "explore the workspace and build something useful", Status: identity.Active,
					Started: t0.Add(-time.Minute), Fallback: true, Cause: "LLM unavailable", TaskID: "t7"},
			},
			CreatedAt: t0.Add(-72 * time.Hour),
		},
		Suffering: suffering.State{
			Active: []suffering.Stressor{
				{Type: suffering.RepeatedFailure, Description: "goals keep failing", Severity: 0.3, Peak: 0.35,
					RatePerDay: 0.04, Condition: "bring the failure rate below 30%", Onset: t0.Add(-30 * time.Hour)},
				{Type: suffering.Futility, Description: "nothing is used", Severity: 0.25, Peak: 0.25,
					RatePerDay: 0.025, Condition: "someone uses an artifact", Onset: t0.Add(-20 * time.Hour)},
			},
			Resolved: []suffering.Stressor{
				{Type: suffering.Invisibility, Description: "no peer replied", Severity: 0.6, Peak: 0.62,
					RatePerDay: 0.03, Condition: "a peer replies", Onset: t0.Add(-70 * time.Hour),
					ResolvedAt: t0.Add(-60 * time.Hour), Resolution: "Vault replied"},
			},
			LastEscalated: t0.Add(-6 * time.Second),
			CrisisCycles:  1,
		},
		Inbox:     []identity.AgentMessage{{From: "Cipher", Text: "found a pattern in the logs", At: t0.Add(-2 * time.Minute)}},
		Host:      []identity.AgentMessage{{From: "host", Text: "hello, Cedar", At: t0.Add(-3 * time.Minute)}},
		UpdatedAt: t0,
	}
}

// stateJSON returns the indented JSON of s, for comparisons with readable
// diffs. UpdatedAt is left out unless withUpdated.
func stateJSON(t testing.TB, s *identity.AgentState, withUpdated bool) string {
	t.Helper()
	require.NotNil(t, s)
	c := s.Clone()
	if !withUpdated {
		c.UpdatedAt = time.Time{}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	require.NoError(t, err)
	return string(b)
}

// sampleDocument returns the version-1 document of sampleState(id).
func sampleDocument(t testing.TB, id string) []byte {
	t.Helper()
	b, err := encodeDocument(sampleState(id), 0, 0)
	require.NoError(t, err)
	return b
}

// mutateDocument decodes doc, lets edit change the generic JSON, and
// re-encodes it. A string value "@@RAW:x@@" is replaced by the raw text x,
// for literals JSON cannot hold (NaN).
func mutateDocument(t testing.TB, doc []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	edit(m)
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	s := string(b)
	for {
		i := strings.Index(s, `"@@RAW:`)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], `@@"`)
		s = s[:i] + s[i+len(`"@@RAW:`):i+j] + s[i+j+len(`@@"`):]
	}
	return []byte(s)
}

// jsonAt walks a generic JSON value along keys (strings) and indexes (ints).
func jsonAt(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v
}

// jsonSet sets the value at path (the last element a key or an index).
func jsonSet(m map[string]any, value any, path ...any) {
	parent := jsonAt(m, path[:len(path)-1]...)
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = value
	case int:
		parent.([]any)[k] = value
	}
}

// writeFile writes data to dir/name with permission 0600.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// snapshot describes what is at path: a file's bytes, a directory's
// entries, a symlink's target (and the target's bytes, if readable), or
// "missing". Used to prove that failed operations lose nothing.
func snapshot(t testing.TB, path string) string {
	t.Helper()
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return "missing"
	}
	require.NoError(t, err)
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(path)
		require.NoError(t, err)
		b, _ := os.ReadFile(path)
		return "symlink " + target + "\n" + string(b)
	case st.IsDir():
		ents, err := os.ReadDir(path)
		require.NoError(t, err)
		names := []string{"dir"}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return strings.Join(names, "\n")
	default:
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return "file\n" + string(b)
	}
}
