// Package engine runs a real inference engine for the SDK's TestEngine
// tests, and records and replays what it answers.
//
// # The engine
//
// [Start] starts llama.cpp, through node-llama-cpp's prebuilt CPU binary,
// behind a small Node server (server/server.mjs) that speaks Ollama's API
// (/api/chat, /api/show, /api/version, /api/embed) and llama-server's
// (/v1/chat/completions, /v1/embeddings, /tokenize, /props, /slots) as the
// real servers do: the model's chat template, token counts with KV-cache
// reuse (Ollama's prompt_eval_count counts only the tokens evaluated after
// the cached prefix; llama-server reports the prefix as
// usage.prompt_tokens_details.cached_tokens), num_ctx per request, the
// refusal of a prompt over its window (HTTP 400 "request (N tokens)
// exceeds the available context size (W tokens), try increasing it"),
// num_predict and max_tokens (done_reason "length"), JSON Schema grammars,
// tool calls, parallel slots and a queue answered 503 when full. The
// model is a GGUF with random weights in SmolLM2-135M's shape: its words
// are nonsense, its token counts, speed and JSON structure are real.
//
//	srv := engine.Start(t, engine.Config{Window: 2048})
//	m, _ := ollama.New(ollama.Config{URL: srv.URL, Model: srv.Model,
//		HTTPClient: srv.Record(t, "bounded_reply", *update)})
//
// `bash .ci/engine` installs the engine and generates the model under
// $HOME/.cache/existence-engine (or $EXISTENCE_ENGINE_DIR); the tests run
// against it when EXISTENCE_ENGINE=llamacpp, and skip with one line ([How])
// when it is unset or the files are missing. EXISTENCE_ENGINE=ollama runs
// a real `ollama serve` instead, the one `.ci/engine` builds from Ollama's
// Go module (else from PATH), behind a proxy that serves /tokenize and
// applies the two knobs below ([ConstrainChat], with a forced call's
// reply read back as a tool call by [ToolCallReply]); its transcripts are
// NAME.ollama.json ([TranscriptName]) and its runner's cache lines are
// read by [CacheLines] (see docs/development.md).
//
// Two knobs stand in for what a trained model would choose and random
// weights never do: [Config].ToolChoice "required" makes replies to
// requests with tools a tool call, and [Config].JSONLimit bounds the
// strings and arrays a JSON Schema grammar allows, so that JSON replies
// end. Everything else is the engine's own behaviour.
//
// # Transcripts
//
// [Server.Record] returns an HTTP client that records every exchange;
// with the test's -update flag the [Transcript] is written to
// testdata/engine/NAME.json, with durations, timestamps and generated ids
// stripped ([Strip]). [Replay] serves a transcript again from an
// httptest server, so that the quick tests (go test -short, no engine)
// run the same checks against what the real engine answered.
package engine
