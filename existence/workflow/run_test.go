package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/workflow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/memstore"
)

var t0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

func text(t *testing.T, v any) llmtest.Reply {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return llmtest.Reply{Text: string(b), PromptTokens: 100, OutputTokens: 10}
}

// architect is the adaptive architect's workflow (agent_ecology Plan #82).
func architect() workflow.Workflow {
	return workflow.Workflow{Steps: []workflow.Step{
		{Name: "compute_metrics", Type: workflow.Code, Action: "compute_metrics"},
		{Name: "self_audit", Type: workflow.LLM, Prompt: "Audit. Success rate {{.Metrics.SuccessRate}}, stuck {{.Metrics.StuckInLoop}}.",
			Schema: json.RawMessage(`{"type":"object","required":["assessment"],"properties":{"assessment":{"type":"string"}}}`)},
		{Name: "review_strategy", Type: workflow.LLM, Prompt: "Review: {{.Steps.self_audit.assessment}}", When: &workflow.Condition{Stuck: true}},
		{Name: "decide_action", Type: workflow.LLM, Prompt: "{{.Prompt}}\nAudit said: {{.Steps.self_audit.assessment}}"},
	}}
}

type env struct {
	rec   *existencetest.Recorder
	fake  *llmtest.Fake
	agent *existence.Agent
	spans *tracetest.SpanRecorder
}

func newAgent(t *testing.T, w workflow.Workflow, wm bool, replies ...llmtest.Reply) *env {
	t.Helper()
	s, err := workflow.New(w)
	require.NoError(t, err)
	e := &env{rec: &existencetest.Recorder{}, fake: llmtest.NewFake(replies...), spans: tracetest.NewSpanRecorder()}
	e.agent, err = existence.New(context.Background(), existence.Config{
		ID: "alpha_2", Name: "Architect", Model: e.fake, Store: memstore.New(),
		Timing: existence.TimingConfig{Clock: existencetest.NewClock(t0)}, Observer: e.rec.Observe, Logger: slog.New(slog.DiscardHandler),
		Calls:          existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}, NoRepair: true, Cycle: s},
		Memory:         existence.MemoryConfig{Working: existence.WorkingMemory{Enabled: wm}},
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { e.agent.Close() })
	return e
}

func (e *env) tick(t *testing.T) {
	t.Helper()
	require.NoError(t, e.agent.Tick(context.Background()))
	require.NoError(t, e.agent.WaitGoal(context.Background()))
}

func (e *env) steps() []string {
	var out []string
	for _, ev := range e.rec.Kind(event.Step) {
		out = append(out, ev.Step.Name+":"+ev.Step.Status)
	}
	return out
}

// TestArchitectWorkflow: the steps run in order, each an event and a
// span; a step's prompt sees the metrics and the earlier outputs; the
// conditional review is skipped when not stuck; the last step's reply
// becomes the goal; every step's tokens are counted.
func TestArchitectWorkflow(t *testing.T) {
	e := newAgent(t, architect(), false,
		text(t, map[string]any{"assessment": "nothing done yet"}),
		text(t, map[string]any{"action": "goal", "content": "map the workspace", "reasoning": "the audit says so"}),
	)
	e.tick(t)
	assert.Equal(t, []string{"compute_metrics:done", "self_audit:done", "review_strategy:skipped", "decide_action:done"}, e.steps())
	reqs := e.fake.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "Audit. Success rate -1, stuck false.", reqs[0].Messages[0].Content)
	assert.JSONEq(t, `{"type":"object","required":["assessment"],"properties":{"assessment":{"type":"string"}}}`, string(reqs[0].Format))
	assert.Contains(t, reqs[1].Messages[0].Content, "You are Architect.", "the existence prompt")
	assert.Contains(t, reqs[1].Messages[0].Content, "Audit said: nothing done yet")
	assert.NotEmpty(t, reqs[1].Format, "the last step asks for the existence reply")
	g := e.agent.State().Identity.Goals[0]
	assert.Equal(t, "map the workspace", g.Objective)
	assert.False(t, g.Fallback)
	assert.Equal(t, 220, int(e.agent.Status().Usage.Total()), "both steps' tokens")

	var names []string
	for _, s := range e.spans.Ended() {
		if strings.HasPrefix(s.Name(), "workflow_step ") {
			names = append(names, strings.TrimPrefix(s.Name(), "workflow_step "))
		}
	}
	assert.Equal(t, []string{"compute_metrics", "self_audit", "decide_action"}, names)
}

// TestWorkflowStepFailure: a step whose output breaks its schema fails;
// under abort the cycle takes the fallback goal, under continue the
// workflow goes on with the failure as the step's output.
func TestWorkflowStepFailure(t *testing.T) {
	bad := text(t, map[string]any{"verdict": "no assessment key"})
	final := text(t, map[string]any{"action": "goal", "content": "carry on", "reasoning": "r"})

	e := newAgent(t, architect(), false, bad)
	e.tick(t)
	assert.Equal(t, []string{"compute_metrics:done", "self_audit:failed"}, e.steps())
	g := e.agent.State().Identity.Goals[0]
	assert.True(t, g.Fallback, "abort: the fallback goal")
	assert.Equal(t, existence.FallbackContent, g.Objective)
	fb := e.rec.Kind(event.Fallback)
	require.Len(t, fb, 1)
	assert.Equal(t, "invalid_output", fb[0].FailureClass)

	w := architect()
	w.OnStepFailure = workflow.Continue
	w.Steps[3].Prompt = "{{.Prompt}} {{json .Steps.self_audit}}"
	e = newAgent(t, w, false, bad, final)
	e.tick(t)
	assert.Equal(t, []string{"compute_metrics:done", "self_audit:failed", "review_strategy:skipped", "decide_action:done"}, e.steps())
	assert.Equal(t, "carry on", e.agent.State().Identity.Goals[0].Objective)
	assert.Contains(t, e.fake.Requests()[1].Messages[0].Content, `{"error":`)
}

// TestStrategicIntegrator: the goal hierarchy lives in the working
// memory; the review runs on the first cycle and every 3rd, or when
// stuck; update_goals applies it and counts the progress.
func TestStrategicIntegrator(t *testing.T) {
	w := workflow.Workflow{Steps: []workflow.Step{
		{Name: "load_goals", Type: workflow.Code, Action: "load_goals"},
		{Name: "strategic_review", Type: workflow.LLM, Prompt: "Review. Goal: {{.Goals.StrategicGoal}}", When: &workflow.Condition{Every: 3, Stuck: true}},
		{Name: "update_goals", Type: workflow.Code, Action: "update_goals"},
		{Name: "decide_action", Type: workflow.LLM, Prompt: "{{.Prompt}} Subgoal: {{.Goals.CurrentSubgoal}} ({{.Goals.Progress}})"},
	}}
	goal := func(s string) llmtest.Reply {
		return text(t, map[string]any{"action": "goal", "content": s, "reasoning": "r"})
	}
	review := text(t, map[string]any{"strategic_goal": "become the workspace's cartographer", "current_subgoal": "list every folder"})
	e := newAgent(t, w, true, review, goal("list design/"), goal("list notes/"), goal("list src/"), review, goal("list tests/"))
	for range 4 {
		e.tick(t)
	}
	var reviews []string
	for _, ev := range e.rec.Kind(event.Step) {
		if ev.Step.Name == "strategic_review" {
			reviews = append(reviews, ev.Step.Status)
		}
	}
	assert.Equal(t, []string{"done", "skipped", "skipped", "done"}, reviews, "cycles 1 and 4")
	var wm map[string]any
	require.NoError(t, json.Unmarshal(e.agent.State().WorkingMemory, &wm))
	assert.Equal(t, "become the workspace's cartographer", wm["strategic_goal"])
	assert.Equal(t, "list every folder", wm["current_subgoal"])
	assert.EqualValues(t, 4, wm["subgoal_progress"], "the same subgoal: progress counts on")
	reqs := e.fake.Requests()
	assert.Contains(t, reqs[len(reqs)-1].Messages[0].Content, "Subgoal: list every folder (4)")
}

// TestValidate: the workflow's rules.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    workflow.Workflow
		want string
	}{
		{"no steps", workflow.Workflow{}, "no steps"},
		{"unknown type", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: "shell"}}}, `unknown step type "shell"`},
		{"no prompt", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: workflow.LLM}}}, "needs a prompt"},
		{"unknown action", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: workflow.Code, Action: "nope"}}}, `no action "nope"`},
		{"twice", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: workflow.LLM, Prompt: "p"}, {Name: "a", Type: workflow.LLM, Prompt: "p"}}}, "used by an earlier step"},
		{"bad schema", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: workflow.LLM, Prompt: "p", Schema: json.RawMessage(`{"type": 7}`)}}}, "schema"},
		{"bad policy", workflow.Workflow{Steps: []workflow.Step{{Name: "a", Type: workflow.LLM, Prompt: "p"}}, OnStepFailure: "retry"}, "on_step_failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.Validate()
			require.Error(t, err)
			assert.True(t, errors.Is(err, workflow.ErrInvalid))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_ = identity.Done
}
