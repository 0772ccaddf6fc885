package middleware

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// Attempt describes one call through [Instrument]: one model call, so that cost
// and failure rates can be counted.
type Attempt struct {
	// Model is the name given to Instrument, else the request's Model, else the
	// name the response reports, else the name of the first model in the
	// wrapped chain that has one.
	Model string
	// Duration is the wall-clock time of the call.
	Duration time.Duration
	// PromptTokens and OutputTokens are the tokens the call used
	// ([UsageOf]): the provider's counts from the response, the partial
	// response of a [*llm.TruncatedError] or the reply to a prompt the server
	// cut ([*llm.ContextLengthError]); estimated when the provider reported
	// none (PromptEstimated, OutputEstimated); 0 for a call that got no
	// reply.
	PromptTokens, OutputTokens int
	// PromptEstimated and OutputEstimated report that the count is an
	// estimate, not the server's.
	PromptEstimated, OutputEstimated bool
	// Err is the call's error, nil on success.
	Err error
	// Outcome is Classify(Err): "ok", "timeout", "http_503", ...
	Outcome string
}

// Instrument returns a Model that reports every call of m to fn, after the call
// returns and before its result is passed on. name labels the attempts
// (Attempt.Model); it may be empty.
//
// Place Instrument innermost, directly around an adapter, to see every attempt
// made by [WithRetry] and every follow-up sent by [WithRepair]:
//
//	m := WithRepair(WithRetry(Instrument(adapter, "qwen3.5:9b", record), RetryPolicy{}), check)
//
// fn is called synchronously, from the goroutine that called Generate, so it
// must be quick and, if the model is shared, safe for concurrent use. A nil
// fn returns m unchanged.
func Instrument(m llm.Model, name string, fn func(Attempt)) llm.Model {
	if fn == nil {
		return m
	}
	return &observeModel{next: m, name: name, fn: fn, now: time.Now}
}

type observeModel struct {
	next  llm.Model
	name  string
	fn    func(Attempt)                        // Instrument's callback, or
	ctxFn func(ctx context.Context, a Attempt) // Stack's, with the call's context
	now   func() time.Time
}

var _ llm.Model = (*observeModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *observeModel) Unwrap() llm.Model { return x.next }

func (o *observeModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := o.now()
	resp, err := o.next.Generate(ctx, req)
	a := Attempt{
		Model:    o.name,
		Duration: o.now().Sub(start),
		Err:      err,
		Outcome:  Classify(err),
	}
	counted := RepliedTo(resp, err)
	u := UsageOf(ctx, o.next, req, resp, err)
	a.PromptTokens, a.OutputTokens = u.InputTokens, u.OutputTokens
	a.PromptEstimated, a.OutputEstimated = u.InputEstimated, u.OutputEstimated
	if a.Model == "" && req != nil {
		a.Model = req.Model
	}
	if a.Model == "" && counted != nil {
		a.Model = counted.Model
	}
	if a.Model == "" {
		a.Model = chainName(o.next)
	}
	if o.ctxFn != nil {
		o.ctxFn(ctx, a)
	} else {
		o.fn(a)
	}
	return resp, err
}

// Name returns the name given to [Instrument], else the wrapped model's name.
func (o *observeModel) Name() string {
	if o.name != "" {
		return o.name
	}
	return nameOf(o.next)
}
