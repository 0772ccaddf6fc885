// Package llmtest helps test code that uses [llm.Model], and the adapters
// that implement it.
//
// # Scripted fake
//
// [Fake] is an [llm.Model] that answers with scripted [Reply] values, in
// order, and records a deep copy of every [llm.Request] it receives
// ([Fake.Requests], [Fake.Calls]). It classifies replies as a real adapter
// does: DoneReason "length" gives an [*llm.TruncatedError] and a reply with
// no text and no tool calls gives an error wrapping [llm.ErrEmpty]; any
// other failure is scripted with Reply.Err. A reply with Hang blocks until
// the context ends. When the script runs out, Generate fails with an error
// wrapping [ErrExhausted], unless [Fake.Repeat] is set. [Func] turns a plain
// function into an [llm.Model].
//
//	fake := llmtest.NewFake(
//		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503}},
//		llmtest.Reply{Text: `{"action":"goal","content":"explore"}`},
//	)
//
// # Conformance suite
//
// [Run] is the conformance suite every adapter passes. An
// adapter's test supplies a [Harness]: a constructor that starts a
// protocol-faithful net/http/httptest server answering protocol-neutral
// [Script] values, returns a model pointed at it, and reports what the
// server decoded from the wire as [Recorded] values. Run then checks, with
// and without streaming, text and chunk aggregation, separate thinking,
// token counts and done reasons, the JSON Schema format passed unchanged
// ([FormatSchema]), messages, options, tool definitions, tool calls and tool
// results, every error class, cancellation, a slow server and a stream that
// never ends. The suite never sleeps; each call is bounded by a watchdog.
//
//	func TestConformance(t *testing.T) {
//		llmtest.Run(t, llmtest.Harness{Name: "ollama", New: newServer, Unreachable: closedPort})
//	}
//
// Harness servers may use [SplitChunks] to stream text and [JSONEqual] to
// compare JSON values.
//
// # Embeddings
//
// [FakeEmbedder] is a deterministic [llm.Embedder]: a text's vector is
// [Embedding](text, dimensions), a bag of words, so texts that share words
// are near; failures (down, busy, slow) are scripted with
// [FakeEmbedder.Fail], [FakeEmbedder.FailNext] and [FakeEmbedder.Hang].
// [RunEmbedder] is the conformance suite every embedder adapter passes,
// against the stand-in server ([NewServer] with an embedding model) and
// injected faults:
//
//	func TestEmbedderConformance(t *testing.T) {
//		llmtest.RunEmbedder(t, llmtest.EmbedHarness{Name: "ollama", API: "ollama", New: newEmbedder})
//	}
//
// # Stand-in server
//
// [NewServer] is a model server with a real one's limits, speaking
// Ollama's API and the OpenAI-compatible one ([ServerConfig]): a default
// window and the model's trained length, silent front truncation or a
// refusal in the current or the older wording, /api/version, a KV cache
// whose counts leave out the cached prefix (CacheSlots; [Stats.CachedShare]),
// slots and a queue that answers 503, latency, and a tokenizer of its own
// ([Tokenize]) that estimates must be calibrated against.
package llmtest
