package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// StepType is the kind of a [Step]: "llm" or "code" (agent_ecology's
// Plan #70 step types).
type StepType string

// The step types.
const (
	// LLM asks the model: the step's Prompt, a text/template over the
	// agent's state and the earlier steps' outputs ([Data]), is sent as
	// one user message; the reply is the step's output (a JSON object
	// checked against Schema when the step has one).
	LLM StepType = "llm"
	// Code runs the Go function registered under the step's Action
	// ([Action]; [Builtins] are always there).
	Code StepType = "code"
)

// OnFailure says what a failed step does to the cycle
// (agent_ecology's error_handling.on_step_failure).
type OnFailure string

// The failure policies.
const (
	// Abort ends the workflow: the cycle takes the spec §6 fallback goal,
	// identity untouched, as when the model fails. The default.
	Abort OnFailure = "abort"
	// Continue goes on with the next step; the failed step's output is
	// {"error": "…"}. A failed last step still aborts: there is no reply.
	Continue OnFailure = "continue"
)

// Condition makes a step conditional: it runs when any of its set fields
// holds (a nil Condition always runs).
type Condition struct {
	// Every runs the step every Every cycles of the workflow (on the
	// first, then every Every-th: cycles 1, 1+Every, …); 0: unset.
	Every int `json:"every,omitempty"`
	// Stuck runs the step when the agent is stuck in a loop
	// ([Metrics].StuckInLoop).
	Stuck bool `json:"stuck,omitempty"`
	// SuccessRateBelow runs the step when the success rate over the
	// recent goals ([Metrics].SuccessRate) is under it, 0–1 (exclusive
	// of 0: unset). An agent with no ended goal has no rate and never
	// matches.
	SuccessRateBelow float64 `json:"success_rate_below,omitempty"`
}

// Step is one step of a [Workflow].
type Step struct {
	// Name names the step: its output is Data.Steps[Name] for the steps
	// after it; unique within the workflow, e.g. "self_audit".
	Name string `json:"name"`
	// Type is LLM or Code.
	Type StepType `json:"type"`
	// Prompt is an LLM step's prompt: a text/template over [Data], e.g.
	// "Success rate {{.Metrics.SuccessRate}}. {{.Steps.compute_metrics}}".
	Prompt string `json:"prompt,omitempty"`
	// Schema is an optional JSON Schema (draft 2020-12) the LLM step's
	// output must match: it is sent as the request's format, and a reply
	// that does not match fails the step.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Action names a Code step's function: a [Builtins] name or one of
	// [Workflow].Actions.
	Action string `json:"action,omitempty"`
	// When, if not nil, makes the step conditional; a step skipped is
	// reported and its output is absent from Data.Steps.
	When *Condition `json:"when,omitempty"`
}

// Workflow is an ordered list of steps run as one existence cycle in
// place of the single existence prompt (agent_ecology's workflows, Plan
// #70; its VSM agents, Plan #82). The last step's output is the cycle's
// reply, parsed and validated as an existence reply (spec §3).
type Workflow struct {
	Steps []Step `json:"steps"`
	// OnStepFailure is Abort (default) or Continue.
	OnStepFailure OnFailure `json:"on_step_failure,omitempty"`
	// Actions are the code steps' functions by name, beside [Builtins]
	// (a name of both is Actions').
	Actions map[string]Action `json:"-"`
}

// ErrInvalid matches the errors of [Workflow.Validate].
var ErrInvalid = errors.New("workflow: invalid")

// Validate checks w: at least one step; each named, unique, of a known
// type; an LLM step with a prompt; a Code step whose action is a builtin
// or in Actions (or in extra, names registered elsewhere); a condition's
// Every not negative and its SuccessRateBelow within 0–1; OnStepFailure
// "", Abort or Continue. The last step must be an LLM step or a code
// action that returns a reply. Errors match [ErrInvalid] and are a
// *[StepError] naming the step's index.
func (w *Workflow) Validate(extra ...string) error {
	if len(w.Steps) == 0 {
		return fmt.Errorf("%w: no steps", ErrInvalid)
	}
	switch w.OnStepFailure {
	case "", Abort, Continue:
	default:
		return fmt.Errorf("%w: on_step_failure %q: want continue or abort", ErrInvalid, w.OnStepFailure)
	}
	seen := map[string]bool{}
	for i, s := range w.Steps {
		bad := func(field, format string, args ...any) error {
			return &StepError{Index: i, Field: field, Err: fmt.Errorf("%w: step %d (%s): %s: %s", ErrInvalid, i+1, s.Name, field, fmt.Sprintf(format, args...))}
		}
		if s.Name == "" {
			return bad("name", "no name")
		}
		if seen[s.Name] {
			return bad("name", "the name %q is used by an earlier step", s.Name)
		}
		seen[s.Name] = true
		switch s.Type {
		case LLM:
			if s.Prompt == "" {
				return bad("prompt", "an llm step needs a prompt")
			}
			if s.Action != "" {
				return bad("action", "an llm step has no action")
			}
			if _, err := parseTemplate(s); err != nil {
				return bad("prompt", "%v", err)
			}
			if len(s.Schema) > 0 {
				if _, err := compileSchema(s.Schema); err != nil {
					return bad("schema", "%v", err)
				}
			}
		case Code:
			if s.Action == "" {
				return bad("action", "a code step needs an action")
			}
			if _, ok := w.Actions[s.Action]; !ok && !IsBuiltin(s.Action) && !slices.Contains(extra, s.Action) {
				return bad("action", "no action %q is registered (built in: %v)", s.Action, BuiltinNames())
			}
		default:
			return bad("type", "unknown step type %q: want llm or code", s.Type)
		}
		if c := s.When; c != nil {
			if c.Every < 0 {
				return bad("when", "every must be 1 or more")
			}
			if c.SuccessRateBelow < 0 || c.SuccessRateBelow > 1 {
				return bad("when", "success_rate_below must be within 0–1")
			}
		}
	}
	return nil
}

// StepError is an error of [Workflow.Validate] about one step: its index
// in Steps and the field at fault ("name", "type", "prompt", "schema",
// "action", "when").
type StepError struct {
	Index int
	Field string
	Err   error
}

func (e *StepError) Error() string { return e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }
