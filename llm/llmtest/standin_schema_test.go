package llmtest_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// A workflow step's structured-output request (a schema with properties
// but no "content") gets an object with every property, each a value of
// its type, nested objects and arrays included: what a model held to the
// schema by the engine's grammar would give.
func TestScriptedReplyFollowsTheSchema(t *testing.T) {
	for _, c := range []struct {
		name   string
		schema string
		want   map[string]any
	}{
		{"scalars", `{"type":"object","properties":{"title":{"type":"string"},"count":{"type":"integer"},"ratio":{"type":"number"},"ok":{"type":"boolean"},"none":{"type":"null"}}}`,
			map[string]any{"title": "the stand-in has nothing more to say", "count": 1.0, "ratio": 0.5, "ok": false, "none": nil}},
		{"array of strings", `{"type":"object","properties":{"steps":{"type":"array","items":{"type":"string"}}}}`,
			map[string]any{"steps": []any{"the stand-in has nothing more to say"}}},
		{"array without items", `{"type":"object","properties":{"any":{"type":"array"}}}`,
			map[string]any{"any": []any{}}},
		{"nested", `{"type":"object","properties":{"plan":{"type":"object","properties":{"depth":{"type":"integer"}}}}}`,
			map[string]any{"plan": map[string]any{"depth": 1.0}}},
		{"type list takes the first", `{"type":"object","properties":{"maybe":{"type":["integer","null"]}}}`,
			map[string]any{"maybe": 1.0}},
		{"known step names", `{"type":"object","properties":{"should_pivot":{"type":"boolean"},"next_steps":{"type":"array","items":{"type":"string"}}}}`,
			map[string]any{"should_pivot": false, "next_steps": []any{"list the workspace", "write the index"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Do the step."}}, Format: json.RawMessage(c.schema)}
			a := llmtest.ScriptedReply(&call)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(a.Text), &got), "%s", a.Text)
			assert.Equal(t, c.want, got)
			assert.Equal(t, a, llmtest.ScriptedReply(&call), "the same call, the same answer")
		})
	}
}

// The existence reply the stand-in gives by default parses into the
// fields the loop reads, and a plain request gets plain text.
func TestScriptedReplyExistenceShape(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"},"reasoning":{"type":"string"}},"required":["action","content"]}`)
	a := llmtest.ScriptedReply(&llmtest.Call{Messages: []llm.Message{{Role: llm.RoleUser, Content: "You are Cedar. What next?"}}, Format: schema})
	var reply struct {
		Action, Content, Reasoning string
	}
	require.NoError(t, json.Unmarshal([]byte(a.Text), &reply), "%s", a.Text)
	assert.Equal(t, "goal", reply.Action)
	assert.NotEmpty(t, reply.Content)
	assert.Contains(t, llmtest.ScriptGoals, reply.Content)
	assert.Empty(t, a.ToolCalls)
	assert.Zero(t, a.Status)
}
