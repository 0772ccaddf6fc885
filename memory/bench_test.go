package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/memory"
)

// BenchmarkRecall is one agent's exact recall over N memories of 768
// dimensions (nomic-embed-text's), as the cache holds them: the cosine of
// the query with every memory, then Generative Agents' score over every
// candidate (no threshold, the worst case: every memory is scored) and
// the top 3. The bytes per operation are the vectors scanned, so that
// the MB/s column is the scan's bandwidth. The recall peeks: the access
// update's store write is not measured.
func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			m, q := benchMemory(b, n, 768)
			b.SetBytes(int64(n) * 768 * 4)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, err := m.Recall(context.Background(), "scout", memory.Query{Vector: q, MinRelevance: memory.NoThreshold, Peek: true})
				if err != nil || len(got.Results) != 3 {
					b.Fatal(err, len(got.Results))
				}
			}
		})
	}
}

// BenchmarkRecallRelevanceOnly is the original's ranking over 10,000
// memories: cosine alone, above the default 0.35.
func BenchmarkRecallRelevanceOnly(b *testing.B) {
	m, q := benchMemory(b, 10000, 768)
	b.SetBytes(10000 * 768 * 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Recall(context.Background(), "scout", memory.Query{Vector: q, RelevanceOnly: true, Peek: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMemory returns a Memory holding n random memories of dim
// dimensions for "scout", loaded, and a query vector.
func benchMemory(b *testing.B, n, dim int) (*memory.Memory, []float32) {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	store := memory.NewMemoryStore()
	ctx := context.Background()
	for i, v := range randomUnit(rng, n, dim) {
		at := t0.Add(-time.Duration(rng.IntN(1000)) * time.Hour)
		if _, _, err := store.AddMemory(ctx, memory.Record{ID: fmt.Sprintf("m%06d", i), AgentID: "scout", Text: fmt.Sprintf("memory %d", i),
			Kind: memory.KindOutcome, Importance: rng.Float64(), Created: at, LastAccess: at, Model: "nomic-embed-text", Dimensions: dim, Vector: v}); err != nil {
			b.Fatal(err)
		}
	}
	m, err := memory.New(memory.Config{Store: store, Clock: existencetest.NewClock(t0)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	if _, err := m.Stats(ctx, "scout"); err != nil { // load the cache
		b.Fatal(err)
	}
	return m, randomUnit(rng, 1, dim)[0]
}

// BenchmarkRecallLexical is one agent's recall by words over N memories
// of 12 words drawn (Zipf, s = 1.1) from a vocabulary of 20,000, with a
// query of 6 such words, in the in-process store's BM25 index:
// "lexical" is a recall with the embedder down (words, recency and
// importance), "hybrid" adds a 768-dimensional query vector over
// memories that all have one (the default threshold, 0.35). The recall
// peeks.
func BenchmarkRecallLexical(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, mode := range []string{"lexical", "hybrid"} {
			b.Run(fmt.Sprintf("%s/%dk", mode, n/1000), func(b *testing.B) {
				dim := 0
				if mode == "hybrid" {
					dim = 768
				}
				m, q, text := benchTextMemory(b, n, dim)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					got, err := m.Recall(context.Background(), "scout", memory.Query{Text: text, Vector: q, Peek: true})
					if err != nil || len(got.Results) == 0 || got.Lexical == 0 {
						b.Fatal(err, len(got.Results))
					}
				}
			})
		}
	}
}

// benchTextMemory is benchMemory with texts of words, pending when dim
// is 0; it returns a query vector (nil when dim is 0) and a query text.
func benchTextMemory(b *testing.B, n, dim int) (*memory.Memory, []float32, string) {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(rng, 1.1, 1, 19999)
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		return strings.Join(w, " ")
	}
	store := memory.NewMemoryStore()
	ctx := context.Background()
	var vecs [][]float32
	if dim > 0 {
		vecs = randomUnit(rng, n, dim)
	}
	for i := range n {
		at := t0.Add(-time.Duration(rng.IntN(1000)) * time.Hour)
		r := memory.Record{ID: fmt.Sprintf("m%06d", i), AgentID: "scout", Text: fmt.Sprintf("%s %d", words(12), i),
			Kind: memory.KindOutcome, Importance: rng.Float64(), Created: at, LastAccess: at}
		if dim > 0 {
			r.Model, r.Dimensions, r.Vector = "nomic-embed-text", dim, vecs[i]
		}
		if _, _, err := store.AddMemory(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	m, err := memory.New(memory.Config{Store: store, Clock: existencetest.NewClock(t0)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	if _, err := m.Stats(ctx, "scout"); err != nil {
		b.Fatal(err)
	}
	var q []float32
	if dim > 0 {
		q = randomUnit(rng, 1, dim)[0]
	}
	return m, q, "w3 w17 w120 w845 w2210 w9001"
}
