package existence_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/suffering"
)

// storedState is a state as a store holds it: an ended goal, an active
// one, two stressors and unread messages.
func storedState() *identity.AgentState {
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	st.Identity.Worldview = "Maps come first."
	st.Identity.Goals = []identity.Goal{
		{ID: "g1", Objective: "map the workspace", Status: identity.Done, Started: t0, Ended: t0.Add(time.Minute), Outcome: "wrote scout/map.md"},
		{ID: "g2", Objective: "review builder/pump.md", Status: identity.Active, Started: t0.Add(2 * time.Minute), TaskID: "task-000001"},
	}
	st.Suffering.Active = []suffering.Stressor{
		{Type: suffering.Invisibility, Description: "nobody reads my notes", Severity: 0.2, Peak: 0.2, Onset: t0},
		{Type: suffering.Futility, Description: "nothing I make is used", Severity: 0.4, Peak: 0.4, Onset: t0.Add(time.Hour)},
	}
	st.Inbox = []identity.AgentMessage{{From: "Cipher", Text: "read my review", At: t0}}
	st.Host = []identity.AgentMessage{{From: "host", Text: "hello", At: t0}, {From: "host", Text: "are you there?", At: t0}}
	return st
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name string
		st   *identity.AgentState
		want existence.Status
	}{
		{"nil", nil, existence.Status{Stressors: []existence.StressorStatus{}}},
		{"fresh", &identity.AgentState{Identity: identity.New("solo", "Wren", t0)},
			existence.Status{ID: "solo", Name: "Wren", Level: "none", Stressors: []existence.StressorStatus{}}},
		{"stored", storedState(), existence.Status{
			ID: "scout", Name: "Cedar",
			Goal: "review builder/pump.md", GoalStarted: t0.Add(2 * time.Minute), GoalTask: "task-000001",
			LastOutcome: "DONE: wrote scout/map.md",
			Load:        0.6000000000000001, Level: "constrained",
			Stressors: []existence.StressorStatus{
				{Type: suffering.Futility, Description: "nothing I make is used", Severity: 0.4, Onset: t0.Add(time.Hour)},
				{Type: suffering.Invisibility, Description: "nobody reads my notes", Severity: 0.2, Onset: t0},
			},
			Worldview: "Maps come first.", Inbox: 1, HostMessages: 2,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := existence.StatusOf(tt.st)
			assert.InDelta(t, tt.want.Load, got.Load, 1e-9)
			got.Load = tt.want.Load
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestStatusOfMatchesAgentStatus: an agent's Status is StatusOf its state
// plus what only the running agent knows.
func TestStatusOfMatchesAgentStatus(t *testing.T) {
	store := memstore.New()
	require.NoError(t, store.Save(context.Background(), storedState()))
	a, err := existence.New(context.Background(), existence.Config{ID: "scout", Name: "Cedar", Model: llmtest.NewFake(), Store: store, Timing: existence.TimingConfig{Clock: newFixture().clock}})
	require.NoError(t, err)
	defer a.Close()
	want := existence.StatusOf(a.State())
	assert.Equal(t, want, a.Status())
}

// TestStatusAndEventJSONRoundTrip: a Status and an Event read back from
// their JSON (the monitor's API and event stream) equal the originals,
// but for an event's Err, which JSON carries as its text in Error. Event
// has no UnmarshalJSON on purpose: types that embed it to add fields (the
// monitor's stream event adds "line") would lose them.
func TestStatusAndEventJSONRoundTrip(t *testing.T) {
	full := existence.StatusOf(storedState())
	full.Cycles, full.LastCycleAt = 7, t0.Add(3*time.Minute)
	full.LastCycle = &event.CycleStats{Assemble: time.Millisecond, Generate: 2 * time.Second, Apply: 3 * time.Millisecond, Total: 2*time.Second + 4*time.Millisecond,
		PromptChars: 8123, PromptTokens: 2100, OutputTokens: 140, Lane: "autonomy", Lateness: 12 * time.Millisecond, Coalesced: 2}
	full.ConsecutiveFallbacks, full.LastFallbackCause, full.LastFallbackError, full.LastFallbackAt = 1, "unavailable", "cannot reach Ollama", t0
	full.Lease = &lease.Lease{AgentID: "scout", Epoch: 4, Owner: "host-a:42", Expires: t0.Add(15 * time.Second)}
	full.Stopped = "stopped"
	statuses := []existence.Status{full, existence.StatusOf(&identity.AgentState{Identity: identity.New("solo", "Wren", t0)})}
	for _, s := range statuses {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		var got existence.Status
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, s, got, "%s", b)
	}

	stressor := storedState().Suffering.Active[0]
	events := []event.Event{
		{Kind: event.GoalChosen, Time: t0, AgentID: "scout", Agent: "Cedar", Text: "map", Goal: "map", Reasoning: "why not", Load: 0.4},
		{Kind: event.StressorAdded, Time: t0, AgentID: "scout", Agent: "Cedar", Text: "nobody reads", By: "self-report", Load: 0.2, Stressor: &stressor},
		{Kind: event.Fallback, Time: t0, AgentID: "scout", Agent: "Cedar", FailureClass: "unavailable", Err: errors.New("cannot reach Ollama"), Error: "cannot reach Ollama"},
		{Kind: event.Cycle, Time: t0, AgentID: "scout", Agent: "Cedar", Cycle: full.LastCycle},
		{Kind: event.ModelCall, Time: t0, AgentID: "scout", Agent: "Cedar", Call: &event.ModelCallInfo{Model: "qwen3.5:9b", Duration: time.Second, PromptTokens: 10, OutputTokens: 2, Outcome: "ok", Purpose: "cycle"}},
		{Kind: event.ToolCall, Time: t0, AgentID: "scout", Agent: "Cedar", Tool: &event.ToolCallInfo{Name: "read_file", Arguments: `{"path":"a"}`, Result: "x", Duration: time.Millisecond}},
		{Kind: event.GoalEnded, Time: t0, AgentID: "scout", Agent: "Cedar", GoalStatus: identity.Done, Text: "wrote it", Goal: "map"},
	}
	for _, e := range events {
		t.Run(string(e.Kind), func(t *testing.T) {
			b, err := json.Marshal(e)
			require.NoError(t, err)
			var got event.Event
			require.NoError(t, json.Unmarshal(b, &got))
			assert.NoError(t, got.Err, "Err is not encoded")
			assert.Equal(t, e.Error, got.Error)
			got.Err = e.Err
			assert.Equal(t, e, got, "%s", b)
			assert.Equal(t, e.String(), got.String())
		})
	}
}
