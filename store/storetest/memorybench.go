package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/memory"
)

// BenchmarkMemoryInsert measures how fast a store takes new memories, one
// agent, one at a time, as an agent's tool loop stores them. open returns
// a new, empty store (closed by its own b.Cleanup). Sub-benchmarks:
//
//   - "store": memory.Store.AddMemory of a record with a 768-dimension
//     vector, the store alone;
//   - "no-embedder": memory.Memory.Remember without an embedder (every
//     memory pending, as text);
//   - "fake-embedder": Remember with llmtest's in-process fake embedder
//     (embedding costs nothing; the near-duplicate check scans every
//     memory);
//   - "standin-embedder": Remember with the Ollama embedder over HTTP to
//     llmtest's stand-in server (nomic-embed-text, 768 dimensions): one
//     /api/embed round trip per memory on loopback.
//
// Each reports memories/s. Texts are distinct, so that none is a
// duplicate:
//
//	go test -run '^$' -bench MemoryInsert -benchtime 2000x ./identity/...
func BenchmarkMemoryInsert(b *testing.B, open func(b *testing.B) memory.Store) {
	b.Run("store", func(b *testing.B) {
		s := open(b)
		ctx := context.Background()
		vec := llmtest.Embedding("a memory", 768)
		t0 := time.Now().UTC().Truncate(time.Microsecond)
		b.ResetTimer()
		for i := range b.N {
			r := memory.Record{ID: fmt.Sprintf("m%08d", i), AgentID: "scout", Text: benchText(i), Kind: memory.KindOutcome,
				Importance: 0.3, Created: t0, LastAccess: t0, Model: "nomic-embed-text", Dimensions: 768, Vector: vec}
			if _, _, err := s.AddMemory(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
	})
	for _, c := range []struct {
		name string
		emb  func(b *testing.B) llm.Embedder
	}{
		{"no-embedder", func(*testing.B) llm.Embedder { return nil }},
		{"fake-embedder", func(*testing.B) llm.Embedder { return llmtest.NewFakeEmbedder("nomic-embed-text", 768) }},
		{"standin-embedder", func(b *testing.B) llm.Embedder {
			srv := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}, Slots: 4})
			url := srv.Start()
			b.Cleanup(srv.Close)
			e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url})
			if err != nil {
				b.Fatal(err)
			}
			return e
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, err := memory.New(memory.Config{Store: open(b), Embedder: c.emb(b), NoBackfill: true, Cap: -1})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { m.Close() })
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := m.Remember(ctx, "scout", memory.Note{Text: benchText(i), Kind: memory.KindOutcome}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}

// benchText is the i-th distinct text of a benchmark, about as long as a
// tool loop's step outcome.
func benchText(i int) string {
	return fmt.Sprintf("Goal 'map the workspace and write notes %d' step write_file: wrote notes/%d.md with the layout of directory %d and its %d files", i, i, i%97, i%13)
}
