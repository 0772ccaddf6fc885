package memory_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// Each weight alone decides the order: recency alone ranks the most
// recently accessed first, importance alone the most important, relevance
// alone the nearest (Generative Agents' three parts, spec'd in the
// package doc).
func TestWeightsDecideTheOrder(t *testing.T) {
	// Three memories, with the query "deploy rollback plan": "fresh" is
	// the most recent, "vital" the most important, "match" the nearest.
	for _, c := range []struct {
		name string
		w    memory.Weights
		want string
	}{
		{"recency", memory.Weights{Recency: 1}, "fresh: the cafeteria menu changed"},
		{"importance", memory.Weights{Importance: 1}, "vital: the api key rotates on fridays"},
		{"relevance", memory.Weights{Relevance: 1}, "match: deploy rollback plan written down"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, clk, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 64), MergeAt: 2})
			ctx := t.Context()
			for _, n := range []memory.Note{
				{Text: "vital: the api key rotates on fridays", Importance: 1},
				{Text: "match: deploy rollback plan written down", Importance: 0.2},
				{Text: "fresh: the cafeteria menu changed", Importance: 0.2},
			} {
				_, err := m.Remember(ctx, "scout", n)
				require.NoError(t, err)
				clk.Advance(24 * time.Hour)
			}
			w := c.w
			got, err := m.Recall(ctx, "scout", memory.Query{Text: "deploy rollback plan", K: 3, MinRelevance: memory.NoThreshold, Weights: &w, Peek: true})
			require.NoError(t, err)
			require.Len(t, got.Results, 3)
			assert.Equal(t, c.want, got.Results[0].Memory.Text)
			for i := 1; i < len(got.Results); i++ {
				assert.GreaterOrEqual(t, got.Results[i-1].Score, got.Results[i].Score, "best first")
			}
		})
	}
}

// The parts of a Result are as documented: recency is DecayPerHour to
// the hours since the last access, norms are min-max over candidates, the
// score their weighted sum.
func TestResultPartsFollowTheFormula(t *testing.T) {
	m, clk, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 64), DecayPerHour: 0.9, MergeAt: 2})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "the build cache lives in tmp", Importance: 0.2})
	require.NoError(t, err)
	clk.Advance(10 * time.Hour)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "the build server restarts nightly", Importance: 0.6})
	require.NoError(t, err)
	clk.Advance(2 * time.Hour)
	w := memory.Weights{Relevance: 0.5, Recency: 2, Importance: 3}
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "build", K: 5, MinRelevance: memory.NoThreshold, Weights: &w, Peek: true})
	require.NoError(t, err)
	require.Len(t, got.Results, 2)
	byText := map[string]memory.Result{}
	for _, r := range got.Results {
		byText[r.Memory.Text] = r
	}
	old, recent := byText["the build cache lives in tmp"], byText["the build server restarts nightly"]
	assert.InDelta(t, math.Pow(0.9, 12), old.Recency, 1e-9, "12 hours since the last access")
	assert.InDelta(t, math.Pow(0.9, 2), recent.Recency, 1e-9)
	assert.Equal(t, 0.2, old.Importance)
	assert.Equal(t, 0.6, recent.Importance)
	assert.Equal(t, 0.0, old.Norm.Recency, "min-max: the older is 0")
	assert.Equal(t, 1.0, recent.Norm.Recency, "the newer 1")
	assert.Equal(t, 0.0, old.Norm.Importance)
	assert.Equal(t, 1.0, recent.Norm.Importance)
	for _, r := range got.Results {
		assert.InDelta(t, w.Relevance*r.Norm.Relevance+w.Recency*r.Norm.Recency+w.Importance*r.Norm.Importance, r.Score, 1e-9, "the score is the weighted sum")
		assert.GreaterOrEqual(t, r.Fused, 0.0)
		assert.LessOrEqual(t, r.Fused, 1.0)
	}
	assert.Equal(t, 2, got.Candidates)
	assert.Equal(t, 2, got.Compared)
	assert.Equal(t, 2, got.Lexical, "both share the word build")
	assert.Equal(t, memory.Space{Model: llmtest.DefaultFakeEmbedModel, Dimensions: 64}, got.Space)
}

// One candidate, or candidates all equal: each normalised part is 0.5.
func TestEqualCandidatesNormaliseToHalf(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 16)})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "only one memory"})
	require.NoError(t, err)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "unrelated words", MinRelevance: memory.NoThreshold, Peek: true})
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	assert.Equal(t, memory.Weights{Relevance: 0.5, Recency: 0.5, Importance: 0.5}, got.Results[0].Norm)
}

// K caps the results; 0 means DefaultK (3).
func TestRecallK(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	for i := range 10 {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: fmt.Sprintf("note number %d", i)})
		require.NoError(t, err)
	}
	for _, c := range []struct{ k, want int }{{0, memory.DefaultK}, {1, 1}, {7, 7}, {50, 10}} {
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "note", K: c.k, Peek: true})
		require.NoError(t, err)
		assert.Len(t, got.Results, c.want, "K=%d", c.k)
	}
}

// A recall updates what it returns (last access, access count, an
// EventRecalled naming them); a peek updates nothing and says nothing.
func TestRecallTouchesWhatItReturnsPeekDoesNot(t *testing.T) {
	m, clk, ev := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 64), MergeAt: 2})
	ctx := t.Context()
	a, err := m.Remember(ctx, "scout", memory.Note{Text: "the staging database password rotated"})
	require.NoError(t, err)
	b, err := m.Remember(ctx, "scout", memory.Note{Text: "lunch was at noon"})
	require.NoError(t, err)
	clk.Advance(5 * time.Hour)

	_, err = m.Recall(ctx, "scout", memory.Query{Text: "staging database password", K: 1, Peek: true})
	require.NoError(t, err)
	assert.Empty(t, ev.kind(memory.EventRecalled), "a peek reports nothing")
	got, err := m.Get(ctx, "scout", a.ID)
	require.NoError(t, err)
	assert.Zero(t, got.AccessCount)
	assert.Equal(t, t0, got.LastAccess)

	r, err := m.Recall(ctx, "scout", memory.Query{Text: "staging database password", K: 1})
	require.NoError(t, err)
	require.Len(t, r.Results, 1)
	assert.Equal(t, a.ID, r.Results[0].Memory.ID)
	assert.Equal(t, 1, r.Results[0].Memory.AccessCount, "the result carries the update")
	assert.Nil(t, r.Results[0].Memory.Vector, "results come without vectors")
	assert.Equal(t, 64, r.Results[0].Memory.Dimensions)
	e := ev.wait(t, memory.EventRecalled)
	assert.Equal(t, []string{a.ID}, e.IDs)
	assert.Equal(t, 1, e.Count)
	assert.Equal(t, "staging database password", e.Text)

	stored, err := m.Store().Memories(ctx, "scout")
	require.NoError(t, err)
	for _, s := range stored {
		switch s.ID {
		case a.ID:
			assert.Equal(t, 1, s.AccessCount, "written to the store")
			assert.Equal(t, t0.Add(5*time.Hour), s.LastAccess)
		case b.ID:
			assert.Zero(t, s.AccessCount, "what was not returned is not touched")
		}
	}
	assert.Equal(t, int64(2), m.Counters().Recalls)
}

// The cache is a cache: after Unload a Memory reads the store again and
// recalls the same, and a second Memory over the same store sees it all.
func TestUnloadReloadsFromTheStore(t *testing.T) {
	store := memory.NewMemoryStore()
	emb := llmtest.NewFakeEmbedder("", 64)
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: emb, MergeAt: 2})
	ctx := t.Context()
	for _, text := range []string{"cedar plans the week", "cipher audits the logs", "vault keeps the secrets"} {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: text})
		require.NoError(t, err)
	}
	q := memory.Query{Text: "who audits logs", K: 3, MinRelevance: memory.NoThreshold, Peek: true}
	before, err := m.Recall(ctx, "scout", q)
	require.NoError(t, err)
	m.Unload("scout")
	after, err := m.Recall(ctx, "scout", q)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	other, _, _ := newMemory(t, memory.Config{Store: store, Embedder: emb, MergeAt: 2})
	fresh, err := other.Recall(ctx, "scout", q)
	require.NoError(t, err)
	require.Len(t, fresh.Results, 3)
	for i := range fresh.Results {
		assert.Equal(t, before.Results[i].Memory.ID, fresh.Results[i].Memory.ID)
	}
	assert.Equal(t, "cipher audits the logs", fresh.Results[0].Memory.Text)
}

func TestStatsCountsKindsAndImportant(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 16), MergeAt: 2})
	ctx := t.Context()
	for _, n := range []memory.Note{
		{Text: "FAILED: one", Kind: memory.KindFailure, Important: true},
		{Text: "FAILED: two", Kind: memory.KindFailure},
		{Text: "Goal completed: three", Kind: memory.KindReflection},
		{Text: "noticed four"},
	} {
		_, err := m.Remember(ctx, "scout", n)
		require.NoError(t, err)
	}
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Stats{
		Memories: 4, Embedded: 4, Important: 1,
		Space: memory.Space{Model: llmtest.DefaultFakeEmbedModel, Dimensions: 16},
		Kinds: map[memory.Kind]int{memory.KindFailure: 2, memory.KindReflection: 1, memory.KindObservation: 1},
	}, st)
	empty, err := m.Stats(ctx, "nobody")
	require.NoError(t, err)
	assert.Zero(t, empty.Memories, "an agent with no memories is no error")
	_, err = m.Stats(ctx, "No Body")
	require.ErrorIs(t, err, memory.ErrInvalid)
}

// DefaultImportance by kind, as documented: failures teach most.
func TestDefaultImportanceByKind(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	want := map[memory.Kind]float64{
		memory.KindFailure: 0.7, memory.KindReflection: 0.6, memory.KindObservation: 0.5,
		memory.KindOutcome: 0.3, memory.KindImported: 0.3,
	}
	require.Len(t, memory.Kinds(), len(want))
	for _, k := range memory.Kinds() {
		assert.True(t, k.Valid())
		assert.Equal(t, want[k], memory.DefaultImportance(k), "%s", k)
		r, err := m.Remember(ctx, "scout", memory.Note{Text: "a note of kind " + string(k), Kind: k})
		require.NoError(t, err)
		assert.Equal(t, want[k], r.Importance, "a note without importance gets its kind's")
	}
	r, err := m.Remember(ctx, "scout", memory.Note{Text: "no kind given"})
	require.NoError(t, err)
	assert.Equal(t, memory.KindObservation, r.Kind, "empty kind means observation")
	assert.False(t, memory.Kind("dream").Valid())
}

// A negative cap keeps everything; a cap evicts superseded memories
// before current ones, even more important ones.
func TestCapRules(t *testing.T) {
	t.Run("negative means no cap", func(t *testing.T) {
		m, _, ev := newMemory(t, memory.Config{Cap: -1})
		for i := range 30 {
			_, err := m.Remember(t.Context(), "scout", memory.Note{Text: fmt.Sprintf("memory %d", i)})
			require.NoError(t, err)
		}
		st, err := m.Stats(t.Context(), "scout")
		require.NoError(t, err)
		assert.Equal(t, 30, st.Memories)
		assert.Empty(t, ev.kind(memory.EventEvicted))
	})
	t.Run("superseded first", func(t *testing.T) {
		m, clk, ev := newMemory(t, memory.Config{Cap: 2})
		ctx := t.Context()
		old, err := m.Remember(ctx, "scout", memory.Note{Text: "the target is staging", Fact: "target", Importance: 1})
		require.NoError(t, err)
		clk.Advance(time.Hour)
		_, err = m.Remember(ctx, "scout", memory.Note{Text: "the target is production", Fact: "target", Importance: 0.1})
		require.NoError(t, err)
		clk.Advance(time.Hour)
		_, err = m.Remember(ctx, "scout", memory.Note{Text: "an unrelated dull note", Importance: 0.1})
		require.NoError(t, err)
		e := ev.wait(t, memory.EventEvicted)
		assert.Equal(t, []string{old.ID}, e.IDs, "the superseded one goes, though the most important")
	})
}

// Fact supersession is per fact: another fact's memory stays current,
// and the same fact of another agent is untouched.
func TestFactsAreIndependent(t *testing.T) {
	m, clk, ev := newMemory(t, memory.Config{})
	ctx := t.Context()
	city, err := m.Remember(ctx, "scout", memory.Note{Text: "the user lives in Lyon", Fact: "user.city"})
	require.NoError(t, err)
	lang, err := m.Remember(ctx, "scout", memory.Note{Text: "the user speaks French", Fact: "user.lang"})
	require.NoError(t, err)
	otherAgent, err := m.Remember(ctx, "vault", memory.Note{Text: "the user lives in Lyon", Fact: "user.city"})
	require.NoError(t, err)
	clk.Advance(time.Minute)
	newCity, err := m.Remember(ctx, "scout", memory.Note{Text: "the user moved to Nantes", Fact: "user.city"})
	require.NoError(t, err)
	sup := ev.wait(t, memory.EventSuperseded)
	assert.Equal(t, newCity.ID, sup.Record.ID)
	assert.Equal(t, []string{city.ID}, sup.IDs)
	assert.Equal(t, 1, sup.Count)
	for _, c := range []struct {
		agent, id, by string
	}{{"scout", city.ID, newCity.ID}, {"scout", lang.ID, ""}, {"vault", otherAgent.ID, ""}} {
		r, err := m.Get(ctx, c.agent, c.id)
		require.NoError(t, err)
		assert.Equal(t, c.by, r.SupersededBy, "%s %s", c.agent, r.Text)
	}
}

// Backfill embeds in batches of Config.Batch (an EventEmbedded each); a
// batch that fails stops it with the count so far and loses nothing.
func TestBackfillBatchesAndStopsOnFailure(t *testing.T) {
	emb := llmtest.NewFakeEmbedder("", 16)
	emb.Fail(down)
	m, _, ev := newMemory(t, memory.Config{Embedder: emb, Batch: 2, NoBackfill: true, MergeAt: 2})
	ctx := t.Context()
	for i := range 5 {
		r, err := m.Remember(ctx, "scout", memory.Note{Text: fmt.Sprintf("pending note about topic %c", 'a'+i)})
		require.NoError(t, err)
		require.True(t, r.Pending())
	}
	emb.Fail(nil)
	emb.FailNext(nil) // the first batch succeeds...
	calls, _ := emb.Calls()
	emb.FailNext(down) // ...the second fails
	n, err := m.Backfill(ctx, "scout")
	require.ErrorIs(t, err, down.Err)
	assert.Equal(t, 2, n, "the count so far")
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Stats{Memories: 5, Embedded: 2, Pending: 3, Space: st.Space, Kinds: st.Kinds}, st)

	n, err = m.Backfill(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	after, _ := emb.Calls()
	assert.Equal(t, calls+4, after, "batches of 2: one ok, one failed, then two")
	var counts []int
	for _, e := range ev.kind(memory.EventEmbedded) {
		counts = append(counts, e.Count)
	}
	assert.Equal(t, []int{2, 2, 1}, counts, "one event per batch")
	n, err = m.Backfill(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left pending")
	list, err := m.List(ctx, "scout")
	require.NoError(t, err)
	for _, r := range list {
		assert.False(t, r.Pending(), r.Text)
	}
}

// Backfill without an embedder does nothing and is no error.
func TestBackfillWithoutEmbedder(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	_, err := m.Remember(t.Context(), "scout", memory.Note{Text: "pending forever"})
	require.NoError(t, err)
	n, err := m.Backfill(t.Context(), "scout")
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Nil(t, m.Embedder())
}

// A reembed that fails part way changes nothing: every memory keeps its
// old vector and the agent its old space.
func TestReembedFailureChangesNothing(t *testing.T) {
	store := memory.NewMemoryStore()
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("old-model", 8), MergeAt: 2})
	ctx := t.Context()
	for i := range 5 {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: fmt.Sprintf("memory about %c", 'a'+i)})
		require.NoError(t, err)
	}
	before, err := store.Memories(ctx, "scout")
	require.NoError(t, err)

	emb := llmtest.NewFakeEmbedder("new-model", 16)
	emb.FailNext(nil, down) // the second batch fails
	m2, _, ev := newMemory(t, memory.Config{Store: store, Embedder: emb, Batch: 2})
	_, err = m2.Reembed(ctx, "scout")
	require.ErrorIs(t, err, down.Err)
	after, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")
	st, err := m2.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Space{Model: "old-model", Dimensions: 8}, st.Space)
	assert.Empty(t, ev.kind(memory.EventReembedded))

	n, err := m2.Reembed(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	st, err = m2.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, memory.Space{Model: "new-model", Dimensions: 16}, st.Space)
	assert.Equal(t, 5, st.Embedded)
	e := ev.wait(t, memory.EventReembedded)
	assert.Equal(t, 5, e.Count)
	assert.Equal(t, st.Space, e.Space)

	m3, _, _ := newMemory(t, memory.Config{Store: store})
	_, err = m3.Reembed(ctx, "scout")
	require.Error(t, err, "no embedder")
}

// An embedder of another space than the agent's stores new memories
// pending, Cause "space", rather than mixing spaces.
func TestEmbedderOfAnotherSpaceStoresPending(t *testing.T) {
	store := memory.NewMemoryStore()
	m, _, _ := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("old-model", 8)})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "in the old space"})
	require.NoError(t, err)
	m2, _, ev := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("new-model", 8), NoBackfill: true})
	r, err := m2.Remember(ctx, "scout", memory.Note{Text: "stored under the new embedder"})
	require.NoError(t, err)
	assert.True(t, r.Pending())
	assert.Equal(t, "space", ev.wait(t, memory.EventPending).Cause)
	_, err = m2.Recall(ctx, "scout", memory.Query{Text: "old space"})
	require.ErrorIs(t, err, memory.ErrSpace, "a query of another space is refused, not compared")
	n, err := m2.Backfill(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, n, "the backfill does not mix spaces either")
}

func TestEventString(t *testing.T) {
	for _, c := range []struct {
		e    memory.Event
		want string
	}{
		{memory.Event{Kind: memory.EventEvicted, AgentID: "scout", Count: 2}, "memory_evicted scout: 2 memories"},
	} {
		assert.Equal(t, c.want, c.e.String())
	}
	s := memory.Event{Kind: memory.EventPending, AgentID: "scout", Text: "a note", Cause: "no_embedder"}.String()
	assert.Contains(t, s, "memory_pending scout")
}

func TestSpaceString(t *testing.T) {
	assert.Equal(t, "nomic-embed-text (768 dimensions)", memory.Space{Model: "nomic-embed-text", Dimensions: 768}.String())
	assert.True(t, memory.Space{}.IsZero())
	assert.False(t, memory.Space{Model: "m"}.IsZero())
}

// A fact stated twice at the same instant (a virtual clock, or two
// stores within a microsecond): the later statement stands, whatever the
// memories' random ids.
func TestFactAtTheSameInstantLaterStands(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	for i := range 32 {
		agent := fmt.Sprintf("agent-%d", i)
		v1, err := m.Remember(ctx, agent, memory.Note{Text: "the deploy target is staging", Fact: "deploy.target"})
		require.NoError(t, err)
		v2, err := m.Remember(ctx, agent, memory.Note{Text: "the deploy target is production", Fact: "deploy.target"})
		require.NoError(t, err)
		require.Equal(t, v1.Created, v2.Created, "the same instant")
		old, err := m.Get(ctx, agent, v1.ID)
		require.NoError(t, err)
		require.Equal(t, v2.ID, old.SupersededBy, "%s: the later statement stands (ids %s, %s)", agent, v1.ID, v2.ID)
	}
}
