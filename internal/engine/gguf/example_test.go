package gguf_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/existence-loop/sdk/internal/engine/gguf"
)

// Write a tiny model whose tokenizer is trained on a few lines of text, and
// read its header back. A real test trains on the repository
// (gguf.ReadRepo) and writes the default SmolLM2-135M shape to a file for
// the engine to load.
func Example() {
	cfg := gguf.DefaultConfig()
	cfg.Spec = gguf.Tiny()
	cfg.Corpus = bytes.Repeat([]byte("The heartbeat loop asks a model for JSON: {\"action\": \"goal\"}.\n"), 10)

	var file bytes.Buffer
	stats, err := gguf.Write(context.Background(), &file, cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bytes:", stats.Bytes, "parameters:", stats.Params, "tensors:", stats.Tensors)

	h, err := gguf.Read(&file)
	if err != nil {
		log.Fatal(err)
	}
	arch, _ := h.Get("general.architecture")
	ctx, _ := h.Get("llama.context_length")
	fmt.Println("architecture:", arch, "context:", ctx, "first tensor:", h.Tensors[0].Name)

	tok, err := gguf.TokenizerFrom(h)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("The heartbeat loop")
	fmt.Println("tokens:", len(ids), "decoded:", tok.Decode(ids))
	// Output:
	// bytes: 128320 parameters: 112832 tensors: 21
	// architecture: llama context: 512 first tensor: token_embd.weight
	// tokens: 3 decoded: The heartbeat loop
}
