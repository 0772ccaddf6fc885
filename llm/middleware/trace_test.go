package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/pool"
)

// spanAttrs returns a span's attributes by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestTraceChatSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"a":1}`, PromptTokens: 120, OutputTokens: 7, DoneReason: llm.DoneStop},
		llmtest.Reply{Text: "no counts from this server"},
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503}},
	)
	m := middleware.Trace(fake, "qwen3.5:9b", middleware.TraceConfig{Provider: tp, Attributes: []attribute.KeyValue{attribute.String("gen_ai.agent.id", "scout")}})
	ctx, parent := tp.Tracer("test").Start(context.Background(), "cycle")
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "a secret prompt of some length"}}, MaxTokens: 64}
	_, err := m.Generate(ctx, req)
	require.NoError(t, err)
	_, err = m.Generate(ctx, req)
	require.NoError(t, err)
	_, err = m.Generate(ctx, req)
	require.Error(t, err)
	parent.End()

	spans := rec.Ended()
	require.Len(t, spans, 4)
	ok, est, failed := spans[0], spans[1], spans[2]
	assert.Equal(t, "chat qwen3.5:9b", ok.Name())
	assert.Equal(t, trace.SpanKindClient, ok.SpanKind())
	assert.Equal(t, parent.SpanContext().SpanID(), ok.Parent().SpanID(), "a child of the span in the context")
	a := spanAttrs(ok)
	assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "qwen3.5:9b", a["gen_ai.request.model"].AsString())
	assert.Equal(t, int64(64), a["gen_ai.request.max_tokens"].AsInt64())
	assert.Equal(t, int64(120), a["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, int64(7), a["gen_ai.usage.output_tokens"].AsInt64())
	assert.Equal(t, []string{"stop"}, a["gen_ai.response.finish_reasons"].AsStringSlice())
	assert.Equal(t, "scout", a["gen_ai.agent.id"].AsString())
	assert.False(t, a[middleware.AttrInputEstimated].AsBool())
	_, hasContent := a["gen_ai.input.messages"]
	assert.False(t, hasContent, "no prompt text unless asked for")

	e := spanAttrs(est)
	assert.True(t, e[middleware.AttrInputEstimated].AsBool())
	assert.True(t, e[middleware.AttrOutputEstimated].AsBool())
	assert.Equal(t, int64(llm.RawRequestTokens(req)), e["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, int64(llm.RawTokens("no counts from this server")), e["gen_ai.usage.output_tokens"].AsInt64())

	f := spanAttrs(failed)
	assert.Equal(t, "http_503", f["error.type"].AsString())
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Zero(t, f["gen_ai.usage.input_tokens"].AsInt64(), "a refused call used nothing")
}

func TestTraceContentOptIn(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	fake := llmtest.NewFake(llmtest.Reply{Text: "hello back"})
	m := middleware.Trace(fake, "", middleware.TraceConfig{Provider: tp, Content: true})
	_, err := m.Generate(context.Background(), &llm.Request{Model: "m1", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}})
	require.NoError(t, err)
	a := spanAttrs(rec.Ended()[0])
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"hello"}]}]`, a["gen_ai.input.messages"].AsString())
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"hello back"}],"finish_reason":"stop"}]`, a["gen_ai.output.messages"].AsString())
	assert.Equal(t, "chat m1", rec.Ended()[0].Name())

	assert.Same(t, fake, middleware.Trace(fake, "", middleware.TraceConfig{}), "no provider, no wrapper")
}

// located is a model that names its server ([middleware.Locator]).
type located struct {
	llm.Model
	url string
}

func (l located) URL() string       { return l.url }
func (l located) Unwrap() llm.Model { return l.Model }

func TestTraceOutputTypeAndServer(t *testing.T) {
	tests := []struct {
		name, url, format string
		want              map[attribute.Key]any // nil value: absent
	}{
		{name: "json, explicit port", url: "http://127.0.0.1:11434", format: `{"type":"object"}`,
			want: map[attribute.Key]any{"gen_ai.output.type": "json", "server.address": "127.0.0.1", "server.port": int64(11434)}},
		{name: "text, https default port", url: "https://api.example.com/v1",
			want: map[attribute.Key]any{"gen_ai.output.type": nil, "server.address": "api.example.com", "server.port": int64(443)}},
		{name: "no server known", want: map[attribute.Key]any{"server.address": nil, "server.port": nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			var m llm.Model = llmtest.NewFake(llmtest.Reply{Text: `{}`})
			if tc.url != "" {
				m = located{m, tc.url}
			}
			m = middleware.Trace(m, "m", middleware.TraceConfig{Provider: tp})
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
			if tc.format != "" {
				req.Format = []byte(tc.format)
			}
			_, err := m.Generate(t.Context(), req)
			require.NoError(t, err)
			a := spanAttrs(rec.Ended()[0])
			for k, want := range tc.want {
				got, ok := a[k]
				if want == nil {
					assert.False(t, ok, "%s set to %v", k, got.AsInterface())
					continue
				}
				assert.Equal(t, want, got.AsInterface(), k)
			}
		})
	}
}

// TestTracePoolServer: a span made above a pool names the server that
// answered, and takes server.address and server.port from it when its
// name is a URL; without a pool, the adapter's Locator gives them and no
// pool server is named.
func TestTracePoolServer(t *testing.T) {
	reply := func(text string) llm.Model {
		return llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
			return &llm.Response{Text: text, PromptTokens: 10, OutputTokens: 2}, nil
		})
	}
	p, err := pool.New(pool.Config{Servers: []pool.Server{
		{Name: "http://gpu-1:11434", Model: reply("one")},
		{Name: "https://gpu-2.example", Model: reply("two")},
		{Name: "spare", Model: reply("spare")},
	}})
	require.NoError(t, err)
	agentOn := func(server string) string { // an agent pinned to server
		for i := range 1000 {
			if id := fmt.Sprintf("agent-%d", i); p.Rank(id)[0] == server {
				return id
			}
		}
		t.Fatalf("no agent pinned to %s", server)
		return ""
	}
	tests := []struct {
		name    string
		model   llm.Model
		agent   string
		server  string // existence.pool.server; "" for none
		address string // server.address; "" for none
		port    int64
	}{
		{"pool server named by an http URL", p, agentOn("http://gpu-1:11434"), "http://gpu-1:11434", "gpu-1", 11434},
		{"https URL without a port", p, agentOn("https://gpu-2.example"), "https://gpu-2.example", "gpu-2.example", 443},
		{"pool server named otherwise", p, agentOn("spare"), "spare", "", 0},
		{"no pool: the adapter's Locator", located{reply("x"), "http://127.0.0.1:8080"}, "scout", "", "127.0.0.1", 8080},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			m := middleware.Trace(tt.model, "qwen3.5:9b", middleware.TraceConfig{Provider: tp})
			_, err := m.Generate(pool.WithAgent(context.Background(), tt.agent), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			require.NoError(t, err)
			require.Len(t, rec.Ended(), 1)
			a := spanAttrs(rec.Ended()[0])
			if tt.server == "" {
				assert.NotContains(t, a, middleware.AttrPoolServer)
			} else {
				assert.Equal(t, tt.server, a[middleware.AttrPoolServer].AsString())
			}
			if tt.address == "" {
				assert.NotContains(t, a, attribute.Key("server.address"))
				return
			}
			assert.Equal(t, tt.address, a["server.address"].AsString())
			assert.Equal(t, tt.port, a["server.port"].AsInt64())
		})
	}
}

// TestTracePoolServerOfAFailedCall: a call that failed names the server
// the pool tried last, the one whose error the call returned.
func TestTracePoolServerOfAFailedCall(t *testing.T) {
	fail := func(err error) llm.Model {
		return llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) { return nil, err })
	}
	tests := []struct {
		name   string
		first  error // the agent's own server's error
		second error // the other server's
		server string
		port   int64
	}{
		{"its own server refuses", errors.New("bad request"), nil, "http://gpu-1:11434", 11434},
		{"failover, then the other refuses", fmt.Errorf("down: %w", llm.ErrUnavailable), errors.New("bad request"), "http://gpu-2:8080", 8080},
		{"both unreachable", fmt.Errorf("down: %w", llm.ErrUnavailable), fmt.Errorf("down: %w", llm.ErrUnavailable), "http://gpu-2:8080", 8080},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pool.New(pool.Config{Servers: []pool.Server{
				{Name: "http://gpu-1:11434", Model: fail(tt.first)},
				{Name: "http://gpu-2:8080", Model: fail(tt.second)},
			}})
			require.NoError(t, err)
			agent := ""
			for i := range 1000 {
				if id := fmt.Sprintf("agent-%d", i); p.Rank(id)[0] == "http://gpu-1:11434" {
					agent = id
					break
				}
			}
			require.NotEmpty(t, agent)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			m := middleware.Trace(p, "qwen3.5:9b", middleware.TraceConfig{Provider: tp})
			_, err = m.Generate(pool.WithAgent(context.Background(), agent), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			require.Error(t, err)
			require.Len(t, rec.Ended(), 1)
			a := spanAttrs(rec.Ended()[0])
			assert.Equal(t, tt.server, a[middleware.AttrPoolServer].AsString())
			assert.Equal(t, tt.port, a["server.port"].AsInt64())
			assert.Contains(t, a, attribute.Key("error.type"))
		})
	}
}
