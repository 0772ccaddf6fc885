package memory_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"The deploys FAILED, what did we deploy?", []string{"deploy", "fail", "deploy"}},
		{"Caroline went to the LGBTQ support group on 7 May 2023", []string{"carolin", "went", "lgbtq", "support", "group", "7", "may", "2023"}},
		{"naïve café, 日本", []string{"naïv", "café", "日本"}},
		{"the and of", nil},
		{"", nil},
	} {
		assert.Equal(t, c.want, memory.Terms(c.in), c.in)
	}
}

func TestIndexBM25(t *testing.T) {
	x := memory.NewIndex()
	x.Add("a", "the deploy broke on a missing env var")
	x.Add("b", "lunch was good")
	x.Add("c", "deploy deploy deploy finished")
	assert.Equal(t, 3, x.Len())
	got := x.Search("why did the deploy fail on the env?", 10)
	require.Len(t, got, 2)
	assert.Equal(t, "a", got[0].ID, "two terms beat one repeated")
	assert.Equal(t, "c", got[1].ID)

	// BM25 by hand for "lunch" in b: N=3, n=1, tf=1, |b|=2 terms
	// (lunch, good), avg = (5+2+4)/3.
	idf := math.Log(1 + (3-1+0.5)/(1+0.5))
	avg := (5.0 + 2 + 4) / 3
	want := idf * 2.2 / (1 + 1.2*(1-0.75+0.75*2/avg))
	hits := x.Search("LUNCH", 1)
	require.Len(t, hits, 1)
	assert.InDelta(t, want, hits[0].Score, 1e-12)

	x.Remove("a")
	x.Remove("nothing")
	assert.Equal(t, []string{"c"}, hitIDs(x.Search("deploy break", 10)))
	x.Add("c", "lunch again") // replaces c's text
	assert.Empty(t, x.Search("deploy", 10))
	assert.Equal(t, []string{"c", "b"}, hitIDs(x.Search("lunch again", 10)))
	assert.Empty(t, x.Search("the of and", 10), "stop words alone find nothing")
	assert.Empty(t, x.Search("lunch", 0))
}

func hitIDs(h []memory.Hit) []string {
	var out []string
	for _, x := range h {
		out = append(out, x.ID)
	}
	return out
}

// With no embedder a recall ranks by the query's words: the relevant
// memory comes first though it is older and less important than others.
func TestRecallByWordsWithoutEmbedder(t *testing.T) {
	m, c, ev := newMemory(t, memory.Config{})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "FAILED: the deploy broke on a missing env var", Importance: 0.2})
	require.NoError(t, err)
	c.Advance(24 * time.Hour)
	for _, s := range []string{"read notes.md: the layout of the workspace", "wrote a poem about rain", "listed the files in /tmp"} {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: s, Importance: 0.9})
		require.NoError(t, err)
	}
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "how did the last deploy go?", K: 3})
	require.NoError(t, err)
	assert.True(t, got.Fallback, "the query has no vector")
	assert.Equal(t, 1, got.Lexical)
	assert.Equal(t, 1, got.Candidates, "only the memories whose words match are candidates")
	require.Len(t, got.Results, 1)
	r := got.Results[0]
	assert.Equal(t, "FAILED: the deploy broke on a missing env var", r.Memory.Text)
	assert.Greater(t, r.Lexical, 0.0)
	assert.Equal(t, 1.0, r.Fused, "the best hit's share is 1")
	assert.Zero(t, r.Relevance, "no cosine without vectors")
	ev.wait(t, memory.EventRecallFallback)

	// Words that match nothing: recency and importance, as before.
	got, err = m.Recall(ctx, "scout", memory.Query{Text: "zebra", K: 2})
	require.NoError(t, err)
	assert.Zero(t, got.Lexical)
	assert.Len(t, got.Results, 2)
}

// A memory still pending its vector is found by its words in a recall
// whose query has a vector, beside the memories found by their vectors.
func TestPendingFoundByWords(t *testing.T) {
	emb := llmtest.NewFakeEmbedder("", 0)
	m, _, _ := newMemory(t, memory.Config{Embedder: emb, NoBackfill: true})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "lunch was pasta"})
	require.NoError(t, err)
	emb.FailNext(errors.New("503 busy"))
	p, err := m.Remember(ctx, "scout", memory.Note{Text: "the kubernetes cluster ran out of memory"})
	require.NoError(t, err)
	require.True(t, p.Pending())
	// The backfill backs off after the failure; a query vector given
	// directly still makes a hybrid recall.
	q := llmtest.Embedding("kubernetes cluster memory", 768)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "kubernetes cluster memory", Vector: q, K: 2})
	require.NoError(t, err)
	require.NotEmpty(t, got.Results)
	assert.Equal(t, p.ID, got.Results[0].Memory.ID, "found by its words, without a vector")
	assert.Zero(t, got.Results[0].Relevance)
	assert.Equal(t, 1.0, got.Results[0].Fused, "the lexical part alone, for a memory without a vector")
	assert.False(t, got.Fallback)
}

// Hybrid: a memory matching both by vector and by words beats one
// matching by vector alone; the parts are on every result.
func TestHybridFusion(t *testing.T) {
	emb := llmtest.NewFakeEmbedder("", 0)
	m, _, _ := newMemory(t, memory.Config{Embedder: emb})
	ctx := t.Context()
	for _, s := range []string{"deploy of the api failed on staging", "api latency was fine today", "wrote a poem"} {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: s})
		require.NoError(t, err)
	}
	w := memory.Weights{Relevance: 1}
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "api deploy failed", K: 3, Weights: &w, MinRelevance: memory.NoThreshold})
	require.NoError(t, err)
	require.Len(t, got.Results, 3)
	first := got.Results[0]
	assert.Equal(t, "deploy of the api failed on staging", first.Memory.Text)
	assert.Greater(t, first.Relevance, 0.0)
	assert.Greater(t, first.Lexical, 0.0)
	assert.InDelta(t, 1, first.Fused, 1e-12, "best cosine and best words: (1 + 1) / 2")
	last := got.Results[2]
	assert.Equal(t, "wrote a poem", last.Memory.Text)
	assert.Zero(t, last.Lexical)
	assert.Equal(t, 2, got.Lexical)
	for _, r := range got.Results {
		assert.GreaterOrEqual(t, r.Fused, 0.0)
		assert.LessOrEqual(t, r.Fused, 1.0)
	}
}

// The most recently accessed memory gets the highest recency part (the
// Generative Agents reference code ends up giving the newest 0).
func TestRecencyDirection(t *testing.T) {
	for _, withVectors := range []bool{false, true} {
		cfg := memory.Config{}
		if withVectors {
			cfg.Embedder = llmtest.NewFakeEmbedder("", 0)
		}
		m, c, _ := newMemory(t, cfg)
		ctx := t.Context()
		for _, s := range []string{"oldest note", "middle note", "newest note"} {
			_, err := m.Remember(ctx, "scout", memory.Note{Text: s, Importance: 0.5})
			require.NoError(t, err)
			c.Advance(10 * time.Hour)
		}
		w := memory.Weights{Recency: 1}
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "note", K: 3, Weights: &w, MinRelevance: memory.NoThreshold, Peek: true})
		require.NoError(t, err)
		require.Len(t, got.Results, 3)
		assert.Equal(t, "newest note", got.Results[0].Memory.Text, "vectors %v", withVectors)
		assert.Equal(t, 1.0, got.Results[0].Norm.Recency)
		assert.Equal(t, 0.0, got.Results[2].Norm.Recency)
		assert.InDelta(t, math.Pow(0.995, 10), got.Results[0].Recency, 1e-9)
		assert.Greater(t, got.Results[0].Recency, got.Results[1].Recency)
		assert.Greater(t, got.Results[1].Recency, got.Results[2].Recency)
	}
}
