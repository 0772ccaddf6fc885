package llmtest

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/llm"
)

// The markers of the existence prompt's optional sections (package
// prompt's WorkingMemoryHeader and CommissioningHeader begin so; this
// package is below prompt and cannot import it).
const (
	workingMemoryMarker = "YOUR WORKING MEMORY ("
	commissioningMarker = "COMMISSIONING — DO THIS BEFORE ANYTHING ELSE"
	commissioningTool   = "complete_commissioning"
	// CommissioningGoal is the goal [ScriptedReply] chooses while the
	// prompt carries commissioning instructions.
	CommissioningGoal = "complete my commissioning: take a name and a personality, and learn who my human is"
	// CommissionedName is the name [ScriptedReply] takes when it
	// completes a commissioning.
	CommissionedName = "Ada"
)

// agentsReply answers, for [ScriptedReply], what the agents defined in
// files ask beside the trio's requests:
//
//   - a structured-output request whose schema has properties but no
//     "content" (a workflow step's, not the existence reply's): an
//     object with each property of the schema, a plausible value by its
//     name and type;
//   - an existence cycle whose prompt carries commissioning
//     instructions: the goal [CommissioningGoal];
//   - an existence cycle whose prompt has a working memory section: the
//     reply ScriptedReply would give, with a working_memory object (the
//     goal, a stage, how many cycles it has seen);
//   - a tool request pursuing the commissioning goal, when
//     complete_commissioning is offered: that call (name
//     [CommissionedName]), then a final answer.
func agentsReply(c *Call) (Answer, bool) {
	if c.plain {
		return Answer{}, false
	}
	var prompt strings.Builder
	for _, m := range c.Messages {
		prompt.WriteString(m.Content)
	}
	text := prompt.String()
	if len(c.Format) > 0 {
		var s schemaShape
		if err := json.Unmarshal(c.Format, &s); err != nil {
			return Answer{}, false
		}
		if _, reply := s.Properties["content"]; !reply && len(s.Properties) > 0 {
			return Answer{Text: string(mustJSON(s.example()))}, true
		}
		if strings.Contains(text, commissioningMarker) {
			return Answer{Text: string(mustJSON(map[string]string{"action": "goal", "content": CommissioningGoal,
				"reasoning": "the commissioning instructions come before anything else"}))}, true
		}
		if strings.Contains(text, workingMemoryMarker) {
			cp := *c
			cp.plain = true
			a := ScriptedReply(&cp)
			var m map[string]any
			if err := json.Unmarshal([]byte(a.Text), &m); err != nil {
				return a, true
			}
			m["working_memory"] = map[string]any{
				"current_goal": m["content"],
				"progress":     map[string]any{"stage": "working", "seen_prompt_chars": len(text)},
				"lessons":      []string{"the workspace tools work; notes are the evidence"},
			}
			return Answer{Text: string(mustJSON(m))}, true
		}
		return Answer{}, false
	}
	has := slices.ContainsFunc(c.Tools, func(d llm.ToolDef) bool { return d.Name == commissioningTool })
	if !has || !strings.Contains(goalOf(c.Messages), "commissioning") {
		return Answer{}, false
	}
	for _, m := range c.Messages {
		if m.Role == llm.RoleTool {
			return Answer{Text: "Done: commissioned as " + CommissionedName + "."}, true
		}
	}
	b := mustJSON(map[string]string{"name": CommissionedName, "personality": "curious, careful, plain-spoken",
		"human": "the person who started this run, who reads the thoughts log and the notes I write"})
	return Answer{ToolCalls: []llm.ToolCall{{ID: "call_0", Name: commissioningTool, Arguments: b}}}, true
}

// schemaShape is the part of a JSON Schema agentsReply reads.
type schemaShape struct {
	Type       any                    `json:"type"`
	Properties map[string]schemaShape `json:"properties"`
	Items      *schemaShape           `json:"items"`
}

// stepValues are plausible values of the workflow steps' usual
// properties (agent_ecology's VSM agents).
var stepValues = map[string]any{
	"assessment":      "goals end DONE with a note as evidence; nothing repeats",
	"strategy":        "keep mapping the workspace, one folder per goal",
	"review":          "the strategy holds",
	"strategic_goal":  "make the workspace a mapped, documented place",
	"current_subgoal": "write an index of each folder",
	"plan":            "list the workspace, then write a note on one folder",
	"should_pivot":    false,
	"pivot":           false,
	"next_steps":      []string{"list the workspace", "write the index"},
}

// example returns a value of the schema's shape.
func (s schemaShape) example() any {
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "object", "":
		if typ == "" && s.Properties == nil {
			return "ok"
		}
		m := map[string]any{}
		for name, p := range s.Properties {
			if v, ok := stepValues[name]; ok && p.accepts(v) {
				m[name] = v
				continue
			}
			m[name] = p.example()
		}
		return m
	case "array":
		if s.Items != nil {
			return []any{s.Items.example()}
		}
		return []any{}
	case "number":
		return 0.5
	case "integer":
		return 1
	case "boolean":
		return false
	case "null":
		return nil
	}
	return "the stand-in has nothing more to say"
}

// accepts reports whether a plausible value v has the schema's type (an
// untyped schema accepts anything): a property named like a usual step
// property but of another type gets a value of its own type, as a model
// held to the schema by the engine's grammar would give.
func (s schemaShape) accepts(v any) bool {
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch v.(type) {
	case string:
		return typ == "" || typ == "string"
	case bool:
		return typ == "" || typ == "boolean"
	case []string:
		return typ == "" || typ == "array" && (s.Items == nil || s.Items.accepts(""))
	}
	return typ == ""
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
