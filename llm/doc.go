// Package llm is the language-model layer of the existence loop: one small
// interface, provider adapters, typed errors and composable middleware that
// make local models usable for structured output.
//
// # Model, Request, Response
//
// [Model] has one method, Generate(ctx, *[Request]) (*[Response], error). A
// Request carries the conversation ([Message] values with a [Role]), the
// JSON Schema of the expected reply in Format (structured output, passed to
// the provider unchanged), optional [ToolDef] tools, and sampling settings
// (Temperature, Seed, MaxTokens; nil means the provider's default, see
// [Ptr]; every request carries a reply limit, MaxTokens or the adapter's
// default). A Response holds the text, any separate reasoning ("thinking"),
// [ToolCall] values, the normalised done reason ([DoneStop], [DoneLength],
// [DoneToolCalls]), the prompt and output token counts and the call's
// duration. Every Model is safe for concurrent use and returns promptly,
// with an error wrapping ctx.Err(), when its context ends.
//
// # Errors
//
// Adapters classify failures so that callers and middleware can react
// without parsing messages. Each typed error matches a sentinel with
// [errors.Is]:
//
//   - [StatusError]: an HTTP error status, with the server's Retry-After;
//   - [*UnavailableError] ([ErrUnavailable]): the server could not be reached;
//     its Hint says what to run (`ollama serve`);
//   - [*ModelNotFoundError] ([ErrModelNotFound]): its Hint says what to run
//     (`ollama pull MODEL`);
//   - [*TruncatedError] ([ErrTruncated]): the reply hit the token limit; it
//     holds the partial Response;
//   - [ErrEmpty]: no text and no tool calls;
//   - [*TimeoutError] ([ErrTimeout]): a per-call timeout of [WithTimeout]
//     fired;
//   - [*InvalidOutputError] ([ErrInvalidOutput]): the reply failed
//     validation, even after the repair follow-up of [WithRepair];
//   - [*ReplyTooLargeError] ([ErrReplyTooLarge]): the reply body passed
//     the cap the adapter set for the request, in proportion to what it
//     asked for ([LimitReplies], [WithReplyLimit], [ChatReplyLimit],
//     [EmbedReplyLimit]); a server cannot make the process allocate
//     without bound;
//   - [*ProtocolError] ([ErrProtocol]): a 2xx reply that breaks the
//     protocol (not JSON, the wrong shape), a server failure for a [Pool];
//   - [ErrRedirect]: the server redirected the call to another origin
//     (scheme, host and port) than the one configured, and the adapter
//     did not follow (unless the host is in its config's AllowRedirect).
//
// Middleware that gives up says why: [*RetryError] (the attempts made and
// the last error) and [*FallbackError] (one error per model tried); both
// unwrap, so errors.Is and errors.As see the causes.
//
// [Classify] maps any error to a short outcome name for logs and metrics,
// and [Retryable] tells which failures may succeed on a retry.
//
// # Middleware
//
// Middleware wraps a Model and is itself a Model, so it stacks:
//
//   - [WithRetry]: exponential backoff with jitter for retryable failures,
//     honouring Retry-After; the defaults copy the original system (3
//     attempts, 10 s after a 503, 5 s otherwise);
//   - [WithTimeout]: a per-call deadline (default 180 s, as in the original);
//   - [Fallback]: try model A, then model B;
//   - [WithRepair]: when the reply fails validation, one follow-up quoting the
//     error and asking for a corrected object;
//   - [Instrument]: reports every attempt ([Attempt]: model, duration,
//     tokens, outcome);
//   - [Limiter]: bounds the number of calls in flight across models (a
//     concurrency limit in slots; [NewLimiter], [Limiter.Limit]);
//   - [Trace]: an OpenTelemetry chat span per call (GenAI semantic
//     conventions: model, token usage, finish reason; the conversation
//     only when asked for);
//   - [AdaptiveLimit.Observe]: measures each call's latency and the
//     server's 503s for an [AdaptiveLimit], which finds how many calls the
//     server takes at once (as TCP Vegas does).
//
// # Several servers
//
// [Pool] spreads an agent population over several model servers: each
// agent ([WithAgent]) is pinned to one by rendezvous hashing, so that its
// prompts keep hitting one KV cache, and moves to the next of its ranking
// while its server is down ([IsServerFailure]); a reply names its server
// ([Response].Server). [EmbedPool] does the same for embedding servers of
// one model, without pinning (an embedding has no cache to keep warm).
//
// # Context windows
//
// [ContextTracker] keeps what an adapter knows of a model's context window
// on a server, and lowers it only on what the server states: a refusal
// ([ParseContextRefusal] knows every wording, and the window it states) or
// a prompt count that proves a cut ([ContextTracker.Observe] returns a
// [Verdict]; a count a KV-cache hit could give is never one, and a doubt
// is probed). [ContextWindowOf] finds the window and the calibrated
// [TokenEstimator] through middleware.
//
// [UsageOf] says what a call used in tokens ([Usage]): the server's
// counts, else estimates from the model's [TokenEstimator], marked as
// such.
//
// # Embeddings
//
// [Embedder] turns texts into embedding vectors for long-term memory
// (package memory): Embed(ctx, texts) returns one []float32 per text, in
// order; Model names the model (the vector space) and Dimensions the
// vectors' length (0 until learned from a first reply). Adapters classify
// failures with the same errors as [Model] (an unreachable server, a
// missing model, an HTTP status with Retry-After, 503 from a busy server),
// plus [*DimensionsError] ([ErrDimensions]) for a reply whose vectors do
// not fit. [CheckEmbeddings] and [Batches] help third-party adapters do
// the same.
//
// # Adapters and testing
//
// Package llm/ollama talks to an Ollama server through the official
// github.com/ollama/ollama/api client (chat, and embeddings through
// /api/embed); package llm/openai talks to OpenAI and OpenAI-compatible
// servers (llama.cpp server, vLLM, LM Studio), chat and embeddings through
// openai-go. Package llm/llmtest provides a scripted fake Model that
// records every request, a deterministic fake Embedder, a stand-in server
// with a real server's limits, and the conformance suites every adapter
// passes (one for models, one for embedders).
package llm
