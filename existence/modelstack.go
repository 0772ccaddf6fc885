package existence

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/pool"
	"github.com/existence-loop/sdk/prompt"
)

// modelUse is what one of an agent's model stacks serves; it picks the
// stack's options.
type modelUse int

const (
	useCycle    modelUse = iota // a cycle's reply: parsed, and repaired unless Config.Calls.NoRepair
	useStep                     // the steps of a Config.Calls.Cycle: not repaired
	useExecutor                 // an executor's calls: held while a token budget is spent
)

// buildModels builds the agent's model stacks from Config.Model and
// exec (the executor's model): the cycle's (and, for cycles run in a
// runner's lanes, the same without the runner's limiter: the lanes bound
// those cycles, so that a hung model holds one worker only, and the
// limiter bounds the calls made outside them, runner.Config.MaxInFlight),
// the steps' of a Config.Calls.Cycle, and the executor's.
func (a *Agent) buildModels(exec llm.Model) {
	a.model = a.modelStack(a.cfg.Model, useCycle, a.wire.Limiter)
	if a.wire.Lanes {
		a.laneModel = a.modelStack(a.cfg.Model, useCycle, nil)
	}
	if a.cfg.Calls.Cycle != nil {
		a.buildStepModels()
	}
	a.execModel = a.modelStack(exec, useExecutor, a.wire.Limiter)
}

// buildStepModels builds the stacks a Config.Calls.Cycle's steps call through.
func (a *Agent) buildStepModels() {
	a.stepModel = a.modelStack(a.cfg.Model, useStep, a.wire.Limiter)
	if a.wire.Lanes {
		a.laneStepModel = a.modelStack(a.cfg.Model, useStep, nil)
	}
}

// modelStack wraps m in the one decorator stack of a model call
// ([middleware.Stack]), outermost first: the budget's hold (executor
// calls), repair (cycle replies), the call's context (the agent's id for
// a pool, the priority lane's mark), retry, the limiter l (nil: none),
// the per-attempt timeout, the agent's observer (an [event.ModelCall] per
// attempt), the trace and the runner's meter.
func (a *Agent) modelStack(m llm.Model, use modelUse, l *middleware.Limiter) llm.Model {
	purpose := event.PurposeCycle
	cfg := middleware.StackConfig{
		Context: a.callContext,
		Retry:   a.cfg.Calls.Retry,
		Limiter: l,
		Timeout: a.cfg.Timing.CallTimeout,
		Trace:   middleware.TraceConfig{Provider: a.cfg.TracerProvider, Attributes: a.agentAttrs(), Content: a.cfg.TraceContent},
		Now:     a.cfg.Timing.Clock.Now,
	}
	if a.wire.Meter != nil {
		cfg.Meter = meterFunc(a.wire.Meter)
	}
	switch use {
	case useCycle:
		if !a.cfg.Calls.NoRepair {
			cfg.Repair = parseReply
		}
	case useExecutor:
		purpose = event.PurposeExecutor
		if a.budget != nil || a.wire.Shared != nil {
			cfg.Admit = a.admitBudget
		}
	}
	cfg.Observe = func(ctx context.Context, at middleware.Attempt) { a.observeAttempt(ctx, at, purpose) }
	return middleware.Stack(m, cfg)
}

// callContext marks every call of an agent's model stack with the agent's
// id ([pool.WithAgent]: a [pool.Pool] pins the agent to one server by it)
// and the calls made for the priority lane (a cycle it dispatched, or the
// executor of a goal such a cycle chose) with [middleware.WithPriority],
// so that retry waits little after a 503 rather than the 10 s meant to
// relieve a loaded server.
func (a *Agent) callContext(ctx context.Context) context.Context {
	if pool.AgentFrom(ctx) == "" {
		ctx = pool.WithAgent(ctx, a.cfg.ID)
	}
	if l, ok := callLane(ctx); ok && l == wire.LanePriority {
		ctx = middleware.WithPriority(ctx)
	}
	return ctx
}

// observeAttempt reports one attempt to the agent: an [event.ModelCall]
// with the attempt's tokens (the server's counts, else estimates), which
// the agent counts in its usage and against its budgets.
func (a *Agent) observeAttempt(ctx context.Context, at middleware.Attempt, purpose string) {
	c := &event.ModelCallInfo{
		Model:           at.Model,
		Duration:        at.Duration,
		Outcome:         at.Outcome,
		Purpose:         purpose,
		PromptTokens:    at.PromptTokens,
		OutputTokens:    at.OutputTokens,
		PromptEstimated: at.PromptEstimated,
		OutputEstimated: at.OutputEstimated,
	}
	if l, ok := callLane(ctx); ok {
		c.Lane = l.String()
	}
	a.onAttempt(c, at.Err)
}

// admitBudget holds an executor's model call while a budget is spent.
func (a *Agent) admitBudget(ctx context.Context) error {
	if err := a.waitBudget(ctx); err != nil {
		return fmt.Errorf("existence: waiting for the token budget to refill: %w", err)
	}
	return nil
}

// parseReply parses a cycle's reply for the repair middleware, which
// returns the parsed value with the reply (llm.Response.Parsed): a reply
// is validated and parsed once.
func parseReply(text string) (any, error) { return prompt.ParseResponse(text) }

// meterFunc is the runner's meter as a [middleware.Meter].
type meterFunc func(m llm.Model, now func() time.Time) llm.Model

// Observe wraps m in the meter.
func (f meterFunc) Observe(m llm.Model, now func() time.Time) llm.Model { return f(m, now) }
