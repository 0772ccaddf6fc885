package toolloop

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/llm"
)

// TracerName is the instrumentation scope of the execute_tool spans.
const TracerName = "github.com/existence-loop/sdk/existence/toolloop"

// startToolSpan starts the execute_tool span of tool call c, a child of
// the goal's span in ctx, made by that span's TracerProvider (no span when
// the goal is not traced): gen_ai.operation.name "execute_tool",
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type "function", and
// the agent's gen_ai.agent.id and gen_ai.agent.name; with
// [existence.Assignment].TraceContent also gen_ai.tool.call.arguments and,
// when it ends, gen_ai.tool.call.result.
func startToolSpan(ctx context.Context, a existence.Assignment, c llm.ToolCall) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	ctx, span := parent.TracerProvider().Tracer(TracerName).Start(ctx, "execute_tool "+c.Name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(c.Name),
			semconv.GenAIToolCallID(c.ID),
			semconv.GenAIToolTypeKey.String("function"),
			semconv.GenAIAgentID(a.AgentID),
			semconv.GenAIAgentName(a.AgentName),
		))
	if a.TraceContent {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(c.Arguments)))
	}
	return ctx, span
}

// endToolSpan ends a tool call's span with its result.
func endToolSpan(span trace.Span, a existence.Assignment, result string, failed bool) {
	if !span.IsRecording() {
		return
	}
	if a.TraceContent {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(result))
	}
	if failed {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, result)
	}
	span.End()
}
