package simulate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/suffering"
)

func TestReadRecords(t *testing.T) {
	tests := []struct {
		name, in, err string
		n             int
	}{
		{"one", `{"reply":"{}"}`, "", 1},
		{"blank lines", "\n{\"reply\":\"a\",\"status\":\"FAILED\"}\n\n{\"agent\":\"scout\",\"reply\":\"b\",\"seconds\":3}\n", "", 2},
		{"empty file", "", "no records", 0},
		{"not json", "{reply", "line 1", 0},
		{"unknown field", `{"reply":"a","replay":"b"}`, `unknown field "replay"`, 0},
		{"empty reply", `{"agent":"scout"}`, "line 1: empty reply", 0},
		{"bad status", "{\"reply\":\"a\"}\n{\"reply\":\"a\",\"status\":\"done\"}", `line 2: status "done"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := simulate.ReadRecords(strings.NewReader(tt.in))
			if tt.err != "" {
				require.ErrorIs(t, err, simulate.ErrReplay)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, recs, tt.n)
		})
	}
}

// TestReplay: recorded goals are chosen in order, and recorded outcomes end
// them; four recorded failures bring repeated_failure.
func TestReplay(t *testing.T) {
	recs := []simulate.Record{
		{Agent: "scout", Reply: cycleReply("first recorded goal"), Status: "FAILED", Summary: "it broke", Seconds: 30},
		{Agent: "scout", Reply: cycleReply("second recorded goal"), Status: "FAILED", Summary: "again", Seconds: 30},
		{Agent: "scout", Reply: "not json at all", Status: "FAILED", Seconds: 30},
		{Agent: "scout", Reply: cycleReply("fourth recorded goal"), Status: "ABANDONED", Seconds: 30},
		{Reply: cycleReply("anyone's goal"), Status: "DONE", Summary: "fine", Seconds: 30},
	}
	path := filepath.Join(t.TempDir(), "replay.jsonl")
	var buf bytes.Buffer
	require.NoError(t, simulate.WriteRecords(&buf, recs))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))

	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			_, b := run(t, simulate.Config{
				Agents:   simulate.Agents(2),
				Duration: 10 * time.Minute,
				Driver:   d,
				Model:    simulate.Replay{File: path, Latency: 2 * time.Second},
			})
			var goals []string
			var ended []string
			rf := false
			for _, r := range rowsOf(t, b) {
				if r.Agent == "scout" && r.Chosen != nil && len(goals) < 5 {
					goals = append(goals, r.Chosen.Goal)
				}
				if r.Agent == "scout" && r.Ended != nil && len(ended) < 4 {
					ended = append(ended, r.Ended.Status+" "+r.Ended.Summary)
				}
				for _, c := range r.Added {
					rf = rf || (r.Agent == "scout" && c.Type == suffering.RepeatedFailure)
				}
			}
			// The third reply does not parse: the agent's one repair
			// follow-up gets the fourth, which becomes the goal.
			assert.Equal(t, []string{"first recorded goal", "second recorded goal", "fourth recorded goal", "first recorded goal", "second recorded goal"}, goals)
			assert.Equal(t, []string{"FAILED it broke", "FAILED again", "ABANDONED ", "FAILED it broke"}, ended)
			assert.True(t, rf, "4 failures in a row add repeated_failure")
		})
	}
}

func TestRecordsFromHollow(t *testing.T) {
	dir := filepath.Join("..", "..", "hollow", "testdata", "hollow-memory")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("hollow/testdata/hollow-memory is missing")
	}
	recs, err := simulate.RecordsFromHollow(dir, simulate.DefaultStart)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		assert.NotEmpty(t, r.Agent)
		assert.Contains(t, []string{"DONE", "FAILED", "ABANDONED"}, r.Status)
		assert.Contains(t, r.Reply, `"action":"goal"`)
		assert.GreaterOrEqual(t, r.Seconds, 0.0)
	}
	// They replay.
	_, b := run(t, simulate.Config{Duration: 5 * time.Minute, Model: simulate.Replay{Records: recs}})
	n := 0
	for _, r := range rowsOf(t, b) {
		if r.Chosen != nil && !r.Chosen.Fallback {
			n++
		}
	}
	assert.Greater(t, n, 3)

	_, err = simulate.RecordsFromHollow(t.TempDir(), simulate.DefaultStart)
	assert.Error(t, err)
}

// TestToolLoop: the real tool loop pursues the goals over a workspace; the
// stochastic model plays out each drawn outcome with tool calls.
func TestToolLoop(t *testing.T) {
	ws := t.TempDir()
	res, b := run(t, simulate.Config{
		Agents:    simulate.Agents(1),
		Duration:  30 * time.Minute,
		Seed:      3,
		Driver:    simulate.Heartbeats,
		Model:     simulate.Stochastic{FailureRate: 0.5, AbandonShare: 0.5},
		Executor:  simulate.ToolLoop{},
		Workspace: ws,
	})
	a := res.Agents[0]
	assert.Greater(t, a.Done, 0)
	assert.Greater(t, a.Failed, 0)
	assert.Greater(t, a.Abandoned, 0)
	notes, err := filepath.Glob(filepath.Join(ws, "scout", "note-*.md"))
	require.NoError(t, err)
	assert.NotEmpty(t, notes, "DONE goals wrote notes with write_file")
	calls := 0
	for _, r := range rowsOf(t, b) {
		if r.Chosen != nil {
			calls = max(calls, r.Calls)
		}
	}
	assert.GreaterOrEqual(t, calls, 5, "an abandoned goal takes a cycle call and 4 tool-loop turns")
	assert.Greater(t, a.ModelCalls, a.Cycles)
}
