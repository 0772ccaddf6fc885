package existence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/suffering"
	"github.com/existence-loop/sdk/task"
)

func TestStatusCountsFallbacksAndKeepsTheLastCause(t *testing.T) {
	unavailable := &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Err: errors.New("connection refused")}
	f := newFixture(
		llmtest.Reply{Err: unavailable},
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503, Message: "loading"}},
		reply(t, map[string]any{"content": "map the workspace", "reasoning": "r",
			"suffering_assessment": map[string]any{"new_stressors": []map[string]string{{"type": "invisibility", "description": "nobody reads my notes", "condition": "a peer cites one"}}}}),
	)
	a := f.agent(t, existence.Config{})
	s := a.Status()
	assert.Equal(t, "scout", s.ID)
	assert.Equal(t, "Cedar", s.Name)
	assert.Nil(t, s.LastCycle)
	assert.Equal(t, "none", s.Level)
	assert.Empty(t, s.Stressors)

	tick(t, a)
	f.clock.Advance(6 * time.Second)
	tick(t, a)
	s = a.Status()
	assert.Equal(t, 2, s.ConsecutiveFallbacks)
	assert.Equal(t, "http_503", s.LastFallbackCause)
	assert.Contains(t, s.LastFallbackError, "loading")
	assert.Equal(t, t0.Add(6*time.Second), s.LastFallbackAt)
	assert.Equal(t, 2, s.Cycles)
	require.NotNil(t, s.LastCycle)
	assert.True(t, s.LastCycle.Fallback)
	assert.Equal(t, "DONE: completed: "+existence.FallbackContent, s.LastOutcome)

	f.clock.Advance(6 * time.Second)
	require.NoError(t, a.Tick(context.Background()))
	s = a.Status()
	assert.Equal(t, 0, s.ConsecutiveFallbacks, "a cycle the model answered resets the count")
	assert.Equal(t, "http_503", s.LastFallbackCause, "the last cause stays for a person to see")
	assert.Equal(t, "map the workspace", s.Goal)
	assert.Equal(t, t0.Add(12*time.Second), s.LastCycleAt)
	assert.Equal(t, 900, s.LastCycle.PromptTokens)
	require.Len(t, s.Stressors, 1)
	assert.Equal(t, "invisibility", s.Stressors[0].Type)
	assert.Greater(t, s.Load, 0.0)

	a.SetLease(&lease.Lease{AgentID: "scout", Epoch: 3, Owner: "host-a:42"})
	assert.Equal(t, "host-a:42", a.Status().Lease.Owner)
	a.SetLease(nil)
	assert.Nil(t, a.Status().Lease)
}

func TestFailFast(t *testing.T) {
	notFound := &llm.ModelNotFoundError{Provider: "ollama", Model: "qwen9", Hint: "run `ollama pull qwen9`"}
	tests := []struct {
		name     string
		err      error
		failFast bool
		stops    bool
	}{
		{"model not found stops", notFound, true, true},
		{"auth refused stops", llm.StatusError{Provider: "openai", StatusCode: 401, Message: "bad key"}, true, true},
		{"forbidden stops", llm.StatusError{Provider: "openai", StatusCode: 403, Message: "no"}, true, true},
		{"unavailable goes on", &llm.UnavailableError{Provider: "ollama", Err: errors.New("refused")}, true, false},
		{"default goes on", notFound, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(llmtest.Reply{Err: tt.err})
			a := f.agent(t, existence.Config{Calls: existence.CallConfig{FailFast: tt.failFast}, Timing: existence.TimingConfig{MaxCycles: 1}})
			err := a.Run(context.Background())
			if !tt.stops {
				require.NoError(t, err)
				assert.Equal(t, existence.FallbackContent, a.State().Identity.LastEnded().Objective)
				assert.Empty(t, a.Status().Stopped)
				return
			}
			require.ErrorIs(t, err, existence.ErrFailFast)
			require.ErrorIs(t, err, tt.err)
			var ff *existence.FailFastError
			require.ErrorAs(t, err, &ff)
			assert.Equal(t, "scout", ff.AgentID)
			assert.Contains(t, err.Error(), "retrying cannot fix")
			assert.Nil(t, a.State().Identity.ActiveGoal(), "no fallback goal is started")
			assert.Empty(t, a.State().Identity.Goals)
			assert.Contains(t, a.Status().Stopped, ff.Cause)
			require.NotEmpty(t, f.rec.Kind(event.Error))
		})
	}
}

func TestThoughtsLogLines(t *testing.T) {
	at := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	long := ""
	for range 30 {
		long += "word word "
	}
	dup := errors.New("stressor type already active: invisibility")
	tests := []struct {
		name string
		e    event.Event
		want string
	}{
		{"error said once", event.Event{Kind: event.StressorDropped, Text: dup.Error(), Err: dup, Error: dup.Error()},
			"12:00:00 Cedar 🫥 stressor type already active: invisibility"},
		{"text and a different error", event.Event{Kind: event.Error, Text: "saving state failed", Error: "disk full"},
			"12:00:00 Cedar ❗ saving state failed: disk full"},
		{"fallback goal names its cause", event.Event{Kind: event.GoalChosen, Text: existence.FallbackContent, Reasoning: existence.FallbackReasoning, FailureClass: "model_not_found"},
			"12:00:00 Cedar 🎯 explore the workspace and build something useful — fallback goal: the model failed (model_not_found)"},
		{"no 0+0 tokens after failed attempts", event.Event{Kind: event.Cycle, Cycle: &event.CycleStats{Total: 1500 * time.Millisecond, PromptChars: 4000, Fallback: true}},
			"12:00:00 Cedar ⏱️ cycle in 1.5s: prompt 4000 chars, no usable reply, fallback"},
		{"cycle with tokens", event.Event{Kind: event.Cycle, Cycle: &event.CycleStats{Total: time.Second, PromptChars: 10, PromptTokens: 5, OutputTokens: 2}},
			"12:00:00 Cedar ⏱️ cycle in 1s: prompt 10 chars, 5+2 tokens"},
		{"model call says its purpose", event.Event{Kind: event.ModelCall, Call: &event.ModelCallInfo{Model: "qwen", Outcome: "ok", Duration: time.Second, Purpose: "executor"}},
			"12:00:00 Cedar 🔌 executor call: qwen ok in 1s"},
		{"goal outcome capped", event.Event{Kind: event.GoalEnded, GoalStatus: identity.Done, Text: long},
			"12:00:00 Cedar 🏁 [DONE] " + long[:existence.MaxOutcomeChars-1] + "…"},
		{"task status", event.Event{Kind: event.Task, TaskStatus: task.Assigned, Text: "write notes/index.md"},
			"12:00:00 Cedar 📋 [assigned] write notes/index.md"},
		{"stressor says who added it", event.Event{Kind: event.StressorAdded, By: "assessment", Text: "goals keep failing", Load: 0.25,
			Stressor: &suffering.Stressor{Type: "repeated_failure", Severity: 0.25}},
			"12:00:00 Cedar 😣 stressor repeated_failure 0.25 (assessment): goals keep failing; load 0.25"},
		{"message sent", event.Event{Kind: event.Message, Direction: "sent", Peer: "Vault", Text: "hello"},
			"12:00:00 Cedar ✉️ to Vault: hello"},
		{"memory's own kind picks the icon", event.Event{Kind: event.Memory, Text: "the rate limiter",
			Memory: &memory.Event{Kind: memory.EventStored, Text: "the rate limiter"}},
			"12:00:00 Cedar 💾 remembered: the rate limiter"},
		{"memory error", event.Event{Kind: event.Memory, Text: "recalling memories for the prompt", Error: "disk full",
			Memory: &memory.Event{Kind: memory.EventError, Text: "recalling memories for the prompt", Error: "disk full"}},
			"12:00:00 Cedar ❗ recalling memories for the prompt: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.Time, tt.e.Agent = at, "Cedar"
			assert.Equal(t, tt.want, tt.e.String())
		})
	}
}

func TestModelCallsSayCycleOrExecutor(t *testing.T) {
	f := newFixture(goalReply(t, "write a note"))
	exec := existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		_, err := asg.Model.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}})
		return existence.Outcome{Status: "DONE", Summary: "ok"}, err
	})
	f.model.Add(llmtest.Reply{Text: "done"})
	a := f.agent(t, existence.Config{Executor: exec})
	tick(t, a)
	calls := f.rec.Kind(event.ModelCall)
	require.Len(t, calls, 2)
	assert.Equal(t, "cycle", calls[0].Call.Purpose)
	assert.Equal(t, "executor", calls[1].Call.Purpose)
}
