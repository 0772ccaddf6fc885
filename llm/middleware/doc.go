// Package middleware holds the decorators of an [llm.Model]: each wraps a
// Model and is itself one, so they stack, and each passes the context
// window through ([llm.Unwrapper]).
//
//   - [WithRetry]: exponential backoff with jitter for retryable failures,
//     honouring Retry-After; the defaults copy the original system (3
//     attempts, 10 s after a 503, 5 s otherwise); gives up with a
//     [*RetryError];
//   - [WithTimeout]: a per-call deadline (default 180 s, as in the
//     original); fails with a [*TimeoutError] matching [llm.ErrTimeout];
//   - [Fallback]: try model A, then model B; fails with a [*FallbackError];
//   - [WithRepair]: when the reply fails validation, one follow-up quoting
//     the error and asking for a corrected object;
//   - [Instrument]: reports every attempt ([Attempt]: model, duration,
//     tokens, outcome);
//   - [Limiter]: bounds the number of calls in flight across models (a
//     concurrency limit in slots);
//   - [Trace]: an OpenTelemetry chat span per call (GenAI semantic
//     conventions: model, token usage, finish reason; the conversation
//     only when asked for);
//   - [AdaptiveLimit.Observe]: measures each call's latency and the
//     server's 503s for an [AdaptiveLimit], which finds how many calls the
//     server takes at once (as TCP Vegas does).
//
// [Stack] builds them for one model call in their one order, outermost
// first: repair, retry (with the priority lane's short waits), limit,
// timeout, instrument, trace, the adaptive meter, then the model. Callers
// that need a concern of their own (the existence cycle's priority lane,
// its observation of every attempt) pass it as a [StackConfig] option or
// callback rather than a decorator of their own in the middle.
//
// [Classify] maps any error to a short outcome name for logs and metrics,
// [Retryable] tells which failures may succeed on a retry, and [UsageOf]
// what a call used in tokens. [LimitReplies] and [WithReplyLimit] cap a
// reply's body in proportion to what the request asked for.
package middleware
