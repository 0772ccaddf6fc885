package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// traceCycle runs one existence cycle whose goal makes one tool call,
// with spans recorded, and returns the ended spans.
func traceCycle(t *testing.T, content bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	count := toolloop.NewTool("count_words", "Count the words of a text.",
		func(ctx context.Context, a countArgs) (string, error) {
			return fmt.Sprint(len(strings.Fields(a.Text))), nil
		})
	model := llmtest.NewFake(
		llmtest.Reply{Text: `{"action":"goal","content":"count the words of a famous line","reasoning":"r"}`, PromptTokens: 900, OutputTokens: 40},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "count_words", Arguments: json.RawMessage(`{"text":"to be or not to be"}`)}}, PromptTokens: 300, OutputTokens: 12},
		llmtest.Reply{Text: "The line has 6 words.", PromptTokens: 330, OutputTokens: 8},
	)
	exec, err := toolloop.New(toolloop.Config{Tools: []toolloop.Tool{count}})
	require.NoError(t, err)
	a, err := existence.New(context.Background(), existence.Config{ID: "analyst", Name: "Cipher", Model: model, Executor: exec,
		TracerProvider: tp, TraceContent: content, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	require.NoError(t, a.Tick(context.Background()))
	require.NoError(t, a.WaitGoal(context.Background()))
	require.NoError(t, tp.ForceFlush(context.Background()))
	return exp.GetSpans().Snapshots()
}

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpanTreeOfACycleWithAToolCall pins the span tree of one cycle: the
// cycle's invoke_agent span with its chat span, and the goal's
// invoke_agent span under it with the executor's two chat spans and the
// execute_tool span; every span names the agent, and no prompt text is
// recorded unless asked for.
func TestSpanTreeOfACycleWithAToolCall(t *testing.T) {
	spans := traceCycle(t, false)
	require.Len(t, spans, 6)
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	var lines []string
	for _, s := range spans {
		a := attrsOf(s)
		parent := "-"
		if p, ok := byID[s.Parent().SpanID().String()]; ok {
			parent = p.Name() + "/" + p.Attributes()[1].Value.String()
		}
		phase := a[attribute.Key("existence.phase")].AsString()
		lines = append(lines, fmt.Sprintf("%s [%s] <- %s", s.Name(), phase, parent))
		assert.Equal(t, "analyst", a["gen_ai.agent.id"].AsString(), s.Name())
		assert.Equal(t, "Cipher", a["gen_ai.agent.name"].AsString(), s.Name())
		assert.Equal(t, spans[0].SpanContext().TraceID(), s.SpanContext().TraceID(), "one trace")
		for k := range a {
			assert.NotContains(t, []attribute.Key{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", attribute.Key("existence.goal")}, k, "no content by default")
		}
	}
	assert.ElementsMatch(t, []string{
		"chat fake [] <- invoke_agent Cipher/cycle",
		"invoke_agent Cipher [cycle] <- -",
		"chat fake [] <- invoke_agent Cipher/goal",
		"execute_tool count_words [] <- invoke_agent Cipher/goal",
		"chat fake [] <- invoke_agent Cipher/goal",
		"invoke_agent Cipher [goal] <- invoke_agent Cipher/cycle",
	}, lines)

	find := func(name, phase string) map[attribute.Key]attribute.Value {
		for _, s := range spans {
			if a := attrsOf(s); s.Name() == name && a[attribute.Key("existence.phase")].AsString() == phase {
				return a
			}
		}
		t.Fatalf("no span %s [%s]", name, phase)
		return nil
	}
	cyc := find("invoke_agent Cipher", "cycle")
	assert.Equal(t, "invoke_agent", cyc["gen_ai.operation.name"].AsString())
	assert.Equal(t, int64(900), cyc["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, int64(40), cyc["gen_ai.usage.output_tokens"].AsInt64())
	assert.False(t, cyc[attribute.Key("existence.fallback")].AsBool())
	goal := find("invoke_agent Cipher", "goal")
	assert.Equal(t, "DONE", goal[attribute.Key("existence.goal.status")].AsString())
	assert.Equal(t, int64(630), goal["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, cyc[attribute.Key("existence.goal.id")], goal[attribute.Key("existence.goal.id")])
	tool := find("execute_tool count_words", "")
	assert.Equal(t, "execute_tool", tool["gen_ai.operation.name"].AsString())
	assert.Equal(t, "c1", tool["gen_ai.tool.call.id"].AsString())
	var chats []map[attribute.Key]attribute.Value
	for _, s := range spans {
		if s.Name() == "chat fake" {
			chats = append(chats, attrsOf(s))
			assert.Equal(t, codes.Unset, s.Status().Code)
		}
	}
	require.Len(t, chats, 3)
	var in, out []int64
	for _, c := range chats {
		assert.Equal(t, "chat", c["gen_ai.operation.name"].AsString())
		assert.Equal(t, "fake", c["gen_ai.response.model"].AsString(), "the fake names no model but in its replies")
		in, out = append(in, c["gen_ai.usage.input_tokens"].AsInt64()), append(out, c["gen_ai.usage.output_tokens"].AsInt64())
	}
	assert.ElementsMatch(t, []int64{900, 300, 330}, in)
	assert.ElementsMatch(t, []int64{40, 12, 8}, out)
}

func TestSpanContentOptIn(t *testing.T) {
	for _, s := range traceCycle(t, true) {
		a := attrsOf(s)
		switch {
		case strings.HasPrefix(s.Name(), "chat"):
			assert.Contains(t, a["gen_ai.input.messages"].AsString(), `"role":"user"`)
		case strings.HasPrefix(s.Name(), "execute_tool"):
			assert.JSONEq(t, `{"text":"to be or not to be"}`, a["gen_ai.tool.call.arguments"].AsString())
			assert.Equal(t, "6", a["gen_ai.tool.call.result"].AsString())
		default:
			assert.Equal(t, "count the words of a famous line", a[attribute.Key("existence.goal")].AsString())
		}
	}
}
