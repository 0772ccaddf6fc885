package toolloop_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/suffering"
)

// TestExecuteEvidence: a goal is DONE only after a successful tool call
// (only observable behaviour counts, spec §4); the summary says why it
// is not.
func TestExecuteEvidence(t *testing.T) {
	good := call("", "echo", `{"text":"hi"}`)
	bad := call("", "fail", `{"text":"x"}`)
	tests := []struct {
		name    string
		script  []llmtest.Reply
		status  identity.GoalStatus
		summary string
		wantErr error
	}{
		{"no tool call", []llmtest.Reply{final("I reflected deeply and it is done.")},
			identity.Failed, "artifact check failed: no action taken: the final answer came without any tool call", toolloop.ErrNoAction},
		{"only failed calls", []llmtest.Reply{tools(bad), tools(call("", "ghost", `{}`)), final("Done, all good.")},
			identity.Failed, "artifact check failed: no tool call succeeded: all 2 tool calls failed", toolloop.ErrNoSuccess},
		{"a failure then a success", []llmtest.Reply{tools(bad), tools(good), final("Echoed.")},
			identity.Done, "Echoed.", nil},
		{"a success then failures", []llmtest.Reply{tools(good, bad, bad), final("Partly.")},
			identity.Done, "Partly.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen toolloop.Final
			var checkErr error
			e := newExecutor(t, llmtest.NewFake(tt.script...), &kit{}, func(c *toolloop.Config) {
				c.Check = func(ctx context.Context, a existence.Assignment, f toolloop.Final) error {
					seen = f
					checkErr = toolloop.RequireEvidence(ctx, a, f)
					return checkErr
				}
			})
			out, err := e.Execute(context.Background(), assignment(nil))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status)
			assert.Equal(t, tt.summary, out.Summary)
			assert.Empty(t, out.Stall)
			if tt.wantErr != nil {
				assert.ErrorIs(t, checkErr, tt.wantErr)
			} else {
				assert.NoError(t, checkErr)
			}
			assert.Equal(t, strings.TrimSpace(tt.script[len(tt.script)-1].Text), seen.Answer)
		})
	}

	// The default check is RequireEvidence.
	out, err := newExecutor(t, llmtest.NewFake(final("words only")), &kit{}, nil).Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, identity.Failed, out.Status)
	assert.Contains(t, out.Summary, "no action taken")
}

// TestFinalCarriesEvidence: the check sees the counts, artifacts and
// discoveries of the goal.
func TestFinalCarriesEvidence(t *testing.T) {
	var seen toolloop.Final
	fake := llmtest.NewFake(tools(call("", "note", `{"path":"a.md"}`), call("", "fail", `{"text":"x"}`)), final("wrote a.md"))
	e := newExecutor(t, fake, &kit{}, func(c *toolloop.Config) {
		c.Check = func(_ context.Context, _ existence.Assignment, f toolloop.Final) error { seen = f; return nil }
	})
	_, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	assert.Equal(t, toolloop.Final{Answer: "wrote a.md", Calls: 2, Succeeded: 1, Artifacts: []string{"a.md"}}, seen)
}

// TestExecuteSameCallStall: the same tool call 4 times in a row abandons
// the goal (the original's "same capability 4 times in a row").
func TestExecuteSameCallStall(t *testing.T) {
	same := call("", "echo", `{"text":"again"}`)
	reordered := call("", "note", `{"path":"p.md","content":"c"}`)
	reordered2 := call("", "note", ` { "content" : "c", "path" : "p.md" } `)
	tests := []struct {
		name    string
		script  []llmtest.Reply
		max     int
		status  identity.GoalStatus
		stall   string
		summary string
		ran     int // tool calls actually run
	}{
		{"four turns", []llmtest.Reply{tools(same), tools(same), tools(same), tools(same), final("x")}, 0,
			identity.Abandoned, toolloop.StallSameCall,
			`abandoned: the same tool call was made 4 times in a row: echo {"text":"again"}`, 3},
		{"four in one turn", []llmtest.Reply{tools(same, same, same, same), final("x")}, 0,
			identity.Abandoned, toolloop.StallSameCall,
			`abandoned: the same tool call was made 4 times in a row: echo {"text":"again"}`, 3},
		{"same JSON value, other spelling", []llmtest.Reply{tools(reordered, reordered2), tools(reordered2, reordered), final("x")}, 0,
			identity.Abandoned, toolloop.StallSameCall,
			`abandoned: the same tool call was made 4 times in a row: note ` + string(reordered.Arguments), 3},
		{"three then another call", []llmtest.Reply{tools(same, same, same), tools(call("", "echo", `{"text":"new"}`)), tools(same), final("fine")}, 0,
			identity.Done, "", "fine", 5},
		{"configured to 2", []llmtest.Reply{tools(same), tools(same), final("x")}, 2,
			identity.Abandoned, toolloop.StallSameCall,
			`abandoned: the same tool call was made 2 times in a row: echo {"text":"again"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &kit{}
			ev := &events{}
			e := newExecutor(t, llmtest.NewFake(tt.script...), k, func(c *toolloop.Config) { c.MaxSameCalls = tt.max })
			out, err := e.Execute(context.Background(), assignment(ev))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status)
			assert.Equal(t, tt.stall, out.Stall)
			assert.Equal(t, tt.summary, out.Summary)
			assert.Len(t, k.recorded(), tt.ran, "the last repeat is not run")
			if tt.stall == "" {
				assert.Empty(t, ev.stalls())
				return
			}
			assert.Equal(t, []event.Event{{Kind: event.Stall, Reason: tt.stall, Goal: "write a field report", Text: tt.summary}}, ev.stalls())
		})
	}
}

// TestExecuteNoProgressStall: consecutive failures name their rule.
func TestExecuteNoProgressStall(t *testing.T) {
	var script []llmtest.Reply
	for i := range 4 {
		script = append(script, tools(call("", "fail", fmt.Sprintf(`{"text":"%d"}`, i))))
	}
	ev := &events{}
	out, err := newExecutor(t, llmtest.NewFake(script...), &kit{}, nil).Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Abandoned, out.Status)
	assert.Equal(t, toolloop.StallNoProgress, out.Stall)
	require.Len(t, ev.stalls(), 1)
	assert.Equal(t, toolloop.StallNoProgress, ev.stalls()[0].Reason)
}

// TestExecuteInterruptIsNoStall: an interrupted goal names no stall rule.
func TestExecuteInterruptIsNoStall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev := &events{}
	out, err := newExecutor(t, llmtest.NewFake(final("x")), &kit{}, nil).Execute(ctx, assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Abandoned, out.Status)
	assert.Empty(t, out.Stall)
	assert.Empty(t, ev.stalls())
}

func TestNewRefusesNegativeMaxSameCalls(t *testing.T) {
	_, err := toolloop.New(toolloop.Config{MaxSameCalls: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaxSameCalls")
}

// hollowRun drives an agent whose executor model behaves as script says
// for every goal, through goals cycles, and returns the agent's active
// stressor types and the goal statuses.
func hollowRun(t *testing.T, goals int, exec llm.Model) ([]string, []identity.GoalStatus) {
	t.Helper()
	var cycle []llmtest.Reply
	for i := range goals {
		cycle = append(cycle, llmtest.Reply{Text: fmt.Sprintf(`{"action":"goal","content":"goal number %d about topic %c","reasoning":"r"}`, i, 'a'+i)})
	}
	clock := existencetest.NewClock(time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC))
	k := &kit{}
	e, err := toolloop.New(toolloop.Config{Tools: k.tools()})
	require.NoError(t, err)
	a, err := existence.New(context.Background(), existence.Config{
		ID: "scout", Name: "Cedar", Model: llmtest.NewFake(cycle...), Calls: existence.CallConfig{
			ExecutorModel: exec,
			Retry:         middleware.RetryPolicy{Attempts: 1},
		},
		Executor: e, Timing: existence.TimingConfig{Clock: clock}, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	for range goals {
		require.NoError(t, a.Tick(ctx))
		require.NoError(t, a.WaitGoal(ctx))
		clock.Advance(6 * time.Second)
	}
	// One more heartbeat collects the last outcome and assesses; the
	// cycle it starts has no scripted reply and falls back.
	require.NoError(t, a.Tick(ctx))
	st := a.State()
	var types []string
	for _, s := range st.Suffering.Active {
		types = append(types, s.Type)
	}
	var statuses []identity.GoalStatus
	for _, g := range st.Identity.Goals[:goals] {
		statuses = append(statuses, g.Status)
	}
	return types, statuses
}

// TestHollowGoalsRaiseStressors: goals that only talk, or write files that
// nothing uses while going round in circles, raise repeated_failure and
// futility by the spec §4 rules; goals that act do not.
func TestHollowGoalsRaiseStressors(t *testing.T) {
	talker := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "I have resolved this by thinking about it."}, nil
	})
	// circler writes 3 files nobody reads, then lists the same thing until
	// the same-call rule abandons the goal.
	circler := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		goal := req.Messages[1].Content
		turn := 0
		for _, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				turn++
			}
		}
		if turn < 3 {
			return &llm.Response{ToolCalls: []llm.ToolCall{call("", "note", fmt.Sprintf(`{"path":"%x-%d.md"}`, goal, turn))}}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{call("", "echo", `{"text":"listing again"}`)}}, nil
	})
	doer := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages) == 2 {
			return &llm.Response{ToolCalls: []llm.ToolCall{call("", "echo", `{"text":"work"}`)}}, nil
		}
		return &llm.Response{Text: "did the work"}, nil
	})

	tests := []struct {
		name     string
		exec     llm.Model
		stressor []string
		status   identity.GoalStatus
	}{
		{"talk only", talker, []string{suffering.RepeatedFailure}, identity.Failed},
		{"circling over unused files", circler, []string{suffering.RepeatedFailure, suffering.Futility}, identity.Abandoned},
		{"real work", doer, nil, identity.Done},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			types, statuses := hollowRun(t, 4, tt.exec)
			assert.Equal(t, tt.stressor, types)
			for _, s := range statuses {
				assert.Equal(t, tt.status, s)
			}
		})
	}
}

// TestEvidenceWritesThatAllFailed: with a workspace that refuses every
// write (here its quota; a read-only directory does the same), a goal that
// listed files and then failed to write is not DONE, however its answer
// reads: its one write failed. One successful write, after a failed one,
// is enough.
func TestEvidenceWritesThatAllFailed(t *testing.T) {
	big := `{"path":"notes/report.md","content":"` + strings.Repeat("x", 200) + `"}`
	small := `{"path":"notes/report.md","content":"ok"}`
	tests := []struct {
		name    string
		script  []llmtest.Reply
		status  identity.GoalStatus
		summary string
	}{
		{"listed, then every write failed", []llmtest.Reply{
			tools(call("", "list_files", `{}`)), tools(call("", "write_file", big)), tools(call("", "append_file", big)), final("Wrote the report."),
		}, identity.Failed, "artifact check failed: every write failed: all 2 calls of tools that write failed; the last: \"notes/report.md\": workspace quota exceeded"},
		{"a failed write, then a successful one", []llmtest.Reply{
			tools(call("", "list_files", `{}`)), tools(call("", "write_file", big)), tools(call("", "write_file", small)), final("Wrote the report."),
		}, identity.Done, "Wrote the report."},
		{"reading only, no write tried", []llmtest.Reply{
			tools(call("", "list_files", `{}`)), final("Looked around."),
		}, identity.Done, "Looked around."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := workspace.Open(t.TempDir(), workspace.Limits{Quota: 16})
			require.NoError(t, err)
			t.Cleanup(func() { ws.Close() })
			e, err := toolloop.New(toolloop.Config{Model: llmtest.NewFake(tt.script...), Tools: ws.Tools()})
			require.NoError(t, err)
			out, err := e.Execute(context.Background(), assignment(nil))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status)
			assert.True(t, strings.HasPrefix(out.Summary, tt.summary), "summary %q", out.Summary)
		})
	}
	// The check sees the counts.
	err := toolloop.RequireEvidence(context.Background(), existence.Assignment{},
		toolloop.Final{Answer: "done", Calls: 3, Succeeded: 1, Writes: 2, LastWriteError: "read-only file system"})
	require.ErrorIs(t, err, toolloop.ErrNoWrite)
	assert.Contains(t, err.Error(), "the last: read-only file system")
}

// TestToolDescriptionsCleaned: a tool's description, which may come from
// outside, reaches the model's tool definitions without unsafe code
// points (cleaned once, at New).
func TestToolDescriptionsCleaned(t *testing.T) {
	tool := toolloop.NewTool("look", "Look\u202Eup\U000E0049 things.\u200B", func(context.Context, echoArgs) (string, error) { return "", nil })
	e, err := toolloop.New(toolloop.Config{Model: llmtest.NewFake(), Tools: []toolloop.Tool{tool}, NoMemoryTools: true})
	require.NoError(t, err)
	defs := e.ToolDefs(existence.Assignment{})
	require.Len(t, defs, 1)
	assert.Equal(t, "Lookup things.", defs[0].Description)
}
