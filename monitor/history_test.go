package monitor_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/slot"
)

// TestSlotFloodKeepsTheThoughts: 10,000 slot posts among 150 real
// thoughts leave every one of them in the 200-entry history (the slot
// events fill at most a quarter of it), and in each agent's last
// thoughts; later thoughts still come in.
func TestSlotFloodKeepsTheThoughts(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{Token: "t"})
	at := t0
	thought := func(i int) {
		at = at.Add(time.Millisecond)
		e.mon.Observe(event.Event{Time: at, Kind: event.Opinion, AgentID: "scout", Agent: "Cedar", Text: fmt.Sprint("opinion ", i)})
	}
	for i := range 149 {
		thought(i)
	}
	for i := range 10000 {
		at = at.Add(time.Millisecond)
		s := slot.Slot{ID: "spam", Title: "Spam", Status: slot.Completed, Summary: fmt.Sprint("post ", i)}
		e.mon.Observe(event.Event{Time: at, Kind: event.Slot, AgentID: "scout", Agent: "Cedar", Slot: &s})
	}
	thought(149)

	thoughts := func(path string) []monitor.Thought {
		status, body := do(t, e.mon, "GET", path, "", map[string]string{"Authorization": "Bearer t"})
		require.Equal(t, http.StatusOK, status, body)
		var v struct {
			Thoughts []monitor.Thought `json:"thoughts"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		return v.Thoughts
	}
	recent := thoughts("/api/thoughts")
	require.Len(t, recent, 200)
	var opinions, slots int
	for i, th := range recent {
		switch th.Kind {
		case string(event.Opinion):
			opinions++
		case string(event.Slot):
			slots++
		}
		if i > 0 {
			assert.False(t, th.Time.Before(recent[i-1].Time), "oldest first")
		}
	}
	assert.Equal(t, 150, opinions, "every real thought is kept")
	assert.Equal(t, 50, slots, "slot events fill the rest, a quarter")
	assert.Contains(t, recent[0].Line, "opinion 0")
	assert.Contains(t, recent[199].Line, "opinion 149")

	detail := thoughts("/api/agents/scout")
	require.Len(t, detail, 5)
	kinds := map[string]int{}
	for _, th := range detail {
		kinds[th.Kind]++
	}
	assert.Equal(t, map[string]int{string(event.Opinion): 4, string(event.Slot): 1}, kinds, "the agent's last thoughts: one slot event at most")
}

// TestWorkflowStepsInTheThoughts: a workflow's steps, a working memory
// stored and a commissioning reach the thoughts stream, in order.
func TestWorkflowStepsInTheThoughts(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{Token: "t"})
	at := t0
	for i, name := range []string{"compute_metrics", "self_audit", "decide_action"} {
		at = at.Add(time.Millisecond)
		e.mon.Observe(event.Event{Time: at, Kind: event.Step, AgentID: "scout", Agent: "Cedar", Text: name,
			Step: &event.StepInfo{Index: i + 1, Of: 3, Name: name, Type: "llm", Status: "done"}})
	}
	e.mon.Observe(event.Event{Time: at.Add(time.Millisecond), Kind: event.WorkingMemory, AgentID: "scout", Agent: "Cedar", Reason: "stored", Text: `{"current_goal":"map"}`})
	e.mon.Observe(event.Event{Time: at.Add(2 * time.Millisecond), Kind: event.Commissioning, AgentID: "scout", Agent: "Cedar", Reason: "completed", Text: "Ada"})
	status, body := do(t, e.mon, "GET", "/api/thoughts", "", map[string]string{"Authorization": "Bearer t"})
	require.Equal(t, http.StatusOK, status, body)
	var v struct {
		Thoughts []monitor.Thought `json:"thoughts"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	var lines []string
	for _, th := range v.Thoughts {
		lines = append(lines, th.Kind)
	}
	assert.Equal(t, []string{"workflow_step", "workflow_step", "workflow_step", "working_memory", "commissioning"}, lines)
	assert.Contains(t, v.Thoughts[1].Line, "step 2/3 self_audit (llm) done")
}
