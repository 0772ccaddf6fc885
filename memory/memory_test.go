package memory_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
)

var down = &llm.UnavailableError{Provider: "ollama", URL: "http://127.0.0.1:11434", Hint: "start it", Err: fmt.Errorf("connection refused")}

func TestRememberStoresUnitVectorsOnce(t *testing.T) {
	store := memory.NewMemoryStore()
	emb := llmtest.NewFakeEmbedder("nomic-embed-text", 768)
	m, _, ev := newMemory(t, memory.Config{Store: store, Embedder: emb})
	ctx := t.Context()

	r, err := m.Remember(ctx, "scout", memory.Note{Text: "map the workspace", Kind: memory.KindOutcome})
	require.NoError(t, err)
	assert.Regexp(t, `^mem-[0-9a-f]{12}$`, r.ID)
	assert.Equal(t, 0.3, r.Importance, "an outcome's default importance")
	assert.Equal(t, memory.Space{Model: "nomic-embed-text", Dimensions: 768}, r.Space())

	stored, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, stored, 1)
	var norm float64
	for _, x := range stored[0].Vector {
		norm += float64(x) * float64(x)
	}
	assert.InDelta(t, 1, norm, 1e-6, "vectors are normalised once, at write")

	again, err := m.Remember(ctx, "scout", memory.Note{Text: "map the workspace", Kind: memory.KindOutcome})
	require.NoError(t, err)
	assert.Equal(t, r.ID, again.ID, "identical text is stored once")
	assert.Equal(t, 1, again.AccessCount, "and raises the access count")
	calls, _ := emb.Calls()
	assert.Equal(t, 1, calls, "a known text is not embedded again")
	stored, err = store.Memories(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, stored, 1)
	assert.Equal(t, 1, stored[0].AccessCount)
	require.Len(t, ev.kind(memory.EventStored), 2)
	assert.Equal(t, "duplicate", ev.kind(memory.EventStored)[1].Cause)

	other, err := m.Remember(ctx, "analyst", memory.Note{Text: "map the workspace"})
	require.NoError(t, err)
	assert.NotEqual(t, r.ID, other.ID, "the same text of another agent is its own memory")
	c := m.Counters()
	assert.Equal(t, int64(2), c.Stored)
	assert.Equal(t, int64(1), c.Duplicates)
}

func TestRememberRefusesBadInput(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	for _, c := range []struct {
		agent string
		note  memory.Note
	}{
		{"../etc", memory.Note{Text: "x"}},
		{"Scout", memory.Note{Text: "x"}},
		{"scout", memory.Note{Text: "   "}},
		{"scout", memory.Note{Text: "\xff"}},
		{"scout", memory.Note{Text: strings.Repeat("x", memory.MaxTextChars+1)}},
		{"scout", memory.Note{Text: "x", Kind: "dream"}},
		{"scout", memory.Note{Text: "x", Importance: 1.5}},
		{"scout", memory.Note{Text: "x", Importance: math.NaN()}},
	} {
		_, err := m.Remember(ctx, c.agent, c.note)
		require.ErrorIs(t, err, memory.ErrInvalid, "%q %+v", c.agent, c.note)
	}
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, st.Memories, "nothing bad was stored")
}

// TestRelevanceOnlyIsExactCosine checks the relevance-only mode against a
// brute-force float64 cosine over random vectors: the same ids in the
// same order (the original's: highest first, ties in insertion order),
// scores within 1e-5.
func TestRelevanceOnlyIsExactCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n, dim    int
		threshold float64
		k         int
	}{
		{50, 8, 0.2, 5},
		{500, 64, memory.NoThreshold, 20},
		{3000, 768, 0.05, 10}, // parallel scan
		{40, 768, 0.99, 3},    // nothing passes
	} {
		t.Run(fmt.Sprintf("%d×%d", c.n, c.dim), func(t *testing.T) {
			store := memory.NewMemoryStore()
			vecs := randomUnit(rng, c.n, c.dim)
			for i, v := range vecs {
				at := t0.Add(time.Duration(i) * time.Second)
				_, _, err := store.AddMemory(t.Context(), memory.Record{ID: fmt.Sprintf("m%05d", i), AgentID: "scout", Text: fmt.Sprintf("memory %d", i),
					Kind: memory.KindImported, Importance: 0.3, Created: at, LastAccess: at, Model: "m", Dimensions: c.dim, Vector: v})
				require.NoError(t, err)
			}
			m, _, _ := newMemory(t, memory.Config{Store: store})
			q := randomUnit(rng, 1, c.dim)[0]
			got, err := m.Recall(t.Context(), "scout", memory.Query{Vector: q, Space: memory.Space{Model: "m"}, RelevanceOnly: true, MinRelevance: c.threshold, K: c.k, Peek: true})
			require.NoError(t, err)
			want := bruteForce(vecs, q, c.threshold, c.k)
			require.Len(t, got.Results, len(want))
			for i, r := range got.Results {
				assert.Equal(t, fmt.Sprintf("m%05d", want[i]), r.Memory.ID, "rank %d", i)
				assert.InDelta(t, cosine(vecs[want[i]], q), r.Relevance, 1e-5)
				assert.Equal(t, r.Relevance, r.Score, "relevance only: the score is the cosine")
				assert.Equal(t, fmt.Sprintf("memory %d", want[i]), r.Memory.Text, "each id carries its own text")
			}
		})
	}
}

func TestRelevanceOnlyTiesGoToTheOlder(t *testing.T) {
	store := memory.NewMemoryStore()
	v := []float32{1, 0, 0}
	for i, id := range []string{"c", "a", "b"} {
		at := t0.Add(time.Duration(i) * time.Hour)
		_, _, err := store.AddMemory(t.Context(), memory.Record{ID: id, AgentID: "scout", Text: id, Kind: memory.KindImported, Importance: 0.3,
			Created: at, LastAccess: at, Model: "m", Dimensions: 3, Vector: v})
		require.NoError(t, err)
	}
	m, _, _ := newMemory(t, memory.Config{Store: store})
	got, err := m.Recall(t.Context(), "scout", memory.Query{Vector: []float32{2, 0, 0}, RelevanceOnly: true, K: 3})
	require.NoError(t, err)
	var ids []string
	for _, r := range got.Results {
		ids = append(ids, r.Memory.ID)
	}
	assert.Equal(t, []string{"c", "a", "b"}, ids, "equal cosines: insertion (creation) order, as the original's stable sort")
}

// TestScoreParts checks Generative Agents' score on hand-made memories:
// each part min-max normalised over the candidates and weighed.
func TestScoreParts(t *testing.T) {
	store := memory.NewMemoryStore()
	add := func(id string, v []float32, importance float64, hoursAgo float64) {
		at := t0.Add(-time.Duration(hoursAgo * float64(time.Hour)))
		_, _, err := store.AddMemory(t.Context(), memory.Record{ID: id, AgentID: "scout", Text: id, Kind: memory.KindObservation,
			Importance: importance, Created: at, LastAccess: at, Model: "m", Dimensions: 2, Vector: v})
		require.NoError(t, err)
	}
	s := float32(math.Sqrt(0.5))
	add("close-old", []float32{1, 0}, 0.2, 100)    // relevance 1
	add("mid-new", []float32{s, s}, 0.9, 0)        // relevance 0.707
	add("far", []float32{0, 1}, 0.5, 10)           // relevance 0: below the threshold
	add("mid-mid", []float32{s, s + 0.01}, 0.5, 1) // relevance ~0.70
	m, _, _ := newMemory(t, memory.Config{Store: store})

	got, err := m.Recall(t.Context(), "scout", memory.Query{Vector: []float32{1, 0}, K: 10})
	require.NoError(t, err)
	assert.Equal(t, 3, got.Candidates, "the memory below 0.35 is no candidate")
	assert.Equal(t, 4, got.Compared, "every memory was compared")
	byID := map[string]memory.Result{}
	for _, r := range got.Results {
		byID[r.Memory.ID] = r
	}
	require.Len(t, byID, 3)
	old, recent := byID["close-old"], byID["mid-new"]
	assert.InDelta(t, 1, old.Relevance, 1e-6)
	assert.InDelta(t, math.Pow(0.995, 100), old.Recency, 1e-9, "recency decays 0.995 per hour since the last access")
	assert.InDelta(t, 1, recent.Recency, 1e-9)
	assert.Equal(t, memory.Weights{Relevance: 1, Recency: 0, Importance: 0}, old.Norm, "best relevance, oldest, least important")
	assert.InDelta(t, 1, recent.Norm.Recency, 1e-9)
	assert.InDelta(t, 1, recent.Norm.Importance, 1e-9)
	for _, r := range got.Results {
		assert.InDelta(t, r.Norm.Relevance+r.Norm.Recency+r.Norm.Importance, r.Score, 1e-12, "equal weights: the score is the sum of the parts")
	}
	assert.Equal(t, "mid-new", got.Results[0].Memory.ID, "recent and important beats merely relevant")

	w := memory.Weights{Relevance: 1}
	got, err = m.Recall(t.Context(), "scout", memory.Query{Vector: []float32{1, 0}, K: 1, Weights: &w})
	require.NoError(t, err)
	assert.Equal(t, "close-old", got.Results[0].Memory.ID, "weights are per query")
}

func TestRecallUpdatesAccess(t *testing.T) {
	store := memory.NewMemoryStore()
	m, c, _ := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 0)})
	ctx := t.Context()
	r, err := m.Remember(ctx, "scout", memory.Note{Text: "the build broke on the missing go.sum entry"})
	require.NoError(t, err)
	c.Advance(3 * time.Hour)

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "missing go.sum entry", Peek: true})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Zero(t, got.Results[0].Memory.AccessCount, "a peek changes nothing")

	got, err = m.Recall(ctx, "scout", memory.Query{Text: "missing go.sum entry"})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.InDelta(t, math.Pow(0.995, 3), got.Results[0].Recency, 1e-9, "recency from the access before this recall")
	assert.Equal(t, 1, got.Results[0].Memory.AccessCount)
	assert.Equal(t, t0.Add(3*time.Hour), got.Results[0].Memory.LastAccess)
	stored, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, r.ID, stored[0].ID)
	assert.Equal(t, 1, stored[0].AccessCount, "the store has the access")
	assert.Equal(t, t0.Add(3*time.Hour), stored[0].LastAccess)
}

func TestDefaultThreshold(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 0)})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "alpha beta gamma delta"})
	require.NoError(t, err)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "completely unrelated words here"})
	require.NoError(t, err)
	assert.Empty(t, got.Results, "below 0.35: nothing")
	got, err = m.Recall(ctx, "scout", memory.Query{Text: "completely unrelated words here", MinRelevance: memory.NoThreshold})
	require.NoError(t, err)
	assert.Len(t, got.Results, 1, "NoThreshold keeps everything")
}

func TestEmbedderDownStoresPendingAndBackfills(t *testing.T) {
	store := memory.NewMemoryStore()
	emb := llmtest.NewFakeEmbedder("", 0)
	emb.Fail(down)
	m, c, ev := newMemory(t, memory.Config{Store: store, Embedder: emb})
	ctx := t.Context()

	r, err := m.Remember(ctx, "scout", memory.Note{Text: "the rate limiter failed at 3AM"})
	require.NoError(t, err, "nothing blocks on the embedder")
	assert.True(t, r.Pending(), "stored as text")
	p := ev.wait(t, memory.EventPending)
	assert.Equal(t, middleware.OutcomeUnavailable, p.Cause)
	require.ErrorIs(t, p.Err, llm.ErrUnavailable)
	assert.Equal(t, []time.Duration{memory.DefaultMinBackoff}, c.Pending(), "the backfill waits 2 s")

	// The embedder is still down: the backfill fails and backs off, 4 s.
	c.Advance(memory.DefaultMinBackoff)
	f := ev.wait(t, memory.EventBackfillFailed)
	assert.Equal(t, middleware.OutcomeUnavailable, f.Cause)
	assert.Equal(t, 4*time.Second, f.Retry)
	assert.Equal(t, []time.Duration{4 * time.Second}, c.Pending(), "the backoff doubles")

	// A busy server's Retry-After is honoured.
	emb.Fail(llm.StatusError{Provider: "ollama", StatusCode: 503, Message: "server busy", RetryAfter: time.Minute})
	c.Advance(4 * time.Second)
	f = ev.wait(t, memory.EventBackfillFailed)
	assert.Equal(t, "http_503", f.Cause)
	assert.Equal(t, []time.Duration{time.Minute}, c.Pending(), "Retry-After over the backoff")

	// Recall meanwhile: no vector to compare, recency and importance.
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "rate limiter"})
	require.NoError(t, err)
	assert.True(t, got.Fallback)
	require.Len(t, got.Results, 1, "pending memories are recalled by recency and importance")
	fb := ev.wait(t, memory.EventRecallFallback)
	assert.Equal(t, "backoff", fb.Cause, "the embedder is not asked while the backfill backs off")
	calls, _ := emb.Calls()
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "stored while backing off"})
	require.NoError(t, err)
	assert.Equal(t, "backoff", ev.wait(t, memory.EventPending).Cause)
	after, _ := emb.Calls()
	assert.Equal(t, calls, after, "a store during the backoff does not ask the embedder")

	emb.Fail(nil)
	c.Advance(time.Minute)
	e := ev.wait(t, memory.EventEmbedded)
	assert.Equal(t, 2, e.Count)
	stored, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.False(t, stored[0].Pending(), "the backfill stored the vector")
	assert.False(t, stored[1].Pending())
	got, err = m.Recall(ctx, "scout", memory.Query{Text: "rate limiter"})
	require.NoError(t, err)
	assert.False(t, got.Fallback)
	require.Len(t, got.Results, 1)
	assert.Greater(t, got.Results[0].Relevance, 0.35)
	assert.Equal(t, int64(2), m.Counters().BackfillFailures)
	assert.Equal(t, int64(2), m.Counters().Embedded)
}

func TestSlowEmbedderStoresPending(t *testing.T) {
	emb := llmtest.NewFakeEmbedder("", 0)
	emb.Hang(true)
	m, _, ev := newMemory(t, memory.Config{Embedder: emb, EmbedTimeout: time.Nanosecond})
	r, err := m.Remember(t.Context(), "scout", memory.Note{Text: "slow server"})
	require.NoError(t, err)
	assert.True(t, r.Pending())
	assert.Equal(t, middleware.OutcomeTimeout, ev.wait(t, memory.EventPending).Cause)
}

func TestNoEmbedderFallsBack(t *testing.T) {
	m, c, ev := newMemory(t, memory.Config{})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "old and unimportant", Importance: 0.1})
	require.NoError(t, err)
	assert.Equal(t, "no_embedder", ev.wait(t, memory.EventPending).Cause)
	c.Advance(48 * time.Hour)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "new and important", Importance: 0.9})
	require.NoError(t, err)
	assert.Empty(t, c.Pending(), "no backfill without an embedder")

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "anything", K: 2})
	require.NoError(t, err)
	assert.True(t, got.Fallback)
	assert.NoError(t, got.Err, "no embedder is not a failure")
	require.Len(t, got.Results, 2)
	assert.Equal(t, "new and important", got.Results[0].Memory.Text)
	assert.Zero(t, got.Results[0].Relevance)
	assert.Equal(t, "no_embedder", ev.wait(t, memory.EventRecallFallback).Cause)

	_, err = m.Recall(ctx, "scout", memory.Query{Text: "anything", RelevanceOnly: true})
	require.Error(t, err, "relevance only needs a vector")
}

func TestSpacesNeverMix(t *testing.T) {
	store := memory.NewMemoryStore()
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("nomic-embed-text", 768)})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "a memory in nomic space"})
	require.NoError(t, err)

	_, err = m.Recall(ctx, "scout", memory.Query{Vector: make1(1536), Space: memory.Space{Model: "text-embedding-3-small"}})
	require.ErrorIs(t, err, memory.ErrSpace)
	var se *memory.SpaceError
	require.ErrorAs(t, err, &se)
	for _, s := range []string{"nomic-embed-text", "768", "text-embedding-3-small", "1536"} {
		assert.Contains(t, err.Error(), s, "the error names both models and both dimensions")
	}
	_, err = m.Recall(ctx, "scout", memory.Query{Vector: make1(768), Space: memory.Space{Model: "other-768"}})
	require.ErrorIs(t, err, memory.ErrSpace, "same dimensions, another model")
	_, err = m.Recall(ctx, "scout", memory.Query{Vector: make1(384)})
	require.ErrorIs(t, err, memory.ErrSpace, "the agent's model, other dimensions")

	// A Memory with another embedder over the same store: new memories
	// wait as text, recall refuses to compare, reembed moves the agent.
	other, _, ev := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("mxbai-embed-large", 1024)})
	r, err := other.Remember(ctx, "scout", memory.Note{Text: "a memory while the spaces differ"})
	require.NoError(t, err)
	assert.True(t, r.Pending())
	assert.Equal(t, "space", ev.wait(t, memory.EventPending).Cause)
	_, err = other.Recall(ctx, "scout", memory.Query{Text: "memory"})
	require.ErrorIs(t, err, memory.ErrSpace)

	n, err := other.Reembed(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, memory.Space{Model: "mxbai-embed-large", Dimensions: 1024}, ev.wait(t, memory.EventReembedded).Space)
	st, err := other.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Stats{Memories: 2, Embedded: 2, Space: memory.Space{Model: "mxbai-embed-large", Dimensions: 1024},
		Kinds: map[memory.Kind]int{memory.KindObservation: 2}}, st)
	got, err := other.Recall(ctx, "scout", memory.Query{Text: "a memory in nomic space", K: 1})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, "a memory in nomic space", got.Results[0].Memory.Text)
	stored, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	for _, r := range stored {
		assert.Equal(t, memory.Space{Model: "mxbai-embed-large", Dimensions: 1024}, r.Space(), "the store moved too")
	}
}

func make1(n int) []float32 {
	v := make([]float32, n)
	v[0] = 1
	return v
}

func TestInterruptedReembedIsBackfilled(t *testing.T) {
	store := memory.NewMemoryStore()
	ctx := t.Context()
	emb := llmtest.NewFakeEmbedder("new-model", 16)
	for i, model := range []string{"new-model", "old-model", "new-model", ""} {
		r := memory.Record{ID: fmt.Sprintf("m%d", i), AgentID: "scout", Text: fmt.Sprintf("text %d", i), Kind: memory.KindImported,
			Importance: 0.3, Created: t0.Add(time.Duration(i)), LastAccess: t0}
		if model != "" {
			r.Model, r.Dimensions, r.Vector = model, 16, make1(16)
		}
		_, _, err := store.AddMemory(ctx, r)
		require.NoError(t, err)
	}
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: emb, NoBackfill: true})
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Space{Model: "new-model", Dimensions: 16}, st.Space, "the embedder's space wins")
	assert.Equal(t, 2, st.Embedded)
	assert.Equal(t, 2, st.Pending, "the other space's memory and the one without a vector")
	n, err := m.Backfill(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	c, err := store.CountMemories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Counts{Memories: 4, Spaces: []memory.SpaceCount{{Space: memory.Space{Model: "new-model", Dimensions: 16}, Count: 4}}}, c)
}

func TestCapEvictsLowestValueNeverImportant(t *testing.T) {
	store := memory.NewMemoryStore()
	m, c, ev := newMemory(t, memory.Config{Store: store, Cap: 3})
	ctx := t.Context()
	remember := func(text string, imp float64, important bool) {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: text, Importance: imp, Important: important})
		require.NoError(t, err)
		c.Advance(time.Hour)
	}
	remember("old unimportant but marked", 0.1, true)
	remember("old and dull", 0.1, false)
	remember("important", 0.9, false)
	remember("recent", 0.5, false)
	e := ev.wait(t, memory.EventEvicted)
	assert.Equal(t, 1, e.Count)
	got, err := m.Get(ctx, "scout", e.IDs[0])
	require.ErrorIs(t, err, memory.ErrNotFound)
	assert.Empty(t, got.Text)
	texts := func() []string {
		recs, err := store.Memories(ctx, "scout")
		require.NoError(t, err)
		var out []string
		for _, r := range recs {
			out = append(out, r.Text)
		}
		return out
	}
	assert.Equal(t, []string{"old unimportant but marked", "important", "recent"}, texts(), "the lowest value went; the marked one stays")
	remember("another", 0.5, false)
	remember("and another", 0.5, false)
	assert.Contains(t, texts(), "old unimportant but marked", "important memories are never evicted")
	assert.Len(t, texts(), 3)
	assert.Equal(t, int64(3), m.Counters().Evicted)
}

// A near-duplicate of the same kind supersedes the older memory: the
// newer stands for both and ranks, the older is kept, marked.
func TestNearDuplicatesSupersede(t *testing.T) {
	store := memory.NewMemoryStore()
	m, c, ev := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 0)})
	ctx := t.Context()
	first, err := m.Remember(ctx, "scout", memory.Note{Text: "Read notes.md: the layout", Kind: memory.KindOutcome, Importance: 0.8})
	require.NoError(t, err)
	c.Advance(time.Hour)
	// The same words in another case and order: cosine 1 under the fake.
	kept, err := m.Remember(ctx, "scout", memory.Note{Text: "read the layout, NOTES md", Kind: memory.KindOutcome})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, kept.ID, "the newer memory stands")
	assert.Equal(t, 0.8, kept.Importance, "with the larger importance")
	mg := ev.wait(t, memory.EventMerged)
	assert.Equal(t, "Read notes.md: the layout", mg.Text)
	assert.Equal(t, []string{first.ID}, mg.IDs)
	old, err := m.Get(ctx, "scout", first.ID)
	require.NoError(t, err)
	assert.Equal(t, kept.ID, old.SupersededBy, "the older is kept, superseded")

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "notes layout", K: 5, MinRelevance: memory.NoThreshold})
	require.NoError(t, err)
	require.Len(t, got.Results, 1, "near-duplicates never fill the top K together")
	assert.Equal(t, kept.ID, got.Results[0].Memory.ID)
	got, err = m.Recall(ctx, "scout", memory.Query{Text: "notes layout", K: 5, MinRelevance: memory.NoThreshold, Superseded: true, Peek: true})
	require.NoError(t, err)
	assert.Len(t, got.Results, 2, "the history when asked")

	_, err = m.Remember(ctx, "scout", memory.Note{Text: "FAILED: read notes md the layout", Kind: memory.KindFailure})
	require.NoError(t, err)
	recs, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Len(t, recs, 3, "nothing deleted")
	assert.Equal(t, int64(1), m.Counters().Merged, "another kind is never consolidated")

	// Consolidate finds what stores that bypass Remember left (imports).
	_, _, err = store.AddMemory(ctx, memory.Record{ID: "imp-1", AgentID: "scout", Text: "notes md read layout the", Kind: memory.KindOutcome,
		Importance: 0.3, Created: t0.Add(5 * time.Hour), LastAccess: t0, Model: llmtest.DefaultFakeEmbedModel, Dimensions: 768,
		Vector: llmtest.Embedding("notes md read layout the", 768)})
	require.NoError(t, err)
	m.Unload("scout")
	n, err := m.Consolidate(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	got, err = m.Recall(ctx, "scout", memory.Query{Text: "notes layout", K: 5, MinRelevance: memory.NoThreshold, Kinds: []memory.Kind{memory.KindOutcome}})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, "imp-1", got.Results[0].Memory.ID, "the newest stands")
}

// A newer value of the same fact ranks first; the older is superseded,
// not deleted, and stating it again makes it stand again only when it is
// stored as a new memory.
func TestFactSupersedes(t *testing.T) {
	m, c, ev := newMemory(t, memory.Config{})
	ctx := t.Context()
	v1, err := m.Remember(ctx, "scout", memory.Note{Text: "the deploy target is staging", Fact: "deploy.target"})
	require.NoError(t, err)
	c.Advance(time.Hour)
	v2, err := m.Remember(ctx, "scout", memory.Note{Text: "the deploy target is now production", Fact: "deploy.target"})
	require.NoError(t, err)
	sup := ev.wait(t, memory.EventSuperseded)
	assert.Equal(t, []string{v1.ID}, sup.IDs)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "what is the deploy target?", K: 3})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, v2.ID, got.Results[0].Memory.ID)
	old, err := m.Get(ctx, "scout", v1.ID)
	require.NoError(t, err)
	assert.Equal(t, v2.ID, old.SupersededBy)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "x", Fact: strings.Repeat("f", memory.MaxFactChars+1)})
	require.ErrorIs(t, err, memory.ErrInvalid)
}

func TestForgetAndKinds(t *testing.T) {
	m, _, ev := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 0)})
	ctx := t.Context()
	a, err := m.Remember(ctx, "scout", memory.Note{Text: "FAILED: the deploy of the api", Kind: memory.KindFailure})
	require.NoError(t, err)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "Goal 'deploy the api' step write_file: ok", Kind: memory.KindOutcome})
	require.NoError(t, err)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "deploy the api", Kinds: []memory.Kind{memory.KindFailure}, MinRelevance: memory.NoThreshold})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, a.ID, got.Results[0].Memory.ID)

	n, err := m.Forget(ctx, "scout", a.ID, "mem-unknown")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{a.ID}, ev.wait(t, memory.EventForgotten).IDs)
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Memories)
}

func TestConcurrentUse(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 64), Cap: 50})
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			agent := fmt.Sprintf("agent-%d", g%2)
			for i := range 40 {
				_, err := m.Remember(ctx, agent, memory.Note{Text: fmt.Sprintf("goroutine %d note %d topic %d", g, i, i%5)})
				assert.NoError(t, err)
				_, err = m.Recall(ctx, agent, memory.Query{Text: fmt.Sprintf("topic %d", i%5)})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	for _, agent := range []string{"agent-0", "agent-1"} {
		st, err := m.Stats(ctx, agent)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Memories, 50, "the cap holds under concurrency")
		recs, err := m.Store().Memories(ctx, agent)
		require.NoError(t, err)
		assert.Len(t, recs, st.Memories, "the cache and the store agree")
	}
}

func TestSubscribe(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	var got []memory.EventKind
	cancel := m.Subscribe("scout", func(e memory.Event) { got = append(got, e.Kind) })
	_, err := m.Remember(context.Background(), "scout", memory.Note{Text: "x"})
	require.NoError(t, err)
	_, err = m.Remember(context.Background(), "analyst", memory.Note{Text: "y"})
	require.NoError(t, err)
	cancel()
	_, err = m.Remember(context.Background(), "scout", memory.Note{Text: "z"})
	require.NoError(t, err)
	assert.Equal(t, []memory.EventKind{memory.EventPending, memory.EventStored}, got, "only scout's events, until cancelled")
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []memory.Config{
		{},
		{Store: memory.NewMemoryStore(), Weights: memory.Weights{Relevance: -1}},
		{Store: memory.NewMemoryStore(), DecayPerHour: 1.5},
		{Store: memory.NewMemoryStore(), EmbedTimeout: -1},
	} {
		_, err := memory.New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 768, 1000} {
		a, b := make([]float32, n), make([]float32, n+3) // b longer: the common length counts
		var want float64
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		assert.InDelta(t, want, float64(memory.Dot(a, b)), 1e-3*max(1, math.Abs(want)), "n=%d", n)
	}
}
