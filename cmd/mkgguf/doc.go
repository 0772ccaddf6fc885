// Command mkgguf writes a GGUF model file with seeded random weights in
// SmolLM2-135M's shape and a byte-level BPE tokenizer trained on a
// repository's .go and .md files, for tests against real engines
// (llama.cpp, Ollama). See package
// github.com/existence-loop/sdk/internal/engine/gguf.
//
//	go run ./cmd/mkgguf -out FILE [-repo DIR] [-seed N] [-tiny]
//
// It is idempotent: the same repository text and flags give the same bytes,
// and when FILE already holds them (same inputs digest) it is left as is.
// The file is written beside FILE and renamed into place. It prints one
// line: the path, size in bytes and parameter count.
package main
