package middleware

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/internal/callnote"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the spans [Trace] makes.
const TracerName = "github.com/existence-loop/sdk/llm"

// Attributes of the spans [Trace] makes beyond the GenAI semantic
// conventions: whether a usage count is an estimate (see [llm.Usage]).
const (
	AttrInputEstimated  = attribute.Key("existence.usage.input_estimated")
	AttrOutputEstimated = attribute.Key("existence.usage.output_estimated")
	// AttrPoolServer names the server of a [pool.Pool] that answered
	// ([llm.Response].Server).
	AttrPoolServer = attribute.Key("existence.pool.server")
)

// TraceConfig configures [Trace].
type TraceConfig struct {
	// Provider makes the spans; nil makes Trace return the model
	// unchanged (no tracing, no cost). Pass otel.GetTracerProvider() to
	// use the global one.
	Provider trace.TracerProvider
	// Attributes are set on every span, for example the agent's
	// gen_ai.agent.id and gen_ai.agent.name.
	Attributes []attribute.KeyValue
	// Content records the conversation on each span: the request's
	// messages as gen_ai.input.messages and the reply as
	// gen_ai.output.messages (JSON, as the GenAI semantic conventions
	// shape them). Off by default: prompts hold what the agents know.
	Content bool
}

// Providerer is implemented by adapters that name their provider, for
// the gen_ai.provider.name attribute: "ollama", "openai".
type Providerer interface {
	Provider() string
}

// Locator is implemented by adapters that reach a model server over
// HTTP, for the server.address and server.port attributes: URL returns
// the server's base URL, e.g. "http://127.0.0.1:11434".
type Locator interface {
	URL() string
}

// Trace returns a Model that makes one span per call of m, following the
// OpenTelemetry GenAI semantic conventions: named "chat {model}", of kind
// client, child of the span in the call's context, with
// gen_ai.operation.name "chat", gen_ai.provider.name (when an adapter in
// the chain is a [Providerer]), gen_ai.request.model (name, else the
// request's Model, else the name of a model in the chain; when none is
// known, the span is named after the model the reply names), gen_ai.request.max_tokens,
// temperature and seed when set, gen_ai.output.type "json" when the
// request has a Format (structured output), server.address and
// server.port (when an adapter in the chain is a [Locator]; the port
// defaults to the scheme's; below a [pool.Pool], from the reply's
// [llm.Response].Server when it is a URL, with existence.pool.server naming
// that server; for a call that failed, the server the pool tried last),
// gen_ai.response.model,
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens ([UsageOf]:
// the server's counts, else estimates, flagged by
// existence.usage.input_estimated and existence.usage.output_estimated),
// gen_ai.response.finish_reasons, and on failure error.type (the
// [Classify] class) with an error status. Place it innermost, next to
// [Instrument], so that each retry is a span of its own.
func Trace(m llm.Model, name string, cfg TraceConfig) llm.Model {
	if cfg.Provider == nil {
		return m
	}
	return &traceModel{next: m, name: name, cfg: cfg, tracer: cfg.Provider.Tracer(TracerName)}
}

type traceModel struct {
	next   llm.Model
	name   string
	cfg    TraceConfig
	tracer trace.Tracer
}

var _ llm.Model = (*traceModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *traceModel) Unwrap() llm.Model { return x.next }

// Name returns the name given to [Trace], else the wrapped model's name.
func (x *traceModel) Name() string {
	if x.name != "" {
		return x.name
	}
	return nameOf(x.next)
}

func (x *traceModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	model := x.name
	if model == "" && req != nil {
		model = req.Model
	}
	if model == "" {
		model = chainName(x.next)
	}
	attrs := append([]attribute.KeyValue{semconv.GenAIOperationNameChat}, x.cfg.Attributes...)
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if p := providerOf(x.next); p != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(p))
	}
	attrs = append(attrs, serverOf(x.next)...)
	if req != nil {
		if req.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req.Temperature != nil {
			attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
		}
		if req.Seed != nil {
			attrs = append(attrs, semconv.GenAIRequestSeed(*req.Seed))
		}
		if len(req.Format) > 0 {
			attrs = append(attrs, semconv.GenAIOutputTypeJSON)
		}
		if x.cfg.Content {
			attrs = append(attrs, semconv.GenAIInputMessagesKey.String(inputMessages(req.Messages)))
		}
	}
	ctx, span := x.tracer.Start(ctx, strings.TrimSpace("chat "+model), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	ctx, note := callnote.With(ctx)
	resp, err := x.next.Generate(ctx, req)
	u := UsageOf(ctx, x.next, req, resp, err)
	out := []attribute.KeyValue{
		semconv.GenAIUsageInputTokens(u.InputTokens),
		semconv.GenAIUsageOutputTokens(u.OutputTokens),
		AttrInputEstimated.Bool(u.InputEstimated),
		AttrOutputEstimated.Bool(u.OutputEstimated),
	}
	if r := RepliedTo(resp, err); r != nil {
		if r.Model != "" {
			out = append(out, semconv.GenAIResponseModel(r.Model))
			if model == "" {
				span.SetName("chat " + r.Model)
			}
		}
		if r.DoneReason != "" {
			out = append(out, semconv.GenAIResponseFinishReasons(r.DoneReason))
		}
		if r.Server != "" {
			out = append(out, AttrPoolServer.String(r.Server))
			out = append(out, addressOf(r.Server)...)
		}
		if x.cfg.Content {
			out = append(out, semconv.GenAIOutputMessagesKey.String(outputMessages(r)))
		}
	}
	if r := RepliedTo(resp, err); (r == nil || r.Server == "") && note.Last() != "" {
		out = append(out, AttrPoolServer.String(note.Last())) // a failed call: the server the pool tried last
		out = append(out, addressOf(note.Last())...)
	}
	if err != nil {
		out = append(out, semconv.ErrorTypeKey.String(Classify(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.SetAttributes(out...)
	return resp, err
}

// chainName returns the name of the first model in the chain below m
// that has one, or "".
func chainName(m llm.Model) string {
	for range 32 {
		if n := nameOf(m); n != "" {
			return n
		}
		u, ok := m.(llm.Unwrapper)
		if !ok {
			return ""
		}
		m = u.Unwrap()
	}
	return ""
}

// providerOf returns the provider's name from the first [Providerer] in
// the chain below m, or "".
func providerOf(m llm.Model) string {
	for range 32 {
		if p, ok := m.(Providerer); ok {
			return p.Provider()
		}
		u, ok := m.(llm.Unwrapper)
		if !ok {
			return ""
		}
		m = u.Unwrap()
	}
	return ""
}

// serverOf returns server.address and server.port from the first
// [Locator] in the chain below m, or nothing.
func serverOf(m llm.Model) []attribute.KeyValue {
	for range 32 {
		if l, ok := m.(Locator); ok {
			return addressOf(l.URL())
		}
		u, ok := m.(llm.Unwrapper)
		if !ok {
			return nil
		}
		m = u.Unwrap()
	}
	return nil
}

// addressOf returns server.address and server.port of a base URL
// ("http://gpu-1:11434"; the port defaults to the scheme's), or nothing
// when it is not a URL with a host.
func addressOf(base string) []attribute.KeyValue {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	return []attribute.KeyValue{semconv.ServerAddress(u.Hostname()), semconv.ServerPort(port)}
}

// chatPart and chatMessage are the JSON shape of gen_ai.input.messages
// and gen_ai.output.messages.
type chatPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type chatMessage struct {
	Role         llm.Role   `json:"role"`
	Parts        []chatPart `json:"parts"`
	FinishReason string     `json:"finish_reason,omitempty"`
}

func partsOf(text string, calls []llm.ToolCall) []chatPart {
	parts := []chatPart{}
	if text != "" {
		parts = append(parts, chatPart{Type: "text", Content: text})
	}
	for _, c := range calls {
		parts = append(parts, chatPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return parts
}

func inputMessages(msgs []llm.Message) string {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		cm := chatMessage{Role: m.Role, Parts: partsOf(m.Content, m.ToolCalls)}
		if m.Role == llm.RoleTool {
			cm.Parts = []chatPart{{Type: "tool_call_response", ID: m.ToolCallID, Content: m.Content}}
		}
		out = append(out, cm)
	}
	b, _ := json.Marshal(out) // plain strings and raw JSON: never fails
	return string(b)
}

func outputMessages(r *llm.Response) string {
	b, _ := json.Marshal([]chatMessage{{Role: llm.RoleAssistant, Parts: partsOf(r.Text, r.ToolCalls), FinishReason: r.DoneReason}})
	return string(b)
}
