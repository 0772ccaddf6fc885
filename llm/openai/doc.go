// Package openai is an [llm.Model] adapter for OpenAI-compatible chat
// completions servers: llama.cpp server, vLLM, LM Studio, Ollama's /v1
// endpoint and OpenAI itself. It uses the official
// github.com/openai/openai-go/v3 client, with the client's own retries
// turned off so that [middleware.WithRetry] is the only retry policy.
//
// Create a [Model] with [New] and a [Config]:
//
//	m, err := openai.New(openai.Config{
//		BaseURL: "http://127.0.0.1:8080/v1", // llama.cpp server; empty means $OPENAI_BASE_URL, else OpenAI
//		Model:   "qwen3.5-9b",
//	})
//
// The request's JSON Schema ([llm.Request.Format]) is sent unchanged as
// response_format {"type": "json_schema", "json_schema": {"name", "schema",
// "strict"}}; set [Config.JSONObject] for servers that only know
// {"type": "json_object"}, and [Config.Strict] for OpenAI's strict mode
// (which needs a schema with "additionalProperties": false and every
// property required). Streaming ([Config.Stream]) and non-streaming replies
// give the same [llm.Response]. Tool definitions, tool calls and tool
// results are mapped both ways with their IDs.
//
// Errors follow the [llm] classes, so [middleware.Classify] and [middleware.Retryable]
// work on them: [llm.UnavailableError] (with a hint naming the base URL),
// [llm.ModelNotFoundError], [llm.StatusError] (with Retry-After),
// [llm.TruncatedError] for finish_reason "length", and [llm.ErrEmpty].
//
// [Embedder] is the [llm.Embedder] for an OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama's /v1, vLLM, llama.cpp server),
// through openai-go's embeddings API: texts go in batches of
// [EmbedConfig].Batch (default 64), vectors are asked for as floats, and
// failures have the same classes as chat, plus [llm.DimensionsError].
//
//	e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: "http://127.0.0.1:11434/v1", Model: "nomic-embed-text"})
package openai
