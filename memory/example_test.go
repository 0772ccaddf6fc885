package memory_test

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// Recall in five lines: a memory over a store and an embedder, two
// memories, and the one that matters for a question. The fake embedder
// stands in for ollama.NewEmbedder(ollama.EmbedConfig{}) (nomic-embed-text).
func Example_recall() {
	ctx := context.Background()
	mem, _ := memory.New(memory.Config{Store: memory.NewMemoryStore(), Embedder: llmtest.NewFakeEmbedder("nomic-embed-text", 768)})
	defer mem.Close()
	mem.Remember(ctx, "scout", memory.Note{Text: "FAILED: the rate limiter broke because the bucket depth was wrong", Kind: memory.KindFailure})
	mem.Remember(ctx, "scout", memory.Note{Text: "wrote notes.md with the workspace layout", Kind: memory.KindOutcome})
	got, _ := mem.Recall(ctx, "scout", memory.Query{Text: "why did the rate limiter break?"})

	for _, r := range got.Results {
		fmt.Printf("%s (relevance %.2f)\n", r.Memory.Text, r.Relevance)
	}
	// Output:
	// FAILED: the rate limiter broke because the bucket depth was wrong (relevance 0.49)
}
