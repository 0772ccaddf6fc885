package memory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// failingSearch is a store whose search fails, as a corrupt FTS index.
type failingSearch struct {
	*memory.MemoryStore
	err error
}

func (s failingSearch) SearchMemories(context.Context, string, string, int) ([]memory.Hit, error) {
	return nil, s.err
}

// A failed search is an EventError and the recall goes on by vectors.
func TestFailedSearchIsReportedAndRecallGoesOn(t *testing.T) {
	broken := errors.New("fts index corrupt")
	m, _, ev := newMemory(t, memory.Config{Store: failingSearch{memory.NewMemoryStore(), broken}, Embedder: llmtest.NewFakeEmbedder("", 64)})
	ctx := t.Context()
	r, err := m.Remember(ctx, "scout", memory.Note{Text: "the deploy key lives in vault"})
	require.NoError(t, err)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "deploy key vault"})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, r.ID, got.Results[0].Memory.ID)
	assert.Zero(t, got.Lexical, "no words without a search")
	assert.Zero(t, got.Results[0].Lexical)
	e := ev.wait(t, memory.EventError)
	require.ErrorIs(t, e.Err, broken)
}

// Hybrid recall: a pending memory is found by its words alone, a memory
// with a vector by its cosine and its words, and a memory whose words do
// not match but whose vector is near enough by its cosine alone.
func TestHybridFindsPendingAndEmbedded(t *testing.T) {
	store := memory.NewMemoryStore()
	ctx := t.Context()
	// A memory stored as text, waiting for its vector (as an embedder
	// that was down leaves it).
	pending := memory.Record{ID: "mem-pending", AgentID: "scout", Text: "rotate the staging credentials", Kind: memory.KindObservation,
		Importance: 0.5, Created: t0, LastAccess: t0}
	_, _, err := store.AddMemory(ctx, pending)
	require.NoError(t, err)
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 64), NoBackfill: true, MergeAt: 2})
	embedded, err := m.Remember(ctx, "scout", memory.Note{Text: "the staging credentials expire friday"})
	require.NoError(t, err)
	require.False(t, embedded.Pending())
	unrelated, err := m.Remember(ctx, "scout", memory.Note{Text: "penguins prefer cold water"})
	require.NoError(t, err)

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "staging credentials", K: 5, Peek: true})
	require.NoError(t, err)
	byID := map[string]memory.Result{}
	for _, r := range got.Results {
		byID[r.Memory.ID] = r
	}
	require.Contains(t, byID, pending.ID, "the pending memory is found by its words")
	require.Contains(t, byID, embedded.ID)
	assert.NotContains(t, byID, unrelated.ID, "neither words nor cosine")
	p, e := byID[pending.ID], byID[embedded.ID]
	assert.Zero(t, p.Relevance, "no vector, no cosine")
	assert.Positive(t, p.Lexical)
	assert.Positive(t, e.Relevance)
	assert.Positive(t, e.Lexical)
	assert.Equal(t, 2, got.Lexical)
	assert.Equal(t, 2, got.Compared, "the two memories with a vector")
}

// A query vector is normalised: any positive multiple recalls the same,
// and an empty Space.Model means the agent's model.
func TestQueryVectorScaleAndModel(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("m", 32), MergeAt: 2})
	ctx := t.Context()
	for _, text := range []string{"alpha beta", "gamma delta", "alpha gamma"} {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: text})
		require.NoError(t, err)
	}
	q := llmtest.Embedding("alpha", 32)
	scaled := make([]float32, len(q))
	for i, x := range q {
		scaled[i] = 7.5 * x
	}
	a, err := m.Recall(ctx, "scout", memory.Query{Vector: q, RelevanceOnly: true, MinRelevance: memory.NoThreshold, Peek: true})
	require.NoError(t, err)
	b, err := m.Recall(ctx, "scout", memory.Query{Vector: scaled, Space: memory.Space{Model: "m"}, RelevanceOnly: true, MinRelevance: memory.NoThreshold, Peek: true})
	require.NoError(t, err)
	require.Len(t, a.Results, 3)
	for i := range a.Results {
		assert.Equal(t, a.Results[i].Memory.ID, b.Results[i].Memory.ID)
		assert.InDelta(t, a.Results[i].Score, b.Results[i].Score, 1e-6, "a cosine, whatever the scale")
	}
	assert.Equal(t, memory.Space{Model: "m", Dimensions: 32}, a.Space)
	assert.InDelta(t, a.Results[0].Relevance, a.Results[0].Score, 1e-12, "relevance only: the score is the cosine")
}

// RelevanceOnly honours Kinds and Superseded like every recall.
func TestRelevanceOnlyFilters(t *testing.T) {
	m, clk, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 32), MergeAt: 2})
	ctx := t.Context()
	old, err := m.Remember(ctx, "scout", memory.Note{Text: "the cache is cold", Fact: "cache", Kind: memory.KindObservation})
	require.NoError(t, err)
	clk.Advance(1)
	cur, err := m.Remember(ctx, "scout", memory.Note{Text: "the cache is warm", Fact: "cache", Kind: memory.KindObservation})
	require.NoError(t, err)
	fail, err := m.Remember(ctx, "scout", memory.Note{Text: "FAILED: warming the cache", Kind: memory.KindFailure})
	require.NoError(t, err)
	ids := func(q memory.Query) []string {
		q.RelevanceOnly, q.MinRelevance, q.Peek, q.K = true, memory.NoThreshold, true, 10
		got, err := m.Recall(ctx, "scout", q)
		require.NoError(t, err)
		var out []string
		for _, r := range got.Results {
			out = append(out, r.Memory.ID)
		}
		return out
	}
	assert.ElementsMatch(t, []string{cur.ID, fail.ID}, ids(memory.Query{Text: "cache"}), "the superseded is left out")
	assert.ElementsMatch(t, []string{old.ID, cur.ID, fail.ID}, ids(memory.Query{Text: "cache", Superseded: true}))
	assert.Equal(t, []string{fail.ID}, ids(memory.Query{Text: "cache", Kinds: []memory.Kind{memory.KindFailure}}))
}
