package existence

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
)

// CycleStrategy produces an existence cycle's reply in place of the one
// model call on the existence prompt ([Config].Calls.Cycle): a workflow of
// steps (package existence/workflow). Whatever it does, its reply is
// applied as the model's would be (spec §3), and an error makes the cycle
// take the spec §6 fallback goal, identity untouched, with an
// [event.Fallback] naming the cause ([middleware.Classify] of the error,
// "invalid_output" for a reply that does not parse).
type CycleStrategy interface {
	// Reply returns the cycle's reply. It must return when ctx ends.
	Reply(ctx context.Context, req *CycleRequest) (*prompt.Response, error)
}

// CycleRequest is what a [CycleStrategy] gets for one cycle.
type CycleRequest struct {
	// AgentID and AgentName are the agent's id and display name.
	AgentID, AgentName string
	// Cycle is the number of this cycle among those the agent ran since
	// [New], from 1.
	Cycle int
	// Prompt is the existence prompt assembled for this cycle.
	Prompt *prompt.Prompt
	// State is a copy of the agent's state as the cycle started.
	State *identity.AgentState
	// Model is the agent's cycle model, without the repair follow-up:
	// observed (an [event.ModelCall] per attempt, its tokens in the usage
	// and against the budgets), traced, time-limited and retried as the
	// existence cycle's, and bounded by the agent's lane.
	Model llm.Model
	// Temperature, Seed and MaxTokens are the agent's ([Config]).
	Temperature *float64
	Seed        *int
	MaxTokens   int
	// Report emits an event of the agent (its AgentID, Agent and Time
	// are filled in), such as an [event.Step].
	Report func(event.Event)
	// Span starts a span named name, a child of ctx's (the cycle's), with
	// the agent's attributes; end ends it with err's status. Without a
	// TracerProvider it records nothing.
	Span func(ctx context.Context, name string) (sctx context.Context, end func(err error))
}

// strategyReply runs the configured CycleStrategy; its failures are
// classified as generate's.
func (a *Agent) strategyReply(ctx context.Context, p *prompt.Prompt) (*prompt.Response, string, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timing.CycleTimeout)
	defer cancel()
	a.prefix.Store(nil)
	a.exchange.Store(nil)
	a.mu.Lock()
	st := a.state.Clone()
	n := a.cycles + 1
	a.mu.Unlock()
	m := a.stepModel
	if a.laneStepModel != nil && wire.DispatchFrom(ctx) != nil {
		m = a.laneStepModel
	}
	req := &CycleRequest{
		AgentID: a.cfg.ID, AgentName: a.Name(), Cycle: n, Prompt: p, State: st, Model: m,
		Temperature: a.cfg.Calls.Temperature, Seed: a.cfg.Calls.Seed, MaxTokens: a.cfg.Calls.MaxTokens,
		Report: a.emit,
		Span: func(ctx context.Context, name string) (context.Context, func(error)) {
			if a.tracer == nil {
				return ctx, func(error) {}
			}
			ctx, span := a.tracer.Start(ctx, "workflow_step "+name, trace.WithSpanKind(trace.SpanKindInternal),
				trace.WithAttributes(append(a.agentAttrs(), attribute.String("existence.step", name))...))
			return ctx, func(err error) {
				if err != nil {
					span.SetStatus(codes.Error, err.Error())
				}
				span.End()
			}
		},
	}
	r, err := a.cfg.Calls.Cycle.Reply(ctx, req)
	if err != nil {
		var pe *prompt.ParseError
		if errors.As(err, &pe) {
			return nil, middleware.OutcomeInvalidOutput, err
		}
		return nil, middleware.Classify(err), err
	}
	if r == nil {
		return nil, middleware.OutcomeInvalidOutput, errors.New("existence: the cycle strategy returned no reply")
	}
	return r, "", nil
}
