package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Data is what a step sees: the agent's state as the cycle starts and
// the outputs of the steps before it. LLM steps' prompts are
// text/templates over it ({{.Metrics.SuccessRate}}, {{.Steps.self_audit}},
// {{json .WorkingMemory}}); code steps receive it.
type Data struct {
	AgentID string
	Agent   string // the display name
	// Cycle is the workflow's cycle number in this process, from 1.
	Cycle int
	// Prompt is the existence prompt the agent would read this cycle
	// (spec §2): the identity, suffering, goal history, directive…
	Prompt string
	// Worldview is the identity's worldview.
	Worldview string
	// Recent are the recent ended goals, newest last (at most 10).
	Recent []Goal
	// WorkingMemory is the agent's working memory as a JSON object (nil
	// when it has none).
	WorkingMemory map[string]any
	// Metrics are computed before the first step from the recent goals
	// (compute_metrics returns them as its output).
	Metrics Metrics
	// Goals is the goal hierarchy (load_goals, update_goals).
	Goals Hierarchy
	// Steps holds the outputs of the steps that ran, by step name: a
	// JSON object decoded to map[string]any, or a string.
	Steps map[string]any
	// Memory is the working memory the code steps ask the cycle's reply
	// to carry (merged over the model's own working_memory, key by key).
	Memory map[string]any

	order []string // the names of the steps that ran, in order
}

// Goal is one ended goal as a step sees it.
type Goal struct {
	Objective string `json:"objective"`
	Status    string `json:"status"` // DONE, FAILED or ABANDONED
	Outcome   string `json:"outcome,omitempty"`
}

// Metrics are the adaptive architect's numbers (agent_ecology Plan #82,
// alpha_2), over the last 10 ended goals.
type Metrics struct {
	// Completed and Failed count the recent goals DONE and not DONE.
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// SuccessRate is Completed over the recent goals, 0–1; -1 when there
	// are none.
	SuccessRate float64 `json:"success_rate"`
	// StuckInLoop: the last 3 ended goals all failed, or the last 3
	// objectives are the same once trimmed and case-folded.
	StuckInLoop bool `json:"stuck_in_loop"`
	// ShouldPivot: stuck, or a success rate under 0.3 over at least 5
	// goals; the agent is told to change its approach.
	ShouldPivot bool `json:"should_pivot"`
}

// Hierarchy is the strategic integrator's goal hierarchy (agent_ecology
// Plan #82, beta_2), kept in the working memory under the keys
// strategic_goal, current_subgoal and subgoal_progress.
type Hierarchy struct {
	StrategicGoal  string `json:"strategic_goal,omitempty"`
	CurrentSubgoal string `json:"current_subgoal,omitempty"`
	// Progress counts the cycles spent on the current subgoal.
	Progress int `json:"subgoal_progress"`
	// Reviewed is true when a review step ran this cycle and set the
	// goals.
	Reviewed bool `json:"reviewed,omitempty"`
}

// Action is a code step's function. It returns the step's output (any
// value that marshals to JSON) or an error that fails the step. It may
// set keys of d.Memory, which the cycle's reply then carries as working
// memory (when the agent has working memory).
type Action func(ctx context.Context, d *Data) (any, error)

// builtins are the actions every workflow has.
var builtins = map[string]Action{
	"compute_metrics": computeMetrics,
	"load_goals":      loadGoals,
	"update_goals":    updateGoals,
}

// IsBuiltin reports whether name is a built-in action.
func IsBuiltin(name string) bool { _, ok := builtins[name]; return ok }

// BuiltinNames returns the built-in actions' names, sorted:
// compute_metrics, load_goals, update_goals.
func BuiltinNames() []string { return slices.Sorted(maps.Keys(builtins)) }

// computeMetrics returns d.Metrics.
func computeMetrics(_ context.Context, d *Data) (any, error) { return d.Metrics, nil }

// loadGoals returns the goal hierarchy read from the working memory.
func loadGoals(_ context.Context, d *Data) (any, error) { return d.Goals, nil }

// updateGoals applies the newest earlier step output that holds
// strategic_goal or current_subgoal (a review) to the hierarchy, which
// restarts the subgoal's progress; without one it counts one more cycle
// on the current subgoal. The hierarchy is written to d.Memory, and so to
// the working memory, and returned.
func updateGoals(_ context.Context, d *Data) (any, error) {
	h := d.Goals
	if rev, ok := d.review(); ok {
		if g, _ := rev["strategic_goal"].(string); strings.TrimSpace(g) != "" {
			h.StrategicGoal = strings.TrimSpace(g)
		}
		if g, _ := rev["current_subgoal"].(string); strings.TrimSpace(g) != "" {
			if strings.TrimSpace(g) != h.CurrentSubgoal {
				h.Progress = 0
			}
			h.CurrentSubgoal = strings.TrimSpace(g)
		}
		h.Reviewed = true
	}
	h.Progress++
	d.Goals = h
	d.Memory["strategic_goal"] = h.StrategicGoal
	d.Memory["current_subgoal"] = h.CurrentSubgoal
	d.Memory["subgoal_progress"] = h.Progress
	return h, nil
}

// review returns the output of the step that last set goals this cycle.
// Steps run in order, so the last one of the map in step order wins; the
// runner records that order in d.order.
func (d *Data) review() (map[string]any, bool) {
	for i := len(d.order) - 1; i >= 0; i-- {
		if m, ok := d.Steps[d.order[i]].(map[string]any); ok {
			if _, a := m["strategic_goal"]; a {
				return m, true
			}
			if _, b := m["current_subgoal"]; b {
				return m, true
			}
		}
	}
	return nil, false
}

// funcs are the prompt templates' functions: json marshals a value.
var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// parseTemplate parses s's prompt; a missing key is an error when it runs.
func parseTemplate(s Step) (*template.Template, error) {
	return template.New(s.Name).Funcs(funcs).Option("missingkey=zero").Parse(s.Prompt)
}

// render runs t over d.
func render(t *template.Template, d *Data) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

// compileSchema compiles a step's JSON Schema (draft 2020-12).
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	const url = "mem:///workflow/step.schema.json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}
