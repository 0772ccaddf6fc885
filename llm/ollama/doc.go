// Package ollama is the [llm.Model] adapter for an Ollama server, built on
// the official github.com/ollama/ollama/api client and its /api/chat
// endpoint.
//
//	m, err := ollama.New(ollama.Config{Model: "qwen3.5:9b"})
//	...
//	resp, err := m.Generate(ctx, &llm.Request{
//		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Answer in JSON."}},
//		Format:   schema, // a JSON Schema, sent as "format" unchanged
//	})
//
// # Wire mapping
//
// [llm.Request.Format] goes to "format" unchanged ([Config.JSONMode] sends
// "json" instead). Temperature, Seed and MaxTokens go to the options
// "temperature", "seed" and "num_predict"; [Config.NumCtx] to "num_ctx";
// [Config.Options] adds any other option. "think" is always sent and false
// unless [Config.Think] turns it on. "truncate" and "shift" are always
// false: a prompt over the window is refused (HTTP 400) and a reply that
// reaches the end of the window stops there with done_reason "length",
// never cut at its start or shifted in the middle. [Config.KeepAlive]
// sets "keep_alive"; the original system sent -1 to keep the model loaded
// (spec §7), which on a shared server pins the model's memory until the
// server restarts. Tool definitions and tool calls are mapped both ways; a tool
// result goes as role "tool" with "tool_name". Streamed (NDJSON) and
// non-streamed replies give the same [llm.Response]; "thinking" goes to
// [llm.Response.Thinking]; Ollama's done_reason "stop" after tool calls is
// normalised to [llm.DoneToolCalls].
//
// # Errors
//
// [Model.Generate] classifies failures for the middleware in package llm:
// an unreachable server is an [*llm.UnavailableError] whose message says to
// run `ollama serve`; a missing model is an [*llm.ModelNotFoundError] whose
// message says to run `ollama pull MODEL`; other HTTP statuses are
// [llm.StatusError] values carrying the server's Retry-After; done_reason
// "length" is an [*llm.TruncatedError] with the partial reply; a reply with
// no text and no tool calls wraps [llm.ErrEmpty]. When the context ends the
// request is aborted at once and the error wraps ctx.Err().
//
// # Configuration
//
// The server URL comes from [Config.URL], else the OLLAMA_HOST environment
// variable, else [DefaultURL]. The default HTTP client has no timeout:
// bound each call with a context deadline (or middleware.WithTimeout).
//
// # Embeddings
//
// [Embedder] is the [llm.Embedder] for Ollama's /api/embed, through the
// official client's Embed: texts go in batches of [EmbedConfig].Batch
// (default 32), the model defaults to nomic-embed-text (768 dimensions),
// the dimensions are learned from the first reply, and failures have the
// same classes as chat (a busy server's 503 is an [llm.StatusError]).
//
//	e, err := ollama.NewEmbedder(ollama.EmbedConfig{}) // nomic-embed-text on $OLLAMA_HOST
//	vecs, err := e.Embed(ctx, []string{"the rate limiter failed at 3AM"})
//
// # Live test
//
// The package's tests never touch the network. An opt-in test talks to a
// real server:
//
//	EXISTENCE_LIVE_OLLAMA=1 EXISTENCE_LIVE_MODEL=qwen3.5:9b go test -run Live -v ./llm/ollama
package ollama
