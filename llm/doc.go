// Package llm is the model contract of the existence loop: one small
// interface, its messages, the typed errors every adapter returns, and the
// types the adapters share (token usage and estimation, the context-window
// contract). The rest of the model layer stands on it, in subpackages that
// import llm and never the other way round:
//
//   - llm/middleware: decorators of a [Model] (retry, timeout, concurrency
//     limits, repair, fallback, tracing, instrumentation), the error
//     classes (middleware.Classify) and reply size caps, and middleware.Stack,
//     which builds a model call's decorators in their one order;
//   - llm/pool: several servers behind one [Model] or [Embedder];
//   - llm/ctxwindow: what an adapter knows of a model's context window,
//     and how a prompt is planned to fit it;
//   - llm/ollama, llm/openai: the adapters; llm/llmtest: the stand-ins and
//     conformance suites.
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
//   - [ErrTimeout]: a per-call deadline fired (middleware.WithTimeout's
//     error matches it);
//   - [*InvalidOutputError] ([ErrInvalidOutput]): the reply failed
//     validation, even after the repair follow-up of middleware.WithRepair;
//   - [*ReplyTooLargeError] ([ErrReplyTooLarge]): the reply body passed
//     the cap the adapter set for the request, in proportion to what it
//     asked for (middleware.LimitReplies); a server cannot make the process
//     allocate without bound;
//   - [*ProtocolError] ([ErrProtocol]): a 2xx reply that breaks the
//     protocol (not JSON, the wrong shape), a server failure for a pool;
//   - [ErrRedirect]: the server redirected the call to another origin
//     (scheme, host and port) than the one configured, and the adapter
//     did not follow (unless the host is in its config's AllowRedirect).
//
// # Context windows and usage
//
// An adapter that knows the context window it is served with implements
// [Windowed]; [ContextWindowOf] finds the window and the calibrated
// [TokenEstimator] through middleware ([Unwrapper]).
// [ParseContextRefusal] reads the window a server states when it refuses a
// prompt. [Usage] is what a call used in tokens: the server's counts, else
// estimates ([RawRequestTokens] scaled by the model's [TokenEstimator]),
// marked as such.
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
