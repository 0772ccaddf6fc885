package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// runMemorySearch is the part of [RunMemory] about finding memories by
// their words ([memory.Searcher]) and what a recall does with them: the
// store's lexical search, recall by words with no embedder, hybrid
// fusion (a memory pending its vector found by its words beside the ones
// found by their vectors), supersession, and the recency direction.
func runMemorySearch(t *testing.T, open func(t *testing.T) memory.Store) {
	ctx := context.Background()
	searcher := func(t *testing.T, s memory.Store) memory.Searcher {
		ms, ok := s.(memory.Searcher)
		require.True(t, ok, "%T does not implement memory.Searcher", s)
		return ms
	}
	newMem := func(t *testing.T, s memory.Store, emb *llmtest.FakeEmbedder) (*memory.Memory, *stepClock) {
		c := &stepClock{now: t0}
		cfg := memory.Config{Store: s, Clock: c, NoBackfill: true}
		if emb != nil {
			cfg.Embedder = emb
		}
		m, err := memory.New(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		return m, c
	}

	t.Run("search by words", func(t *testing.T) {
		s := open(t)
		x := searcher(t, s)
		texts := map[string]string{
			"m1": "FAILED: the deploy of the api broke on a missing env var",
			"m2": "the api deploys went fine after the env var was set",
			"m3": "wrote a poem about the rain",
			"m4": "Deploying on Fridays is risky",
		}
		for i, id := range []string{"m1", "m2", "m3", "m4"} {
			r := FullMemory("scout", id, texts[id], t0.Add(time.Duration(i)*time.Second))
			r.SupersededBy = ""
			if id == "m2" {
				r.Model, r.Dimensions, r.Vector = "", 0, nil // pending: words need no vector
			}
			_, _, err := s.AddMemory(ctx, r)
			require.NoError(t, err)
		}
		_, _, err := s.AddMemory(ctx, FullMemory("analyst", "m9", "deploy deploy deploy api env", t0))
		require.NoError(t, err)

		hits, err := x.SearchMemories(ctx, "scout", "Why did the API deploy break on a missing env var?", 10)
		require.NoError(t, err)
		require.Len(t, hits, 3, "m1, m2 and m4 share a stem with the query; another agent's never")
		assert.Equal(t, "m1", hits[0].ID, "the most matching terms first")
		assert.ElementsMatch(t, []string{"m1", "m2", "m4"}, hitIDs(hits), "stems match: deploys, deploying → deploy")
		for i, h := range hits {
			assert.Greater(t, h.Score, 0.0)
			if i > 0 {
				assert.GreaterOrEqual(t, hits[i-1].Score, h.Score, "best first")
			}
		}
		hits, err = x.SearchMemories(ctx, "scout", "deploy", 1)
		require.NoError(t, err)
		assert.Len(t, hits, 1, "at most limit")
		hits, err = x.SearchMemories(ctx, "scout", "the and of what did", 10)
		require.NoError(t, err)
		assert.NotNil(t, hits)
		assert.Empty(t, hits, "stop words alone find nothing")
		hits, err = x.SearchMemories(ctx, "scout", `"deploy" OR * NEAR( -- ' ; \ :`, 10)
		require.NoError(t, err, "query syntax in the text is only words")
		assert.Len(t, hits, 3)
		hits, err = x.SearchMemories(ctx, "nobody", "deploy", 10)
		require.NoError(t, err)
		assert.Empty(t, hits)

		n, err := s.DeleteMemories(ctx, "scout", []string{"m1"})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		hits, err = x.SearchMemories(ctx, "scout", "broke missing", 10)
		require.NoError(t, err)
		assert.Empty(t, hits, "a deleted memory is not found")
		_, _, err = s.AddMemory(ctx, FullMemory("scout", "m5", "the missing piece was found", t0))
		require.NoError(t, err)
		hits, err = x.SearchMemories(ctx, "scout", "broke missing", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"m5"}, hitIDs(hits), "a new memory is found at once")

		_, err = x.SearchMemories(ctx, "../x", "deploy", 10)
		require.ErrorIs(t, err, memory.ErrInvalid)
		_, err = x.SearchMemories(ctx, "scout", "deploy", 0)
		require.ErrorIs(t, err, memory.ErrInvalid)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = x.SearchMemories(cctx, "scout", "deploy", 10)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("recall by words without an embedder", func(t *testing.T) {
		s := open(t)
		m, c := newMem(t, s, nil)
		_, err := m.Remember(ctx, "scout", memory.Note{Text: "the rate limiter dropped requests at night", Importance: 0.1})
		require.NoError(t, err)
		c.Advance(48 * time.Hour)
		for _, text := range []string{"lunch was pasta", "the build broke on a missing go.sum entry", "notes.md lists the workspace layout"} {
			_, err := m.Remember(ctx, "scout", memory.Note{Text: text, Importance: 0.9})
			require.NoError(t, err)
		}
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "why were requests dropped by the limiter?", K: 2})
		require.NoError(t, err)
		assert.True(t, got.Fallback)
		require.NotEmpty(t, got.Results)
		assert.Equal(t, "the rate limiter dropped requests at night", got.Results[0].Memory.Text,
			"the oldest, least important memory ranks first by its words")
		assert.Greater(t, got.Results[0].Lexical, 0.0)
	})

	t.Run("hybrid fusion", func(t *testing.T) {
		s := open(t)
		emb := llmtest.NewFakeEmbedder("nomic-embed-text", 768)
		m, _ := newMem(t, s, emb)
		for _, text := range []string{"the api deploy failed on staging", "api latency was fine today", "wrote a poem"} {
			_, err := m.Remember(ctx, "scout", memory.Note{Text: text})
			require.NoError(t, err)
		}
		emb.FailNext(errors.New("503"))
		p, err := m.Remember(ctx, "scout", memory.Note{Text: "kubernetes cluster ran out of memory"})
		require.NoError(t, err)
		require.True(t, p.Pending())
		w := memory.Weights{Relevance: 1}
		q := llmtest.Embedding("api deploy failed", 768)
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "api deploy failed", Vector: q, K: 4, Weights: &w, MinRelevance: memory.NoThreshold})
		require.NoError(t, err)
		require.NotEmpty(t, got.Results)
		assert.Equal(t, "the api deploy failed on staging", got.Results[0].Memory.Text, "best by vector and by words")
		assert.Greater(t, got.Results[0].Relevance, 0.0)
		assert.Greater(t, got.Results[0].Lexical, 0.0)
		assert.InDelta(t, 1, got.Results[0].Fused, 1e-9)

		got, err = m.Recall(ctx, "scout", memory.Query{Text: "kubernetes memory", Vector: llmtest.Embedding("kubernetes memory", 768), K: 2, Weights: &w})
		require.NoError(t, err)
		require.NotEmpty(t, got.Results)
		assert.Equal(t, p.ID, got.Results[0].Memory.ID, "a memory pending its vector is found by its words")
		assert.Equal(t, 1.0, got.Results[0].Fused, "its lexical part alone")
	})

	t.Run("supersession", func(t *testing.T) {
		s := open(t)
		m, c := newMem(t, s, llmtest.NewFakeEmbedder("nomic-embed-text", 768))
		old, err := m.Remember(ctx, "scout", memory.Note{Text: "Read notes.md: the layout", Kind: memory.KindOutcome})
		require.NoError(t, err)
		c.Advance(time.Hour)
		newer, err := m.Remember(ctx, "scout", memory.Note{Text: "read the layout, NOTES md", Kind: memory.KindOutcome})
		require.NoError(t, err)
		v1, err := m.Remember(ctx, "scout", memory.Note{Text: "the deploy target is staging", Fact: "deploy.target"})
		require.NoError(t, err)
		c.Advance(time.Hour)
		v2, err := m.Remember(ctx, "scout", memory.Note{Text: "the deploy target is production now", Fact: "deploy.target"})
		require.NoError(t, err)

		got, err := m.Recall(ctx, "scout", memory.Query{Text: "notes layout", K: 5, MinRelevance: memory.NoThreshold})
		require.NoError(t, err)
		var ids []string
		for _, r := range got.Results {
			ids = append(ids, r.Memory.ID)
		}
		assert.Contains(t, ids, newer.ID)
		assert.NotContains(t, ids, old.ID, "near-duplicates never fill the top K together")
		got, err = m.Recall(ctx, "scout", memory.Query{Text: "deploy target", K: 1})
		require.NoError(t, err)
		require.Len(t, got.Results, 1)
		assert.Equal(t, v2.ID, got.Results[0].Memory.ID, "the newer value ranks first")

		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		require.Len(t, recs, 4, "superseded memories are kept")
		by := map[string]memory.Record{}
		for _, r := range recs {
			by[r.ID] = r
		}
		assert.Equal(t, newer.ID, by[old.ID].SupersededBy, "marked in the store")
		assert.Equal(t, v2.ID, by[v1.ID].SupersededBy)
		assert.Equal(t, "deploy.target", by[v1.ID].Fact)
		assert.Empty(t, by[v2.ID].SupersededBy)
	})

	t.Run("recency direction", func(t *testing.T) {
		s := open(t)
		m, c := newMem(t, s, nil)
		for i := range 3 {
			_, err := m.Remember(ctx, "scout", memory.Note{Text: fmt.Sprintf("status report %d", i), Importance: 0.5})
			require.NoError(t, err)
			c.Advance(5 * time.Hour)
		}
		w := memory.Weights{Recency: 1}
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "status report", K: 3, Weights: &w, Peek: true})
		require.NoError(t, err)
		require.Len(t, got.Results, 3)
		assert.Equal(t, "status report 2", got.Results[0].Memory.Text, "the most recently accessed first")
		assert.Equal(t, 1.0, got.Results[0].Norm.Recency, "and its recency part is the highest")
		assert.Greater(t, got.Results[0].Recency, got.Results[1].Recency)
		assert.Greater(t, got.Results[1].Recency, got.Results[2].Recency)
	})
}

func hitIDs(h []memory.Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = x.ID
	}
	return out
}

// stepClock is a clock.Clock that moves only when told; its timers never
// fire (the suite turns the backfill off).
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *stepClock) AfterFunc(time.Duration, func()) func() bool { return func() bool { return true } }

// NewTicker returns a ticker that never ticks.
func (c *stepClock) NewTicker(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }
