// Package retryafter holds the module's one reader of the delay a server
// asks for before the next request: the Retry-After header (RFC 9110
// §10.2.3: delay-seconds or an HTTP date) and OpenAI's retry-after-ms.
// The model adapters (llm/ollama, llm/openai) read it into
// llm.StatusError.RetryAfter, which the retry middleware and the memory
// backfill honour under their own wait caps; writers of the header set it
// where they answer.
package retryafter
