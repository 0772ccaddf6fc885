package existence

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
)

// tracerName is the instrumentation scope of the agent's spans.
const tracerName = "github.com/existence-loop/sdk/existence"

// Attributes of the agent's spans beyond the GenAI semantic conventions;
// [Config].TracerProvider lists them.
const (
	// attrPhase is "cycle" on an existence cycle's span and "goal" on a
	// goal's.
	attrPhase = attribute.Key("existence.phase")
	// attrLane is the scheduler lane of a cycle ("autonomy", "priority").
	attrLane = attribute.Key("existence.lane")
	// attrGoalID is the goal's id; attrGoalStatus how it ended (DONE,
	// FAILED, ABANDONED); attrFallback marks a cycle that used the
	// spec §6 fallback goal, and attrFallbackCause its class.
	attrGoalID        = attribute.Key("existence.goal.id")
	attrGoalStatus    = attribute.Key("existence.goal.status")
	attrFallback      = attribute.Key("existence.fallback")
	attrFallbackCause = attribute.Key("existence.fallback.cause")
	// attrGoal is the goal's text, only with [Config].TraceContent.
	attrGoal = attribute.Key("existence.goal")
)

// Span phases (attrPhase).
const (
	phaseCycle = "cycle"
	phaseGoal  = "goal"
)

// agentAttrs are the attributes every span of the agent carries: its id
// and name (gen_ai.agent.id, gen_ai.agent.name).
func (a *Agent) agentAttrs() []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIAgentID(a.cfg.ID), semconv.GenAIAgentName(a.Name())}
}

// startSpan starts an invoke_agent span of the phase, a child of the span
// in ctx; without a TracerProvider it returns ctx and a span that records
// nothing.
func (a *Agent) startSpan(ctx context.Context, phase string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span
	}
	attrs = append(append([]attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, attrPhase.String(phase)}, a.agentAttrs()...), attrs...)
	return a.tracer.Start(ctx, "invoke_agent "+a.Name(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endCycleSpan ends a cycle's span with what the cycle did.
func (a *Agent) endCycleSpan(span trace.Span, stats *event.CycleStats, cause string, cerr error, g *identity.Goal) {
	if !span.IsRecording() {
		span.End()
		return
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIUsageInputTokens(stats.PromptTokens),
		semconv.GenAIUsageOutputTokens(stats.OutputTokens),
		attrFallback.Bool(stats.Fallback),
	}
	if stats.Lane != "" {
		attrs = append(attrs, attrLane.String(stats.Lane))
	}
	if g != nil {
		attrs = append(attrs, attrGoalID.String(g.ID))
		if a.cfg.TraceContent {
			attrs = append(attrs, attrGoal.String(g.Objective))
		}
	}
	if cerr != nil {
		attrs = append(attrs, attrFallbackCause.String(cause), semconv.ErrorTypeKey.String(cause))
		span.SetStatus(codes.Error, cerr.Error())
	}
	span.SetAttributes(attrs...)
	span.End()
}

// endGoalSpan ends a goal's span with its outcome.
func endGoalSpan(span trace.Span, out Outcome, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(
		attrGoalStatus.String(string(out.Status)),
		semconv.GenAIUsageInputTokens(out.PromptTokens),
		semconv.GenAIUsageOutputTokens(out.OutputTokens),
	)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	} else if out.Status != identity.Done {
		span.SetStatus(codes.Error, string(out.Status)+": "+out.Summary)
	}
	span.End()
}
