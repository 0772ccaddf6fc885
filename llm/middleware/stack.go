package middleware

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// Meter measures every attempt of the model it wraps, directly around
// the adapter (so that the latency is the server's and each retry is a
// sample of its own); now is its clock (nil: time.Now). [*AdaptiveLimit]
// is one.
type Meter interface {
	Observe(m llm.Model, now func() time.Time) llm.Model
}

var _ Meter = (*AdaptiveLimit)(nil)

// StackConfig configures [Stack]. The zero value gives retry with the
// default policy and the default per-attempt timeout, and nothing else.
type StackConfig struct {
	// Admit, when set, is called before a call enters the stack (for
	// example to wait while a token budget is spent); its error fails the
	// call, returned as is, and the model is not called.
	Admit func(ctx context.Context) error
	// Repair, when set, validates and parses a reply ([WithRepairParse]):
	// a reply it rejects gets one repair follow-up. Nil: no repair.
	Repair func(text string) (any, error)
	// Context, when set, prepares the context of every call before retry
	// sees it: for example it names the agent (pool.WithAgent) and marks
	// a call that answers someone ([WithPriority]), so that retry waits
	// little ([RetryPolicy].WaitPriority) and a pool pins the agent.
	Context func(ctx context.Context) context.Context
	// Retry is the retry policy ([WithRetry]); the zero value is the
	// default one.
	Retry RetryPolicy
	// Limiter, when set, bounds the calls in flight ([Limiter.Limit]):
	// inside retry, so that no slot is held while waiting to retry, and
	// outside the timeout and the observer, so that the wait for a slot
	// counts neither against the timeout nor in an attempt's duration.
	Limiter *Limiter
	// Timeout limits each attempt ([WithTimeout]); 0 means
	// [DefaultTimeout] (180 s).
	Timeout time.Duration
	// Observe, when set, is called after every attempt (each retry and
	// each repair follow-up is one) with the attempt's context and
	// [Attempt] (as [Instrument] reports it), synchronously: it must be
	// quick and safe for concurrent use when the model is shared.
	Observe func(ctx context.Context, a Attempt)
	// Trace, when its Provider is set, makes a span per attempt ([Trace]).
	Trace TraceConfig
	// Meter, when set, measures every attempt directly around m (for
	// example an [*AdaptiveLimit]); Now is its clock (nil: time.Now).
	Meter Meter
	Now   func() time.Time
}

// Stack wraps m in the decorators of one model call, in their one order,
// outermost first:
//
//	admit → repair → context → retry → limit → timeout → observe → trace → meter → m
//
// Repair is outermost so that a repair follow-up is a call of its own,
// retried like the first; retry is outside the limit so that no slot is
// held while waiting; the timeout, the observer, the trace and the meter
// are per attempt, the meter innermost so that its latency is the
// server's. Every layer passes the context window through
// ([llm.ContextWindowOf]). Layers whose option is unset are left out.
func Stack(m llm.Model, cfg StackConfig) llm.Model {
	if cfg.Meter != nil {
		m = cfg.Meter.Observe(m, cfg.Now)
	}
	m = Trace(m, "", cfg.Trace)
	if cfg.Observe != nil {
		m = &observeModel{next: m, ctxFn: cfg.Observe, now: time.Now}
	}
	m = WithTimeout(m, cfg.Timeout)
	m = cfg.Limiter.Limit(m)
	m = WithRetry(m, cfg.Retry)
	if cfg.Context != nil {
		m = &contextModel{next: m, prepare: cfg.Context}
	}
	if cfg.Repair != nil {
		m = WithRepairParse(m, cfg.Repair)
	}
	if cfg.Admit != nil {
		m = &admitModel{next: m, admit: cfg.Admit}
	}
	return m
}

// contextModel prepares each call's context ([StackConfig].Context).
type contextModel struct {
	next    llm.Model
	prepare func(ctx context.Context) context.Context
}

var _ llm.Model = (*contextModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *contextModel) Unwrap() llm.Model { return x.next }

// Name returns the wrapped model's name, if it has one.
func (x *contextModel) Name() string { return nameOf(x.next) }

func (x *contextModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return x.next.Generate(x.prepare(ctx), req)
}

// admitModel holds a call until [StackConfig].Admit lets it in.
type admitModel struct {
	next  llm.Model
	admit func(ctx context.Context) error
}

var _ llm.Model = (*admitModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *admitModel) Unwrap() llm.Model { return x.next }

// Name returns the wrapped model's name, if it has one.
func (x *admitModel) Name() string { return nameOf(x.next) }

func (x *admitModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := x.admit(ctx); err != nil {
		return nil, err
	}
	return x.next.Generate(ctx, req)
}
