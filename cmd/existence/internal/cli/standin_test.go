package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// runStandinTrio runs the trio with args (a "standin:" -llm-url among
// them) in the current directory, the stand-in served in process, and
// returns its standard output and error and the stand-in server. Run it
// in a synctest bubble: the heartbeats and the stand-in's latency pass in
// virtual time.
func runStandinTrio(t *testing.T, args ...string) (stdout, stderr string, srv *llmtest.Server) {
	t.Helper()
	o, err := parseRunFlags(args, io.Discard)
	require.NoError(t, err)
	o.standin = func(s *llmtest.Server) { srv = s }
	o.standinHTTP = true
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	require.NoError(t, runTrio(ctx, o, &out, &errb), errb.String())
	return out.String(), errb.String(), srv
}

// TestTrioOnTheScriptedStandin: a first run without a model server, with
// -llm-url standin:, shows the loop working. The banner names the
// stand-in; the agents' goals call the workspace tools (list_files, then
// write_file) and end DONE with evidence: a note in the workspace.
func TestTrioOnTheScriptedStandin(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		t.Chdir(dir)
		out, errb, _ := runStandinTrio(t, "-llm-url", "standin:", "-heartbeat", "6s", "-json", "-cycles", "2")
		assert.Contains(t, errb, "trio: the stand-in model (llm/llmtest, scripted")
		tools := map[string]int{}
		done := map[string]int{}
		for _, e := range events(t, out) {
			switch e.Kind {
			case event.ToolCall:
				require.NotNil(t, e.Tool)
				assert.False(t, e.Tool.Failed, "%s: %s: %s", e.AgentID, e.Tool.Name, e.Tool.Result)
				tools[e.Tool.Name]++
			case event.GoalEnded:
				done[e.AgentID] += map[bool]int{true: 1}[e.GoalStatus == identity.Done]
				assert.Equal(t, identity.Done, e.GoalStatus, "%s: %s", e.AgentID, e.Text)
			}
		}
		assert.Positive(t, tools["list_files"])
		assert.Positive(t, tools["write_file"])
		assert.Len(t, done, 3, "every agent ended a goal DONE")
		notes, err := filepath.Glob(filepath.Join(dir, "trio-workspace", "notes", "*.md"))
		require.NoError(t, err)
		require.NotEmpty(t, notes, "the evidence: notes in the workspace")
		b, err := os.ReadFile(notes[0])
		require.NoError(t, err)
		assert.Contains(t, string(b), "# ")
	})
}

// TestThoughtsLogShowsMemories: without -v the thoughts log shows a memory
// stored (memory is a headline feature), not the embedder's comings and
// goings, nor each cycle and model call.
func TestThoughtsLogShowsMemories(t *testing.T) {
	for _, tc := range []struct {
		kind    event.Kind
		memory  memory.EventKind
		verbose bool
		shown   bool
	}{
		{event.Memory, memory.EventStored, false, true},
		{event.Memory, memory.EventPending, false, false},
		{event.Memory, memory.EventEmbedded, false, false},
		{event.ModelCall, "", false, false},
		{event.Memory, memory.EventPending, true, true},
	} {
		var out bytes.Buffer
		p := newPrinter(&runOptions{verbose: tc.verbose}, &out, io.Discard)
		e := event.Event{Kind: tc.kind, AgentID: "scout", Agent: "Cedar", Text: "x"}
		if tc.memory != "" {
			e.Memory = &memory.Event{Kind: tc.memory, AgentID: "scout", Text: "x"}
		}
		p.observe(e)
		assert.Equal(t, tc.shown, out.Len() > 0, "%s %s, -v %v", tc.kind, tc.memory, tc.verbose)
	}
}

// TestStandinTrioDoesNotSuffer: 45 seconds of the trio on the stand-in
// (in virtual time, the default heartbeat): the stand-in varies its goals
// as a model would, so no goal repeats a recent one, every goal ends DONE
// and no agent gets the repeated-failure stressor ("N of M recent goals
// failed or were abandoned").
func TestStandinTrioDoesNotSuffer(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		t.Chdir(dir)
		o, err := parseRunFlags([]string{"-llm-url", "standin:", "-json"}, io.Discard)
		require.NoError(t, err)
		o.standinHTTP = true
		var out, errb bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		require.NoError(t, runTrio(ctx, o, &out, &errb), errb.String())
		goals := map[string][]string{}
		ended := 0
		for _, e := range events(t, out.String()) {
			switch e.Kind {
			case event.GoalRepeat:
				assert.Fail(t, "a goal repeats a recent one", "%s: %q repeats %q", e.AgentID, e.Goal, e.Text)
			case event.GoalChosen:
				goals[e.AgentID] = append(goals[e.AgentID], e.Goal)
			case event.GoalEnded:
				ended++
				assert.Equal(t, identity.Done, e.GoalStatus, "%s: %s", e.AgentID, e.Text)
			case event.StressorAdded:
				require.NotNil(t, e.Stressor)
				assert.NotContains(t, e.Stressor.Description, "recent goals failed", "%s", e.AgentID)
			}
		}
		assert.Len(t, goals, 3, "every agent chose goals")
		assert.GreaterOrEqual(t, ended, 9, "goals ended in 45 s: %v", goals)
		t.Logf("goals in 45 s: %v", goals)
	})
}
