// Package gguf writes GGUF v3 model files with seeded random weights in a
// real small model's shape, for tests that run a real engine (llama.cpp
// through node-llama-cpp, Ollama) offline: the replies' words are nonsense,
// but tokenization, chat templates, token counts, the KV cache,
// grammar-constrained JSON and CPU speed are real.
//
// [Write] writes a llama-architecture model ([SmolLM2]'s shape by default,
// [Tiny] for fast tests) with Q8_0 weight matrices and F32 norms, and a
// byte-level BPE tokenizer ([Train]) learned from a corpus such as the
// repository's own .go and .md files ([ReadRepo]), with the ChatML special
// tokens and chat template. [Read] parses a file's header back.
package gguf
