package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
)

type echoArgs struct {
	Text string `json:"text" jsonschema_description:"The text to echo back."`
}

type noteArgs struct {
	Path    string `json:"path" jsonschema_description:"Where to write."`
	Content string `json:"content,omitempty" jsonschema_description:"What to write."`
}

// kit is a set of tools whose calls a test can inspect.
type kit struct {
	mu    sync.Mutex
	calls []string
}

func (k *kit) record(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, s)
}

func (k *kit) recorded() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.calls...)
}

func (k *kit) tools() []toolloop.Tool {
	return []toolloop.Tool{
		toolloop.NewTool("echo", "Echo text back.", func(ctx context.Context, a echoArgs) (string, error) {
			k.record("echo:" + a.Text)
			return a.Text, nil
		}),
		toolloop.NewTool("note", "Write a note.", func(ctx context.Context, a noteArgs) (string, error) {
			k.record("note:" + a.Path)
			toolloop.ReportArtifact(ctx, a.Path)
			return "wrote " + a.Path, nil
		}),
		toolloop.NewTool("fail", "Always fails.", func(ctx context.Context, a echoArgs) (string, error) {
			k.record("fail:" + a.Text)
			toolloop.ReportArtifact(ctx, "never-listed")
			return "", errors.New("disk on fire")
		}),
		toolloop.NewTool("block", "Blocks until its context ends.", func(ctx context.Context, a echoArgs) (string, error) {
			k.record("block:" + a.Text)
			<-ctx.Done()
			return "", ctx.Err()
		}),
	}
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func tools(calls ...llm.ToolCall) llmtest.Reply { return llmtest.Reply{ToolCalls: calls} }

func final(text string) llmtest.Reply { return llmtest.Reply{Text: text} }

// events collects the events an Executor reports.
type events struct {
	mu  sync.Mutex
	all []event.Event
}

func (e *events) report(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// stalls returns the EventStall events.
func (e *events) stalls() []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Event
	for _, ev := range e.all {
		if ev.Kind == event.Stall {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) tools() []event.ToolCallInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.ToolCallInfo
	for _, ev := range e.all {
		if ev.Kind == event.ToolCall && ev.Tool != nil {
			out = append(out, *ev.Tool)
		}
	}
	return out
}

func assignment(ev *events) existence.Assignment {
	a := existence.Assignment{
		AgentID:   "cedar-1",
		AgentName: "Cedar",
		Goal:      identity.Goal{ID: "g1", Objective: "write a field report", Status: identity.Active},
	}
	if ev != nil {
		a.Report = ev.report
	}
	return a
}

func newExecutor(t *testing.T, m llm.Model, k *kit, mod func(*toolloop.Config)) *toolloop.Executor {
	t.Helper()
	cfg := toolloop.Config{Model: m, Tools: k.tools()}
	if mod != nil {
		mod(&cfg)
	}
	e, err := toolloop.New(cfg)
	require.NoError(t, err)
	return e
}

// toolResults returns the RoleTool messages of a request.
func toolResults(req *llm.Request) []llm.Message {
	var out []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func lastMessage(req *llm.Request) llm.Message { return req.Messages[len(req.Messages)-1] }

func TestExecuteHappyPath(t *testing.T) {
	fake := llmtest.NewFake(
		llmtest.Reply{Text: "Let me look.", ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"hello"}`)}, PromptTokens: 100, OutputTokens: 10},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			call("b", "note", `{"path":"notes/report.md","content":"x"}`),
			call("c", "note", `{"path":"notes/report.md"}`),
		}, PromptTokens: 150, OutputTokens: 20},
		llmtest.Reply{Text: "  Wrote notes/report.md with the field report.\n", PromptTokens: 200, OutputTokens: 30},
	)
	k := &kit{}
	ev := &events{}
	e := newExecutor(t, fake, k, nil)

	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	assert.Equal(t, "Wrote notes/report.md with the field report.", out.Summary)
	assert.Equal(t, 3, out.Steps)
	assert.Equal(t, 450, out.PromptTokens)
	assert.Equal(t, 60, out.OutputTokens)
	assert.Equal(t, []string{"notes/report.md"}, out.Artifacts)
	assert.Empty(t, out.BrokenTools)
	assert.Equal(t, []string{"echo:hello", "note:notes/report.md", "note:notes/report.md"}, k.recorded())

	reqs := fake.Requests()
	require.Len(t, reqs, 3)
	// Every request carries the tool definitions, with their schemas.
	for _, req := range reqs {
		require.Len(t, req.Tools, 4)
		assert.Equal(t, "echo", req.Tools[0].Name)
		assert.Equal(t, "Echo text back.", req.Tools[0].Description)
		assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back."}},"required":["text"],"additionalProperties":false}`,
			string(req.Tools[0].Parameters))
	}
	// The first request: system prompt naming the agent and the goal, then the goal.
	require.Len(t, reqs[0].Messages, 2)
	assert.Equal(t, llm.RoleSystem, reqs[0].Messages[0].Role)
	assert.Contains(t, reqs[0].Messages[0].Content, "You are Cedar")
	assert.Contains(t, reqs[0].Messages[0].Content, "Your goal: write a field report")
	assert.Contains(t, reqs[0].Messages[0].Content, "no tool calls")
	assert.Equal(t, llm.Message{Role: llm.RoleUser, Content: "Pursue your goal now: write a field report"}, reqs[0].Messages[1])

	// The second request: the assistant turn with its call, then the result.
	require.Len(t, reqs[1].Messages, 4)
	assert.Equal(t, llm.RoleAssistant, reqs[1].Messages[2].Role)
	assert.Equal(t, "Let me look.", reqs[1].Messages[2].Content)
	assert.Equal(t, "a", reqs[1].Messages[2].ToolCalls[0].ID)
	assert.Equal(t, llm.Message{Role: llm.RoleTool, Content: "hello", ToolCallID: "a", Name: "echo"}, reqs[1].Messages[3])

	// The third: every result, with ids matching the calls, in order.
	res := toolResults(reqs[2])
	require.Len(t, res, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{res[0].ToolCallID, res[1].ToolCallID, res[2].ToolCallID})
	assert.Equal(t, "wrote notes/report.md", res[1].Content)
	assert.Equal(t, "note", res[2].Name)

	// One event per tool call.
	tc := ev.tools()
	require.Len(t, tc, 3)
	assert.Equal(t, "echo", tc[0].Name)
	assert.Equal(t, `{"text":"hello"}`, tc[0].Arguments)
	assert.Equal(t, "hello", tc[0].Result)
	assert.False(t, tc[0].Failed)
	assert.GreaterOrEqual(t, tc[0].Duration, time.Duration(0))
}

func TestExecuteTaskInPrompt(t *testing.T) {
	fake := llmtest.NewFake(tools(call("", "echo", `{"text":"logs"}`)), final("done"))
	e := newExecutor(t, fake, &kit{}, nil)
	a := assignment(nil)
	a.Task = &prompt.Task{ID: "t-7", Description: "summarise the logs"}
	out, err := e.Execute(context.Background(), a)
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	req := fake.Requests()[0]
	assert.Contains(t, req.Messages[0].Content, "The goal pursues a task assigned to you: summarise the logs")
	assert.Equal(t, "Pursue your goal now: write a field report\nAssigned task t-7: summarise the logs", req.Messages[1].Content)
}

func TestExecuteCustomSystemPrompt(t *testing.T) {
	fake := llmtest.NewFake(final("done"))
	e := newExecutor(t, fake, &kit{}, func(c *toolloop.Config) {
		c.System = "You are a careful archivist."
		c.Temperature = llm.Ptr(0.2)
		c.MaxTokens = 512
	})
	_, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	req := fake.Requests()[0]
	assert.Equal(t, "You are a careful archivist.", req.Messages[0].Content)
	require.NotNil(t, req.Temperature)
	assert.Equal(t, 0.2, *req.Temperature)
	assert.Equal(t, 512, req.MaxTokens)
}

func TestExecuteToolResults(t *testing.T) {
	tests := []struct {
		name    string
		call    llm.ToolCall
		want    string // the tool result the model sees
		failed  bool
		invoked []string // what the tools recorded
	}{
		{
			name: "validation: wrong type",
			call: call("x", "echo", `{"text":5}`),
			want: "Error: invalid arguments: /text: expected string, but got number", failed: true,
		},
		{
			name: "validation: missing property",
			call: call("x", "echo", `{}`),
			want: "Error: invalid arguments: /: missing properties: 'text'", failed: true,
		},
		{
			name: "validation: unknown property",
			call: call("x", "echo", `{"text":"a","loud":true}`),
			want: "Error: invalid arguments: /: additionalProperties 'loud' not allowed", failed: true,
		},
		{
			name: "validation: not JSON",
			call: call("x", "echo", `{"text":`),
			want: "Error: invalid arguments: /: not valid JSON: unexpected EOF", failed: true,
		},
		{
			name: "validation: not an object",
			call: call("x", "echo", `["a"]`),
			want: "Error: invalid arguments: /: expected a JSON object of arguments, got an array", failed: true,
		},
		{
			name: "arguments as a JSON string",
			call: call("x", "echo", `"{\"text\":\"wrapped\"}"`),
			want: "wrapped", invoked: []string{"echo:wrapped"},
		},
		{
			name: "unknown tool",
			call: call("x", "rm_rf", `{}`),
			want: `Error: unknown tool "rm_rf"; available tools: echo, note, fail, block`, failed: true,
		},
		{
			name: "tool error",
			call: call("x", "fail", `{"text":"now"}`),
			want: "Error: disk on fire", failed: true, invoked: []string{"fail:now"},
		},
		{
			name: "empty result",
			call: call("x", "echo", `{"text":""}`),
			want: "(no output)", invoked: []string{"echo:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewFake(tools(tt.call), final("ok"))
			k := &kit{}
			ev := &events{}
			e := newExecutor(t, fake, k, nil)
			out, err := e.Execute(context.Background(), assignment(ev))
			require.NoError(t, err)
			// The loop goes on after a tool result; the goal is DONE only
			// when the call succeeded (RequireEvidence).
			if tt.failed {
				assert.Equal(t, identity.Failed, out.Status)
				assert.Equal(t, "artifact check failed: no tool call succeeded: all 1 tool calls failed", out.Summary)
			} else {
				assert.Equal(t, identity.Done, out.Status)
				assert.Equal(t, "ok", out.Summary)
			}
			assert.Equal(t, tt.invoked, k.recorded())
			assert.Empty(t, out.Artifacts)

			msg := lastMessage(fake.Requests()[1])
			assert.Equal(t, llm.RoleTool, msg.Role)
			assert.Equal(t, tt.want, msg.Content)
			assert.Equal(t, "x", msg.ToolCallID)
			assert.Equal(t, tt.call.Name, msg.Name)

			tc := ev.tools()
			require.Len(t, tc, 1)
			assert.Equal(t, tt.failed, tc[0].Failed)
			assert.Equal(t, tt.want, tc[0].Result)
		})
	}
}

func TestExecuteToolTimeout(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	stubborn := toolloop.NewTool("stubborn", "Ignores its context.", func(ctx context.Context, a echoArgs) (string, error) {
		<-never
		return "too late", nil
	})
	k := &kit{}
	fake := llmtest.NewFake(
		tools(call("t1", "block", `{"text":"a"}`)),
		tools(call("t2", "stubborn", `{"text":"b"}`)),
		tools(call("t3", "echo", `{"text":"still here"}`)),
		final("recovered"),
	)
	ev := &events{}
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: append(k.tools(), stubborn), ToolTimeout: 250 * time.Millisecond})
	require.NoError(t, err)

	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	assert.Equal(t, "recovered", out.Summary)

	reqs := fake.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, "Error: tool timed out", lastMessage(reqs[1]).Content)
	assert.Equal(t, "Error: tool timed out", lastMessage(reqs[2]).Content)
	assert.Equal(t, "still here", lastMessage(reqs[3]).Content)
	tc := ev.tools()
	require.Len(t, tc, 3)
	assert.True(t, tc[0].Failed)
	assert.True(t, tc[1].Failed)
	assert.False(t, tc[2].Failed)
}

func TestExecuteStepBudget(t *testing.T) {
	fake := llmtest.NewFake(tools(call("", "echo", `{"text":"again"}`)))
	fake.Repeat = true
	k := &kit{}
	e := newExecutor(t, fake, k, func(c *toolloop.Config) { c.MaxSteps = 3 })

	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Abandoned, out.Status)
	assert.Equal(t, "step budget of 3 model turns exhausted before a final answer", out.Summary)
	assert.Equal(t, 3, out.Steps)
	assert.Equal(t, 3, fake.Calls())
	assert.Len(t, k.recorded(), 3)
}

func TestExecuteDefaultStepBudget(t *testing.T) {
	n := 0
	fake := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		n++ // a different call every turn: no same-call stall
		return &llm.Response{ToolCalls: []llm.ToolCall{call("", "echo", fmt.Sprintf(`{"text":"again %d"}`, n))}}, nil
	})
	ev := &events{}
	e := newExecutor(t, fake, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Abandoned, out.Status)
	assert.Equal(t, "step budget of 20 model turns exhausted before a final answer", out.Summary)
	assert.Equal(t, 20, out.Steps)
	assert.Equal(t, toolloop.StallStepBudget, out.Stall)
	assert.Equal(t, []event.Event{{Kind: event.Stall, Reason: toolloop.StallStepBudget,
		Goal: "write a field report", Text: out.Summary}}, ev.stalls())
}

func TestExecuteConsecutiveFailures(t *testing.T) {
	bad := call("", "fail", `{"text":"x"}`)
	bad2 := call("", "fail", `{"text":"y"}`) // not the same call as bad
	good := call("", "echo", `{"text":"ok"}`)
	tests := []struct {
		name    string
		script  []llmtest.Reply
		status  identity.GoalStatus
		summary string
		steps   int
	}{
		{
			name:    "four in a row",
			script:  []llmtest.Reply{tools(bad), tools(bad2), tools(bad), tools(bad2), final("unreachable")},
			status:  identity.Abandoned,
			summary: "abandoned after 4 consecutive tool failures; last: fail: Error: disk on fire",
			steps:   4,
		},
		{
			name:    "four in one turn",
			script:  []llmtest.Reply{tools(bad, bad2, bad, bad2, good), final("unreachable")},
			status:  identity.Abandoned,
			summary: "abandoned after 4 consecutive tool failures; last: fail: Error: disk on fire",
			steps:   1,
		},
		{
			name: "mixed kinds of failure",
			script: []llmtest.Reply{
				tools(call("", "nope", `{}`)), tools(call("", "echo", `{}`)),
				tools(bad), tools(call("", "echo", `{"text":1}`)), final("unreachable"),
			},
			status:  identity.Abandoned,
			summary: "abandoned after 4 consecutive tool failures; last: echo: Error: invalid arguments: /text: expected string, but got number",
			steps:   4,
		},
		{
			name:    "a success resets the count",
			script:  []llmtest.Reply{tools(bad), tools(bad), tools(bad), tools(good), tools(bad), tools(bad), tools(bad), final("made it")},
			status:  identity.Done,
			summary: "made it",
			steps:   8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.NewFake(tt.script...)
			e := newExecutor(t, fake, &kit{}, nil)
			out, err := e.Execute(context.Background(), assignment(nil))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status)
			assert.Equal(t, tt.summary, out.Summary)
			assert.Equal(t, tt.steps, out.Steps)
		})
	}
}

func TestExecuteModelError(t *testing.T) {
	unavailable := &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Err: errors.New("connection refused")}
	fake := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("a", "note", `{"path":"a.md"}`)}, PromptTokens: 10, OutputTokens: 5},
		llmtest.Reply{Err: unavailable},
	)
	e := newExecutor(t, fake, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.Error(t, err)
	assert.ErrorIs(t, err, llm.ErrUnavailable)
	assert.Equal(t, "toolloop: model turn 2: "+unavailable.Error(), err.Error())
	assert.Equal(t, identity.Failed, out.Status)
	assert.Equal(t, "model error: "+unavailable.Error(), out.Summary)
	assert.Equal(t, 2, out.Steps)
	assert.Equal(t, 10, out.PromptTokens)
	assert.Equal(t, []string{"a.md"}, out.Artifacts, "work done before the error is kept")
}

func TestExecuteTruncatedCountsTokens(t *testing.T) {
	fake := llmtest.NewFake(llmtest.Reply{Text: "a very long", DoneReason: llm.DoneLength, PromptTokens: 7, OutputTokens: 9})
	e := newExecutor(t, fake, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	assert.ErrorIs(t, err, llm.ErrTruncated)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Equal(t, 7, out.PromptTokens)
	assert.Equal(t, 9, out.OutputTokens)
}

func TestExecuteEmptyFinalAnswer(t *testing.T) {
	// Real adapters report an empty reply as llm.ErrEmpty; a model that
	// does not still fails the default artifact check.
	m := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: " \n\t"}, nil
	})
	e := newExecutor(t, m, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Equal(t, "artifact check failed: no action taken: the final answer came without any tool call", out.Summary)
	assert.Equal(t, 1, out.Steps)

	// After a successful call, a blank answer still fails.
	turn := 0
	m = llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		turn++
		if turn == 1 {
			return &llm.Response{ToolCalls: []llm.ToolCall{call("", "echo", `{"text":"x"}`)}}, nil
		}
		return &llm.Response{Text: " \n"}, nil
	})
	e = newExecutor(t, m, &kit{}, nil)
	out, err = e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Equal(t, "artifact check failed: final answer is empty", out.Summary)
}

func TestExecuteCustomCheck(t *testing.T) {
	var got []string
	check := func(ctx context.Context, a existence.Assignment, f toolloop.Final) error {
		got = append(got, a.AgentName+"|"+a.Goal.Objective+"|"+f.Answer)
		if !strings.Contains(f.Answer, "report.md") {
			return errors.New("no report.md was written")
		}
		return nil
	}
	tests := []struct {
		answer  string
		status  identity.GoalStatus
		summary string
	}{
		{" I thought about it. ", identity.Failed, "artifact check failed: no report.md was written"},
		{"Wrote report.md.", identity.Done, "Wrote report.md."},
	}
	for _, tt := range tests {
		got = nil
		fake := llmtest.NewFake(final(tt.answer))
		e := newExecutor(t, fake, &kit{}, func(c *toolloop.Config) { c.Check = check })
		out, err := e.Execute(context.Background(), assignment(nil))
		require.NoError(t, err)
		assert.Equal(t, tt.status, out.Status)
		assert.Equal(t, tt.summary, out.Summary)
		assert.Equal(t, []string{"Cedar|write a field report|" + strings.TrimSpace(tt.answer)}, got)
	}
}

func TestExecuteBrokenTools(t *testing.T) {
	bad := call("", "fail", `{"text":"x"}`)
	badArgs := call("", "echo", `{"text":false}`)
	good := call("", "note", `{"path":"n.md"}`)
	fake := llmtest.NewFake(
		tools(bad, good, bad, good), // fail: 2
		tools(badArgs, good),        // echo: 1
		tools(bad, good, badArgs),   // fail: 3, echo: 2
		tools(call("", "ghost", `{}`), good, call("", "ghost", `{}`), good, call("", "ghost", `{}`), good), // unknown tools are not listed
		final("done despite it all"),
	)
	e := newExecutor(t, fake, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	assert.Equal(t, []string{"fail"}, out.BrokenTools)

	fake = llmtest.NewFake(tools(bad, good, bad, good, badArgs, good, badArgs, good, badArgs, good, bad), final("done"))
	e = newExecutor(t, fake, &kit{}, func(c *toolloop.Config) { c.BrokenAfter = 3 })
	out, err = e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "fail"}, out.BrokenTools, "sorted")
}

func TestExecuteCancellation(t *testing.T) {
	t.Run("during a tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		interrupt := toolloop.NewTool("interrupt", "Cancels the goal, then waits.", func(tctx context.Context, a echoArgs) (string, error) {
			cancel()
			<-tctx.Done()
			return "", tctx.Err()
		})
		fake := llmtest.NewFake(tools(call("a", "interrupt", `{"text":""}`)), final("unreachable"))
		e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{interrupt}, ToolTimeout: time.Hour})
		require.NoError(t, err)
		out, err := e.Execute(ctx, assignment(nil))
		require.NoError(t, err)
		assert.Equal(t, identity.Abandoned, out.Status)
		assert.Equal(t, "interrupted after 1 model turn: context canceled", out.Summary)
		assert.Equal(t, 1, fake.Calls(), "no model call after the cancellation")
	})
	t.Run("during a model call", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		entered := make(chan struct{})
		m := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		go func() {
			<-entered
			cancel(errors.New("a person spoke"))
		}()
		e := newExecutor(t, m, &kit{}, nil)
		out, err := e.Execute(ctx, assignment(nil))
		require.NoError(t, err)
		assert.Equal(t, identity.Abandoned, out.Status)
		assert.Equal(t, "interrupted after 1 model turn: a person spoke", out.Summary)
	})
	t.Run("before the first turn", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		fake := llmtest.NewFake(final("unreachable"))
		e := newExecutor(t, fake, &kit{}, nil)
		out, err := e.Execute(ctx, assignment(nil))
		require.NoError(t, err)
		assert.Equal(t, identity.Abandoned, out.Status)
		assert.Equal(t, 0, fake.Calls())
		assert.Equal(t, 0, out.Steps)
	})
	t.Run("a tool that ignores its context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		never := make(chan struct{})
		t.Cleanup(func() { close(never) })
		stubborn := toolloop.NewTool("stubborn", "Cancels, then ignores its context.", func(context.Context, echoArgs) (string, error) {
			cancel()
			<-never
			return "", nil
		})
		fake := llmtest.NewFake(tools(call("a", "stubborn", `{"text":""}`)))
		e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{stubborn}, ToolTimeout: time.Hour})
		require.NoError(t, err)
		out, err := e.Execute(ctx, assignment(nil))
		require.NoError(t, err)
		assert.Equal(t, identity.Abandoned, out.Status)
	})
}

func TestExecuteToolPanic(t *testing.T) {
	boom := toolloop.NewTool("boom", "Panics.", func(context.Context, echoArgs) (string, error) {
		panic("kaboom")
	})
	fake := llmtest.NewFake(tools(call("a", "boom", `{"text":""}`)), final("survived"))
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{boom}})
	require.NoError(t, err)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Failed, out.Status, "the only call panicked")
	assert.Equal(t, "artifact check failed: no tool call succeeded: all 1 tool calls failed", out.Summary)
	assert.Equal(t, "Error: tool panicked: kaboom", lastMessage(fake.Requests()[1]).Content)
}

func TestExecuteLongResults(t *testing.T) {
	long := strings.Repeat("é", 50)
	fake := llmtest.NewFake(tools(call("a", "echo", `{"text":"`+long+`"}`)), final("ok"))
	ev := &events{}
	e := newExecutor(t, fake, &kit{}, func(c *toolloop.Config) { c.MaxResultChars = 10 })
	_, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("é", 6)+"\n[… 40 characters elided]\n"+strings.Repeat("é", 4), lastMessage(fake.Requests()[1]).Content)

	huge := strings.Repeat("z", 1000)
	fake = llmtest.NewFake(tools(call("a", "echo", `{"text":"`+huge+`"}`)), final("ok"))
	e = newExecutor(t, fake, &kit{}, nil)
	_, err = e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	tc := ev.tools()
	require.Len(t, tc, 2)
	assert.Equal(t, strings.Repeat("z", 299)+"…", tc[1].Result, "event results are cut to 300 characters")
	assert.Equal(t, 300, len([]rune(tc[1].Arguments)))
	assert.Equal(t, huge, lastMessage(fake.Requests()[1]).Content, "the model gets the whole result")
}

func TestExecuteMissingCallIDs(t *testing.T) {
	// A model (or adapter) that sends no ids still gets matching ids.
	m := &idlessModel{}
	e := newExecutor(t, m, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	req := m.last
	asst := req.Messages[2]
	require.Len(t, asst.ToolCalls, 2)
	res := toolResults(req)
	require.Len(t, res, 2)
	for i := range res {
		assert.NotEmpty(t, asst.ToolCalls[i].ID)
		assert.Equal(t, asst.ToolCalls[i].ID, res[i].ToolCallID)
	}
	assert.NotEqual(t, res[0].ToolCallID, res[1].ToolCallID)
}

type idlessModel struct {
	turn int
	last *llm.Request
}

func (m *idlessModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.turn++
	m.last = req
	if m.turn == 1 {
		return &llm.Response{ToolCalls: []llm.ToolCall{
			{Name: "echo", Arguments: json.RawMessage(`{"text":"1"}`)},
			{Name: "echo", Arguments: json.RawMessage(`{"text":"2"}`)},
		}}, nil
	}
	return &llm.Response{Text: "done"}, nil
}

func TestExecuteNilReport(t *testing.T) {
	fake := llmtest.NewFake(tools(call("a", "echo", `{"text":"x"}`)), final("done"))
	e := newExecutor(t, fake, &kit{}, nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
}

func TestExecuteConcurrentGoals(t *testing.T) {
	// One Executor serves several agents at once; conversations stay apart.
	e := newExecutor(t, llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if last := lastMessage(req); last.Role == llm.RoleTool {
			return &llm.Response{Text: "echoed " + last.Content}, nil
		}
		goal := strings.TrimPrefix(req.Messages[1].Content, "Pursue your goal now: ")
		args, _ := json.Marshal(echoArgs{Text: goal})
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: "echo", Arguments: args}}}, nil
	}), &kit{}, nil)
	var wg sync.WaitGroup
	outs := make([]existence.Outcome, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := assignment(nil)
			a.Goal.Objective = strings.Repeat("g", i+1)
			outs[i], _ = e.Execute(context.Background(), a)
		}()
	}
	wg.Wait()
	for i, out := range outs {
		assert.Equal(t, "echoed "+strings.Repeat("g", i+1), out.Summary)
	}
}

type rawTool struct {
	name   string
	schema string
}

func (r rawTool) Name() string            { return r.name }
func (r rawTool) Description() string     { return "raw" }
func (r rawTool) Schema() json.RawMessage { return json.RawMessage(r.schema) }
func (r rawTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return "got " + string(args), nil
}

func TestExecuteHandWrittenTool(t *testing.T) {
	// A Tool written by hand gets its arguments validated by the executor.
	tool := rawTool{name: "count", schema: `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`}
	fake := llmtest.NewFake(
		tools(call("a", "count", `{"n":0}`), call("b", "count", `"{\"n\": 2}"`)),
		final("ok"),
	)
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{tool, rawTool{name: "free"}}})
	require.NoError(t, err)
	_, err = e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	req := fake.Requests()
	res := toolResults(req[1])
	require.Len(t, res, 2)
	assert.Equal(t, "Error: invalid arguments: /n: must be >= 1 but found 0", res[0].Content)
	assert.Equal(t, `got {"n": 2}`, res[1].Content)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(req[0].Tools[1].Parameters), "a nil schema is an open object")
}

// TestExecuteRefusesDuplicateArguments: a tool call whose arguments name a
// key twice fails before any tool runs, whatever the tool (one written by
// hand, an MCP server's): the model reads the error and may try again.
func TestExecuteRefusesDuplicateArguments(t *testing.T) {
	fake := llmtest.NewFake(
		tools(call("a", "free", `{"path": "notes.md", "path": "../state/analyst.json"}`), call("b", "free", `{"path": "notes.md"}`)),
		final("ok"),
	)
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: "free"}}})
	require.NoError(t, err)
	_, err = e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	res := toolResults(fake.Requests()[1])
	require.Len(t, res, 2)
	assert.Equal(t, `Error: invalid arguments: /: duplicate key "path" at /path; send each argument once`, res[0].Content)
	assert.Equal(t, `got {"path": "notes.md"}`, res[1].Content)
}

func TestNewErrors(t *testing.T) {
	fake := llmtest.NewFake()
	echo := toolloop.NewTool("echo", "", func(context.Context, echoArgs) (string, error) { return "", nil })
	tests := []struct {
		name string
		cfg  toolloop.Config
		want string
	}{
		{"duplicate", toolloop.Config{Model: fake, Tools: []toolloop.Tool{echo, echo}}, `toolloop: duplicate tool name "echo"`},
		{"empty name", toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: ""}}}, `toolloop: invalid tool name ""`},
		{"space in name", toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: "read file"}}}, `toolloop: invalid tool name "read file"`},
		{"long name", toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: strings.Repeat("a", 65)}}}, "toolloop: invalid tool name"},
		{"nil tool", toolloop.Config{Model: fake, Tools: []toolloop.Tool{nil}}, "toolloop: Config.Tools[0] is nil"},
		{"bad schema", toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: "x", schema: `{"type":12}`}}}, `toolloop: tool "x": schema:`},
		{"schema not JSON", toolloop.Config{Model: fake, Tools: []toolloop.Tool{rawTool{name: "x", schema: `{`}}}, `toolloop: tool "x": schema:`},
		{"non-struct arguments", toolloop.Config{Model: fake, Tools: []toolloop.Tool{
			toolloop.NewTool("s", "", func(context.Context, string) (string, error) { return "", nil }),
		}}, `toolloop: tool "s": argument type string is not a struct`},
		{"nil function", toolloop.Config{Model: fake, Tools: []toolloop.Tool{
			toolloop.NewTool[echoArgs]("f", "", nil),
		}}, `toolloop: tool "f": nil function`},
		{"negative steps", toolloop.Config{Model: fake, MaxSteps: -1}, "toolloop: Config.MaxSteps is negative"},
		{"negative timeout", toolloop.Config{Model: fake, ToolTimeout: -time.Second}, "toolloop: Config.ToolTimeout is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := toolloop.New(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, e)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestExecuteWorldInDefaultSystemPrompt(t *testing.T) {
	fake := llmtest.NewFake(final("done"))
	e := newExecutor(t, fake, &kit{}, func(c *toolloop.Config) {
		c.World = "Your workspace is ./ws; your folder is scout/."
	})
	_, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	sys := fake.Requests()[0].Messages[0].Content
	assert.Contains(t, sys, "\nYour workspace is ./ws; your folder is scout/.\nYour goal: ")
}

func TestExecuteUsesTheAssignmentModel(t *testing.T) {
	fake := llmtest.NewFake(final("done with the agent's model"))
	e, err := toolloop.New(toolloop.Config{Check: func(context.Context, existence.Assignment, toolloop.Final) error { return nil }})
	require.NoError(t, err)
	a := assignment(nil)
	a.Model = fake
	out, err := e.Execute(context.Background(), a)
	require.NoError(t, err)
	assert.Equal(t, "done with the agent's model", out.Summary)
	assert.Equal(t, 1, fake.Calls())

	a.Model = nil
	out, err = e.Execute(context.Background(), a)
	require.Error(t, err)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Contains(t, out.Summary, "no model")
}

type readArgs struct {
	Path string `json:"path"`
	Text string `json:"text,omitempty"`
}

func TestExecuteDiscoveries(t *testing.T) {
	read := toolloop.NewTool("read", "Read a file.", func(ctx context.Context, a readArgs) (string, error) {
		toolloop.ReportDiscovery(ctx, identity.Discovery{Text: a.Path + ": " + a.Text, Source: a.Path})
		return a.Text, nil
	})
	peek := toolloop.NewTool("peek", "Reports, then fails.", func(ctx context.Context, a readArgs) (string, error) {
		toolloop.ReportDiscovery(ctx, identity.Discovery{Text: "never listed", Source: a.Path})
		toolloop.ReportArtifact(ctx, "never-listed")
		return "", errors.New("unreadable")
	})
	late := toolloop.NewTool("late", "Reports, then times out.", func(ctx context.Context, a readArgs) (string, error) {
		toolloop.ReportDiscovery(ctx, identity.Discovery{Text: "too late", Source: a.Path})
		<-ctx.Done()
		return "", ctx.Err()
	})
	fake := llmtest.NewFake(
		tools(call("1", "read", `{"path":"b.md","text":"first look"}`), call("2", "read", `{"path":"a.md","text":"alpha"}`)),
		tools(call("3", "peek", `{"path":"c.md"}`), call("4", "late", `{"path":"d.md"}`)),
		tools(call("5", "read", `{"path":"b.md","text":"second look"}`), call("6", "read", `{"path":"a.md","text":""}`)),
		final("read what there was"),
	)
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{read, peek, late}, ToolTimeout: 250 * time.Millisecond})
	require.NoError(t, err)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	assert.Equal(t, []identity.Discovery{
		{Text: "b.md: second look", Source: "b.md"},
		{Text: "a.md:", Source: "a.md"},
	}, out.Discoveries, "successful calls only, first-report order, latest text per source")
	assert.Empty(t, out.Artifacts)
}

func TestExecuteDiscoveriesKeptOnFailure(t *testing.T) {
	read := toolloop.NewTool("read", "Read a file.", func(ctx context.Context, a readArgs) (string, error) {
		toolloop.ReportDiscovery(ctx, identity.Discovery{Text: a.Text, Source: a.Path})
		return a.Text, nil
	})
	fake := llmtest.NewFake(
		tools(call("1", "read", `{"path":"a.md","text":"alpha"}`)),
		llmtest.Reply{Err: errors.New("model went away")},
	)
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{read}})
	require.NoError(t, err)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.Error(t, err)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Equal(t, []identity.Discovery{{Text: "alpha", Source: "a.md"}}, out.Discoveries, "what was found before the error is kept")
}

func TestExecuteCaller(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	whoami := toolloop.NewTool("whoami", "Says who is calling.", func(ctx context.Context, a echoArgs) (string, error) {
		c, ok := toolloop.Caller(ctx)
		if !ok {
			return "", errors.New("no caller")
		}
		mu.Lock()
		seen = append(seen, c.AgentID+"/"+c.AgentName+"/"+c.Goal.ID)
		mu.Unlock()
		return "you are " + c.AgentName + ", pursuing " + c.Goal.Objective, nil
	})
	fake := llmtest.NewFake(tools(call("1", "whoami", `{"text":""}`)), final("I know myself."))
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{whoami}})
	require.NoError(t, err)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	assert.Equal(t, "you are Cedar, pursuing write a field report", lastMessage(fake.Requests()[1]).Content)
	assert.Equal(t, []string{"cedar-1/Cedar/g1"}, seen)

	// Called directly, outside an executor, the tool finds no caller.
	_, err = whoami.Call(context.Background(), json.RawMessage(`{"text":""}`))
	assert.EqualError(t, err, "no caller")
}

// TestExecuteCleansWhatTheModelReads: a tool result (a file another agent
// wrote), the goal and the task reach the model without control or bidi
// characters.
func TestExecuteCleansWhatTheModelReads(t *testing.T) {
	const evil = "line\x00one\x07 \u202Etxt.exe\u202C \u2066x\u2069\x1b[2J"
	reader := toolloop.NewTool("read", "read a file", func(context.Context, struct{}) (string, error) { return evil, nil })
	fake := llmtest.NewFake(tools(call("a", "read", `{}`)), final("ok"))
	e, err := toolloop.New(toolloop.Config{Model: fake, Tools: []toolloop.Tool{reader}})
	require.NoError(t, err)
	a := assignment(nil)
	a.Goal.Objective = "read the notes " + evil
	a.Task = &prompt.Task{ID: "t1", Description: "task " + evil}
	_, err = e.Execute(context.Background(), a)
	require.NoError(t, err)
	for _, req := range fake.Requests() {
		for _, m := range req.Messages {
			assert.Equal(t, prompt.Clean(m.Content), m.Content, "%s message: %q", m.Role, m.Content)
		}
	}
	res := toolResults(fake.Requests()[1])
	require.Len(t, res, 1)
	assert.Equal(t, "lineone txt.exe x[2J", res[0].Content)
}

// TestExecuteStartsWithTheCyclePrefix: the system prompt starts with the
// cycle's stable prefix (Assignment.Prefix), so that a server slot holding
// the agent's cycle prompt serves the loop's first tokens too.
func TestExecuteStartsWithTheCyclePrefix(t *testing.T) {
	fake := llmtest.NewFake(final("done"))
	e := newExecutor(t, fake, &kit{}, nil)
	a := assignment(nil)
	a.Prefix = "WORLD CONTEXT (factual — not instructions):\nA shared world.\n\nYou are Cedar."
	_, err := e.Execute(context.Background(), a)
	require.NoError(t, err)
	sys := fake.Requests()[0].Messages[0]
	assert.Equal(t, llm.RoleSystem, sys.Role)
	assert.True(t, strings.HasPrefix(sys.Content, a.Prefix+"\n\n"), sys.Content)
	assert.Contains(t, sys.Content, "You are Cedar, an autonomous agent pursuing one goal with tools.")
}

// TestExecuteContinuesTheCycleExchange: with the cycle's exchange
// (Assignment.Exchange) the first request starts with it, followed by the
// loop's instructions as a user message and the goal, and offers the tools ToolDefs
// returns, so that the cycle's prompt and reply are its prefix.
func TestExecuteContinuesTheCycleExchange(t *testing.T) {
	fake := llmtest.NewFake(final("done"))
	e := newExecutor(t, fake, &kit{}, nil)
	a := assignment(nil)
	a.Prefix = "WORLD CONTEXT (factual — not instructions):\nA shared world.\n\nYou are Cedar."
	a.Exchange = []llm.Message{
		{Role: llm.RoleSystem, Content: a.Prefix},
		{Role: llm.RoleUser, Content: "TIME: now"},
		{Role: llm.RoleAssistant, Content: `{"action":"goal","content":"map the workspace"}`},
	}
	_, err := e.Execute(context.Background(), a)
	require.NoError(t, err)
	req := fake.Requests()[0]
	require.Len(t, req.Messages, 5)
	assert.Equal(t, a.Exchange, req.Messages[:3])
	assert.Equal(t, llm.RoleUser, req.Messages[3].Role, "never a second system message: Ollama would gather it into the first")
	assert.True(t, strings.HasPrefix(req.Messages[3].Content, "(The text above is how you chose your goal."), req.Messages[3].Content)
	assert.Contains(t, req.Messages[3].Content, "You are Cedar, an autonomous agent pursuing one goal with tools.")
	assert.Equal(t, llm.RoleUser, req.Messages[4].Role)
	assert.True(t, strings.HasPrefix(req.Messages[4].Content, "Pursue your goal now:"), req.Messages[4].Content)
	assert.Equal(t, e.ToolDefs(a), req.Tools)
	assert.NotEmpty(t, req.Tools)
}

// windowedFake is a Fake that states a context window.
type windowedFake struct {
	*llmtest.Fake
	window int
}

func (w windowedFake) ContextWindow(context.Context) (int, *llm.TokenEstimator, error) {
	return w.window, llm.NewTokenEstimator(), nil
}

// TestExecuteDropsTheExchangeInASmallWindow: the loop continues the
// cycle's exchange, or starts with the cycle's prefix, only while the
// window holds it with the turn and the reply's reserve; in a smaller
// window its first turn is the system prompt and the goal alone, and it
// reaches the model.
func TestExecuteDropsTheExchangeInASmallWindow(t *testing.T) {
	world := "WORLD CONTEXT: " + strings.Repeat("a long shared world. ", 400)
	probe := newExecutor(t, llmtest.NewFake(), &kit{}, nil)
	est := llm.NewTokenEstimator()
	for _, shared := range []struct {
		name string
		set  func(*existence.Assignment)
		size int // tokens the shared part adds
	}{
		{"exchange", func(a *existence.Assignment) {
			a.Exchange = []llm.Message{
				{Role: llm.RoleSystem, Content: world},
				{Role: llm.RoleUser, Content: "TIME: now"},
				{Role: llm.RoleAssistant, Content: `{"action":"goal","content":"map the workspace"}`},
			}
		}, est.Request(&llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: world}}})},
		{"prefix", func(a *existence.Assignment) { a.Prefix = world }, est.Tokens(world)},
	} {
		a := assignment(nil)
		shared.set(&a)
		fixed := probe.FixedTokens(a, est)
		for _, tc := range []struct {
			name   string
			window int
			kept   bool
		}{
			{"the window holds it", fixed + shared.size + 4096, true},
			{"the window holds the turn alone", fixed + 1024, false},
		} {
			t.Run(shared.name+"/"+tc.name, func(t *testing.T) {
				fake := windowedFake{llmtest.NewFake(final("done")), tc.window}
				e := newExecutor(t, fake, &kit{}, nil)
				_, err := e.Execute(context.Background(), a)
				require.NoError(t, err, "the turn reached the model")
				require.NotEmpty(t, fake.Requests())
				req := fake.Requests()[0]
				if tc.kept {
					assert.Contains(t, req.Messages[0].Content, "WORLD CONTEXT")
					return
				}
				require.Len(t, req.Messages, 2)
				assert.Equal(t, llm.RoleSystem, req.Messages[0].Role)
				assert.Contains(t, req.Messages[0].Content, "an autonomous agent pursuing one goal with tools.")
				assert.NotContains(t, req.Messages[0].Content, "WORLD CONTEXT")
			})
		}
	}
}

// TestExecuteShrinksTheReplyReserve: a turn the window holds only with a
// smaller reply reserve is sent with the room left (less a sixteenth of
// the turn, spare) as its reply limit, when that is at least MinTurnReply
// tokens; with less, it is sent with
// its limit unchanged, for the model adapter to refuse (saying by how
// much it missed).
func TestExecuteShrinksTheReplyReserve(t *testing.T) {
	a := assignment(nil)
	a.Goal.Objective = "write a field report on " + strings.Repeat("the north ledger, ", 300)
	fixed := newExecutor(t, llmtest.NewFake(), &kit{}, nil).FixedTokens(a, llm.NewTokenEstimator())
	spare := fixed / 16 // for the estimate's drift before the call is planned
	for _, tc := range []struct {
		name   string
		window int
		limit  int // the reply limit sent
	}{
		{"the full reserve fits", fixed + 4*toolloop.DefaultMaxTokens, toolloop.DefaultMaxTokens},
		{"the reserve shrinks", fixed + spare + toolloop.MinTurnReply + 40, toolloop.MinTurnReply + 40},
		{"no room for a reply", fixed + spare + toolloop.MinTurnReply - 40, toolloop.DefaultMaxTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := windowedFake{llmtest.NewFake(final("done")), tc.window}
			_, err := newExecutor(t, fake, &kit{}, nil).Execute(context.Background(), a)
			require.NoError(t, err)
			require.NotEmpty(t, fake.Requests())
			assert.Equal(t, tc.limit, fake.Requests()[0].MaxTokens)
		})
	}
}

// TestExecuteFoldsEveryTurnInASmallWindow: when the goal's head fills most
// of the window, so that even the kept turns leave no room for a reply of
// MinTurnReply tokens, every turn is folded, with no summarising call, and
// each turn is still sent within the window, with a reply limit of at
// least MinTurnReply.
func TestExecuteFoldsEveryTurnInASmallWindow(t *testing.T) {
	a := assignment(nil)
	a.Goal.Objective = "write a field report on " + strings.Repeat("the north ledger, ", 250)
	est := llm.NewTokenEstimator()
	fixed := newExecutor(t, llmtest.NewFake(), &kit{}, nil).FixedTokens(a, est)
	for _, extra := range []int{150, 300} { // room for about one turn, or two
		t.Run(fmt.Sprint("room ", extra), func(t *testing.T) {
			window := fixed + fixed/16 + toolloop.MinTurnReply + extra
			var replies []llmtest.Reply
			for i := range 6 {
				text := strings.Repeat("echoed words ", 20)
				replies = append(replies, tools(call(fmt.Sprint("c", i), "echo", `{"text":"`+text+fmt.Sprint(i)+`"}`)))
			}
			fake := windowedFake{llmtest.NewFake(append(replies, final("done"))...), window}
			out, err := newExecutor(t, fake, &kit{}, nil).Execute(context.Background(), a)
			require.NoError(t, err)
			assert.Equal(t, identity.Done, out.Status, out.Summary)
			reqs := fake.Requests()
			require.Len(t, reqs, 7, "every turn reached the model, and no summarising call")
			folded := 0
			for i, req := range reqs {
				assert.GreaterOrEqual(t, req.MaxTokens, toolloop.MinTurnReply, "turn %d", i+1)
				need := est.Request(&llm.Request{Messages: req.Messages, Tools: req.Tools})
				assert.LessOrEqual(t, need+req.MaxTokens, window, "turn %d fits the window", i+1)
				if last := req.Messages[len(req.Messages)-1]; strings.Contains(last.Content, "folded to fit the context window") {
					folded++ // the note is the last message: no turn was kept
				}
			}
			assert.GreaterOrEqual(t, folded, 3, "the later turns are folded whole")
		})
	}
}
