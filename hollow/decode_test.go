package hollow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
)

var testNow = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

func newTestDecoder() *decoder { return &decoder{loc: time.UTC, now: testNow, notes: &notes{}} }

func TestPythonJSON(t *testing.T) {
	tests := map[string]string{
		`{"a": 1}`:                          `{"a": 1}`,
		`{"a": NaN}`:                        `{"a": "NaN"}`,
		`[Infinity, -Infinity, NaN]`:        `["Infinity", "-Infinity", "NaN"]`,
		`{"NaN": "NaN Infinity", "b": NaN}`: `{"NaN": "NaN Infinity", "b": "NaN"}`,
		`{"q": "say \"NaN\"", "x": NaN}`:    `{"q": "say \"NaN\"", "x": "NaN"}`,
		`{"q": "\\", "x": -Infinity}`:       `{"q": "\\", "x": "-Infinity"}`,
		`NaN`:                               `"NaN"`,
		`{"a": "unterminated NaN`:           `{"a": "unterminated NaN`,
	}
	for in, want := range tests {
		assert.Equal(t, want, string(pythonJSON([]byte(in))), "pythonJSON(%s)", in)
	}
	// Input without the tokens is not copied.
	in := []byte(`{"a": 1}`)
	assert.Same(t, &in[0], &pythonJSON(in)[0])
}

func TestObjectNum(t *testing.T) {
	d := newTestDecoder()
	o, err := d.parseObject([]byte(`{"a": 0.5, "b": NaN, "c": "Infinity", "d": "0.25", "e": true, "f": null, "g": 1e999, "h": "x", "i": -Infinity}`), "doc")
	require.NoError(t, err)
	check := func(key string, want float64, wantOK bool) {
		t.Helper()
		v, ok := o.num(key)
		assert.Equal(t, wantOK, ok, key)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(v), key)
		} else {
			assert.Equal(t, want, v, key)
		}
	}
	check("a", 0.5, true)
	check("b", math.NaN(), true)
	check("c", math.Inf(1), true)
	check("d", 0.25, true)
	check("e", 0, false)
	check("f", 0, false)
	check("g", math.Inf(1), true)
	check("h", 0, false)
	check("i", math.Inf(-1), true)
	check("missing", 0, false)
	assert.Equal(t, []string{
		"doc: e: want a number, got a boolean; ignored",
		"doc: h: want a number, got a string; ignored",
	}, d.notes.result())
}

func TestParseStamp(t *testing.T) {
	berlin := time.FixedZone("CEST", 2*3600)
	tests := []struct {
		in   string
		loc  *time.Location
		want time.Time
		ok   bool
	}{
		{"2026-04-13 23:01", time.UTC, time.Date(2026, 4, 13, 23, 1, 0, 0, time.UTC), true},
		{"2026-04-13 23:01", berlin, time.Date(2026, 4, 13, 21, 1, 0, 0, time.UTC), true},
		{" 2026-04-13 23:01:07 ", time.UTC, time.Date(2026, 4, 13, 23, 1, 7, 0, time.UTC), true},
		{"2026-04-13 23:01:07.123456", time.UTC, time.Date(2026, 4, 13, 23, 1, 7, 123456000, time.UTC), true},
		{"2026-04-13T23:01", time.UTC, time.Date(2026, 4, 13, 23, 1, 0, 0, time.UTC), true},
		{"2026-04-13T23:01:07.5", berlin, time.Date(2026, 4, 13, 21, 1, 7, 500000000, time.UTC), true},
		{"2026-04-13T23:01:07-04:00", berlin, time.Date(2026, 4, 14, 3, 1, 7, 0, time.UTC), true},
		{"2026-04-13", berlin, time.Date(2026, 4, 12, 22, 0, 0, 0, time.UTC), true},
		{"2026-13-40 25:61", time.UTC, time.Time{}, false},
		{"13/04/2026", time.UTC, time.Time{}, false},
		{"", time.UTC, time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStamp(tt.in, tt.loc)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestUnixTime(t *testing.T) {
	got, ok := unixTime(1776046174.1223624)
	assert.True(t, ok)
	assert.Equal(t, time.Date(2026, 4, 13, 2, 9, 34, 122362000, time.UTC), got, "rounded to the microsecond")
	got, ok = unixTime(1776046174.9999999)
	assert.True(t, ok)
	assert.Equal(t, time.Date(2026, 4, 13, 2, 9, 35, 0, time.UTC), got)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 1e12} {
		_, ok := unixTime(bad)
		assert.False(t, ok, "%v", bad)
	}
}

func TestOneLine(t *testing.T) {
	tests := map[string]string{
		"a\nb":                 "a b",
		"a  \n\n   b":          "a b",
		"a\r\nb":               "a b",
		"a  b":                 "a  b",
		"\n  lead and trail\n": "lead and trail",
		"tab\t\nafter":         "tab after",
		"no newline\tat all":   "no newline\tat all",
	}
	for in, want := range tests {
		assert.Equal(t, want, oneLine(in), "oneLine(%q)", in)
	}
}

func TestReadLine(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\n\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	type res struct {
		line    string
		tooLong bool
		eof     bool
	}
	var got []res
	for {
		line, tooLong, err := readLine(br, 50)
		got = append(got, res{string(line), tooLong, errors.Is(err, io.EOF)})
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	assert.Equal(t, []res{
		{"short\n", false, false},
		{"", true, false},
		{"\n", false, false},
		{"last", false, true},
	}, got)

	// Exactly the limit is accepted, with or without CRLF.
	br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("y", 50)+"\r\n"), 16)
	line, tooLong, _ := readLine(br, 50)
	assert.False(t, tooLong)
	assert.Equal(t, strings.Repeat("y", 50)+"\r\n", string(line))
}

func TestUpperFirst(t *testing.T) {
	assert.Equal(t, "Abandoned after", upperFirst("abandoned after"))
	assert.Equal(t, "Écrit", upperFirst("écrit"))
	assert.Equal(t, "", upperFirst(""))
	assert.Equal(t, "\xff", upperFirst("\xff"))
}

// sampleFile returns a file of the sample, for fuzz seeds.
func sampleFile(t testing.TB, name string) []byte {
	data, err := os.ReadFile(filepath.Join("testdata", "hollow-memory", filepath.FromSlash(name)))
	require.NoError(t, err)
	return data
}

func FuzzProfile(f *testing.F) {
	f.Add(sampleFile(f, "identity/scout/profile.json"))
	for _, s := range []string{
		`{"agent_id": "scout", "name": "Titan", "traits": "analytical", "created_at": NaN}`,
		`{"name": null, "opinions_list": [null, 1, {"opinion": "x", "formed": 20260413}], "open_questions": [1, [2]]}`,
		`{"opinions": {"ethics": {"opinion": {"nested": true}}, "art": "less"}, "worldview": "` + strings.Repeat("é", 700) + `"}`,
		`{"created_at": 1e999, "narrative": "\u0000\ud800"}`,
		`{"name": "Titan", "traits": ["a"` /* truncated */, `[]`, ``, `null`, `{} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newTestDecoder()
		id, err := d.profile(data, "p")
		if err != nil {
			return
		}
		for _, op := range id.Opinions {
			require.NotEmpty(t, strings.TrimSpace(op.Text), "blank opinion imported: %+v", op)
		}
		require.NotContains(t, id.Questions, "", "blank list entry imported")
		require.NotContains(t, id.Traits, "", "blank list entry imported")
		id.AgentID = "a"
		st := identity.AgentState{Identity: id}
		st.Identity.Enforce(identity.Limits{})
		require.NoError(t, st.Validate())
		_, err = json.Marshal(&st)
		require.NoError(t, err)
	})
}

func FuzzSuffering(f *testing.F) {
	f.Add(sampleFile(f, "identity/scout/suffering.json"))
	for _, s := range []string{
		`{"active_stressors": [{"type": "Identity Contamination", "severity": NaN, "peak_severity": Infinity, "escalation_per_day": -Infinity, "onset": "2026-04-13 21:52"}], "last_escalated": "2026-04-13 23:01"}`,
		`{"active_stressors": [{"type": "A"}, {"type": "a "}, {"type": " A"}, {"type": "b", "severity": 2}, {"type": "c"}, {"type": "d"}, {"type": "e"}, {"type": "f"}]}`,
		`{"active_stressors": [{"type": "", "severity": "0.4", "resolved": true}], "resolved_history": [{"type": "x", "resolved_at": 1e20}]}`,
		`{"active_stressors": null, "resolved_history": {"0": {}}, "last_escalated": ["2026"]}`,
		`{"active_stressors": [{"type": "x", "severity": 1e-400, "onset": "2026-02-30 10:00"}]}`,
		`{"active_stressors": [`, `{"a": NaN`, `NaN`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newTestDecoder()
		s, counts, err := d.suffering(data, "s")
		if err != nil {
			return
		}
		require.NoError(t, s.Validate(), "%s", data)
		require.LessOrEqual(t, len(s.Resolved), 100, "resolved, counts %+v", counts)
		require.GreaterOrEqual(t, counts.demoted, 0, "counts %+v", counts)
		require.GreaterOrEqual(t, counts.merged, 0, "counts %+v", counts)
		require.False(t, s.LastEscalated.IsZero(), "no last escalation instant")
		for _, st := range s.Active {
			// Validate has refused NaN, so this is st.Peak < st.Severity.
			require.GreaterOrEqual(t, st.Peak, st.Severity, "bad stressor %+v", st)
			require.False(t, st.Onset.IsZero(), "bad stressor %+v", st)
		}
		_, err = json.Marshal(&s)
		require.NoError(t, err)
	})
}

func FuzzRegistry(f *testing.F) {
	sample := sampleFile(f, "goals/scout/registry.jsonl")
	lines := bytes.SplitAfter(sample, []byte("\n"))
	f.Add(bytes.Join(lines[110:115], nil)) // objectives with newlines, failure reasons
	f.Add(bytes.Join(lines[160:], nil))    // the active goal
	for _, s := range []string{
		`{"goal_id": "g1", "objective": "a\n\nb", "status": "active", "created_at": 2}` + "\n" + `{"goal_id": "g2", "objective": "c", "status": "active", "created_at": 1}`,
		`{"objective": "x", "status": "completed", "metrics": {"steps_completed": NaN, "progress": Infinity}}`,
		`{"objective": "x", "status": "failed", "metrics": {"failure_reason": "Goal 'x' failed."}}`,
		"not json\n[1]\n{\"objective\": \n\r\n{}\n",
		`{"objective": " \n ", "status": "completed"}`,
		`{"objective": "y", "status": "Paused", "created_at": "2026-04-13 10:00", "completed_at": -1}`,
		"\xff\xfe{\"objective\": \"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newTestDecoder()
		goals, err := d.registry(bytes.NewReader(data), "r", "a")
		require.NoError(t, err)
		for i, g := range goals {
			require.NotEmpty(t, g.Objective, "goal %d objective", i)
			require.False(t, strings.ContainsAny(g.Objective, "\r\n"), "goal %d objective %q", i, g.Objective)
			require.NotEmpty(t, g.ID, "goal %d has no id", i)
			if i > 0 {
				require.False(t, g.Started.Before(goals[i-1].Started), "goals not sorted")
			}
			if g.Status == identity.Active {
				require.Equal(t, len(goals)-1, i, "goal %d of %d is active", i, len(goals))
			}
			require.True(t, g.Status == identity.Active || g.Status.Ended(), "goal %d status %q", i, g.Status)
		}
		id := identity.Identity{AgentID: "a", Goals: goals}
		id.Enforce(identity.Limits{})
		_, err = json.Marshal(&id)
		require.NoError(t, err)
	})
}
