package llmtest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/repeat"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

func TestScriptedReply(t *testing.T) {
	ws := []llm.ToolDef{{Name: "list_files"}, {Name: "write_file"}, {Name: "read_file"}}
	goal := []llm.Message{{Role: llm.RoleSystem, Content: "You are Cedar."}, {Role: llm.RoleUser, Content: "Pursue your goal now: Map the workspace!\nmore"}}
	listed := append(append([]llm.Message(nil), goal...),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "list_files"}}},
		llm.Message{Role: llm.RoleTool, Content: "design/\nREADME.md"})
	written := append(append([]llm.Message(nil), listed...),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "write_file"}}},
		llm.Message{Role: llm.RoleTool, Content: "ok"})
	tests := []struct {
		name     string
		call     llmtest.Call
		wantTool string
		wantArgs map[string]string
		wantText string
	}{
		{name: "first list", call: llmtest.Call{Messages: goal, Tools: ws}, wantTool: "list_files", wantArgs: map[string]string{"path": "."}},
		{name: "then write", call: llmtest.Call{Messages: listed, Tools: ws}, wantTool: "write_file",
			wantArgs: map[string]string{"path": "notes/map-the-workspace.md", "content": "# Map the workspace!\n\nThe workspace held:\n\ndesign/\nREADME.md\n"}},
		{name: "then answer", call: llmtest.Call{Messages: written, Tools: ws}, wantText: "Done: wrote notes/map-the-workspace.md (Map the workspace!)."},
		{name: "no list_files: write first", call: llmtest.Call{Messages: goal, Tools: ws[1:]}, wantTool: "write_file",
			wantArgs: map[string]string{"path": "notes/map-the-workspace.md", "content": "# Map the workspace!\n"}},
		{name: "no tools", call: llmtest.Call{Messages: goal}, wantText: "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := llmtest.ScriptedReply(&tc.call)
			if tc.wantTool == "" {
				assert.Empty(t, a.ToolCalls)
				assert.Equal(t, tc.wantText, a.Text)
				return
			}
			require.Len(t, a.ToolCalls, 1)
			assert.Equal(t, tc.wantTool, a.ToolCalls[0].Name)
			var args map[string]string
			require.NoError(t, json.Unmarshal(a.ToolCalls[0].Arguments, &args))
			assert.Equal(t, tc.wantArgs, args)
		})
	}

	// An existence cycle gets a goal, the same one each time for one agent.
	cycle := llmtest.Call{Messages: goal[:1], Format: json.RawMessage(`{"type":"object"}`)}
	a, b := llmtest.ScriptedReply(&cycle), llmtest.ScriptedReply(&cycle)
	assert.Equal(t, a, b)
	var reply struct{ Action, Content string }
	require.NoError(t, json.Unmarshal([]byte(a.Text), &reply))
	assert.Equal(t, "goal", reply.Action)
	assert.Contains(t, llmtest.ScriptGoals, reply.Content)
}

// TestScriptGoalsNeverRepeat: an agent on the stand-in goes round
// ScriptGoals, reading its recent goals from the prompt as the existence
// prompt shows them (the last 5, with their status), and never chooses a
// goal that the repeat rule would call a repeat of one of its last 10
// (similarity 0.9); the goals themselves are far apart.
func TestScriptGoalsNeverRepeat(t *testing.T) {
	require.Greater(t, len(llmtest.ScriptGoals), repeat.Window, "more goals than the repeat window")
	for i, a := range llmtest.ScriptGoals {
		assert.Less(t, len([]rune(a)), 75, "shown whole in the recent goals: %q", a)
		for _, b := range llmtest.ScriptGoals[i+1:] {
			assert.Less(t, repeat.Similarity(a, b), 0.5, "%q and %q", a, b)
		}
	}
	for _, agent := range []string{"Cedar", "Cipher", "Vault"} {
		var history []string
		for cycle := range 40 {
			var p strings.Builder
			fmt.Fprintf(&p, "You are %s.\n\nWHO YOU ARE:\n  curious\n\n", agent)
			if len(history) > 0 {
				p.WriteString("WHAT YOU'VE BEEN DOING LATELY:")
				for _, g := range history[max(0, len(history)-5):] {
					status := []string{"[DONE] ", "[FAILED] ", "[ABANDONED] "}[cycle%3]
					fmt.Fprintf(&p, "\n  - %s%s", status, g)
				}
				p.WriteString("\nIf you notice yourself repeating, choose something different.\n\nWHAT YOU KNOW:\n  map the workspace and write an index of what is there\n")
			}
			call := llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: p.String()}}, Format: json.RawMessage(`{"type":"object"}`)}
			var reply struct{ Action, Content string }
			require.NoError(t, json.Unmarshal([]byte(llmtest.ScriptedReply(&call).Text), &reply))
			for j := len(history) - 1; j >= 0 && j >= len(history)-repeat.Window; j-- {
				require.Less(t, repeat.Similarity(reply.Content, history[j]), repeat.Threshold,
					"%s, cycle %d: %q repeats %q", agent, cycle, reply.Content, history[j])
			}
			history = append(history, reply.Content)
		}
	}
}

// TestScriptedReplyForAgents: the stand-in answers a workflow step by its
// schema, a commissioning prompt with the commissioning goal and then the
// complete_commissioning call, and a working memory section with a
// working_memory object.
func TestScriptedReplyForAgents(t *testing.T) {
	step := llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Review your strategy."}},
		Format: json.RawMessage(`{"type":"object","required":["strategic_goal","current_subgoal","score"],"properties":{"strategic_goal":{"type":"string"},"current_subgoal":{"type":"string"},"score":{"type":"number"}}}`)}
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(llmtest.ScriptedReply(&step).Text), &out))
	assert.Equal(t, map[string]any{"strategic_goal": "make the workspace a mapped, documented place", "current_subgoal": "write an index of each folder", "score": 0.5}, out)

	existence := json.RawMessage(`{"type":"object","properties":{"action":{},"content":{},"reasoning":{}}}`)
	cycle := llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: "COMMISSIONING — DO THIS BEFORE ANYTHING ELSE. …\nTake a name."}}, Format: existence}
	var reply struct{ Content string }
	require.NoError(t, json.Unmarshal([]byte(llmtest.ScriptedReply(&cycle).Text), &reply))
	assert.Equal(t, llmtest.CommissioningGoal, reply.Content)

	tools := []llm.ToolDef{{Name: "complete_commissioning"}, {Name: "list_files"}}
	pursue := []llm.Message{{Role: llm.RoleUser, Content: "Pursue your goal now: " + llmtest.CommissioningGoal}}
	a := llmtest.ScriptedReply(&llmtest.Call{Messages: pursue, Tools: tools})
	require.Len(t, a.ToolCalls, 1)
	assert.Equal(t, "complete_commissioning", a.ToolCalls[0].Name)
	assert.Contains(t, string(a.ToolCalls[0].Arguments), `"name":"Ada"`)
	a = llmtest.ScriptedReply(&llmtest.Call{Messages: append(pursue, llm.Message{Role: llm.RoleTool, Content: "commissioned"}), Tools: tools})
	assert.Equal(t, "Done: commissioned as Ada.", a.Text)

	wm := llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: "You are Cedar.\n\nYOUR WORKING MEMORY (notes…):\n(empty)"}}, Format: existence}
	var withWM map[string]any
	require.NoError(t, json.Unmarshal([]byte(llmtest.ScriptedReply(&wm).Text), &withWM))
	assert.Contains(t, llmtest.ScriptGoals, withWM["content"])
	require.IsType(t, map[string]any{}, withWM["working_memory"])
	assert.Equal(t, withWM["content"], withWM["working_memory"].(map[string]any)["current_goal"])
}
