package memory_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// importDup stores a record straight into the store, as an importer
// does, bypassing Remember's merge: a near-duplicate Consolidate finds.
func importDup(t *testing.T, store memory.Store, id, text string, kind memory.Kind, at time.Time, important bool) {
	t.Helper()
	_, _, err := store.AddMemory(t.Context(), memory.Record{ID: id, AgentID: "scout", Text: text, Kind: kind,
		Importance: 0.3, Important: important, Created: at, LastAccess: at, Model: llmtest.DefaultFakeEmbedModel, Dimensions: 64,
		Vector: llmtest.Embedding(text, 64)})
	require.NoError(t, err)
}

// Consolidate marks the older of each near-duplicate pair superseded by
// the newer, once: a second pass finds nothing; other kinds and distinct
// texts are left alone; nothing is deleted.
func TestConsolidate(t *testing.T) {
	store := memory.NewMemoryStore()
	for i, r := range []struct {
		id, text string
		kind     memory.Kind
	}{
		{"a1", "the backup job runs at midnight", memory.KindOutcome},
		{"a2", "The backup job runs at MIDNIGHT", memory.KindOutcome},         // same words: cosine 1
		{"a3", "midnight: the backup job runs at", memory.KindOutcome},        // and again
		{"b1", "FAILED: the backup job runs at midnight", memory.KindFailure}, // near, another kind
		{"c1", "penguins like cold water", memory.KindOutcome},                // distinct
		{"c2", "the release notes need a new section", memory.KindOutcome},    // distinct
	} {
		importDup(t, store, r.id, r.text, r.kind, t0.Add(time.Duration(i)*time.Minute), false)
	}
	m, _, ev := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 64)})
	ctx := t.Context()
	n, err := m.Consolidate(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a1 and a2 are superseded")
	by := map[string]string{}
	recs, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, recs, 6, "nothing deleted")
	for _, r := range recs {
		by[r.ID] = r.SupersededBy
	}
	assert.Equal(t, map[string]string{"a1": "a2", "a2": "a3", "a3": "", "b1": "", "c1": "", "c2": ""}, by,
		"pair by pair, oldest first, the older is superseded by the newer; in the store")
	assert.Len(t, ev.kind(memory.EventMerged), 2, "an EventMerged for each")
	assert.Equal(t, int64(2), m.Counters().Merged)

	n, err = m.Consolidate(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, n, "a second pass finds nothing")

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "backup job midnight", K: 10, Peek: true})
	require.NoError(t, err)
	var ids []string
	for _, r := range got.Results {
		ids = append(ids, r.Memory.ID)
	}
	assert.ElementsMatch(t, []string{"a3", "b1"}, ids, "one per kind; the superseded are left out")

	_, err = m.Consolidate(ctx, "Not/An/Agent")
	require.ErrorIs(t, err, memory.ErrInvalid)
}

// MergeAt above 1 never merges, in Remember or Consolidate; a lower
// MergeAt merges less similar texts.
func TestMergeAtThreshold(t *testing.T) {
	for _, c := range []struct {
		name    string
		mergeAt float64
		merged  bool
	}{
		{"never", 1.01, false},
		{"default, different words", 0, false},
		{"lenient", 0.3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, ev := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 64), MergeAt: c.mergeAt})
			ctx := t.Context()
			_, err := m.Remember(ctx, "scout", memory.Note{Text: "the backup job runs at midnight"})
			require.NoError(t, err)
			_, err = m.Remember(ctx, "scout", memory.Note{Text: "the backup job runs nightly at midnight sharp"})
			require.NoError(t, err)
			assert.Equal(t, c.merged, len(ev.kind(memory.EventMerged)) > 0)
			n, err := m.Consolidate(ctx, "scout")
			require.NoError(t, err)
			assert.Zero(t, n, "Remember already did what Consolidate would")
		})
	}
}

// A superseded memory is still Get-able and listed; forgetting the one
// that stands for it leaves the history as it was (no dangling recall).
func TestForgetTheStandingMemory(t *testing.T) {
	m, clk, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	v1, err := m.Remember(ctx, "scout", memory.Note{Text: "the port is 8080", Fact: "port"})
	require.NoError(t, err)
	clk.Advance(time.Minute)
	v2, err := m.Remember(ctx, "scout", memory.Note{Text: "the port is 9090", Fact: "port"})
	require.NoError(t, err)
	n, err := m.Forget(ctx, "scout", v2.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	list, err := m.List(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, v1.ID, list[0].ID)
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "port", K: 5, Superseded: true, Peek: true})
	require.NoError(t, err)
	require.Len(t, got.Results, 1, "the history is still there when asked")
	assert.Equal(t, v1.ID, got.Results[0].Memory.ID)
	assert.Equal(t, int64(1), m.Counters().Forgotten)
}

// A later Subscribe for the same agent replaces the earlier; OnEvent gets
// every event after the subscriber.
func TestSubscribeReplacesAndOnEventFollows(t *testing.T) {
	var mu sync.Mutex
	var order []string
	ev := func(who string) func(memory.Event) {
		return func(e memory.Event) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, who+":"+string(e.Kind))
		}
	}
	m, err := memory.New(memory.Config{Store: memory.NewMemoryStore(), OnEvent: ev("all")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	m.Subscribe("scout", ev("first"))
	m.Subscribe("scout", ev("second"))
	_, err = m.Remember(t.Context(), "scout", memory.Note{Text: "x"})
	require.NoError(t, err)
	assert.Equal(t, []string{"second:memory_pending", "all:memory_pending", "second:memory_stored", "all:memory_stored"}, order)
}

// A context that has ended: Remember and Recall return its error and
// store nothing.
func TestEndedContext(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 16)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "too late"})
	require.ErrorIs(t, err, context.Canceled)
	st, err := m.Stats(t.Context(), "scout")
	require.NoError(t, err)
	assert.Zero(t, st.Memories)
	_, err = m.Recall(ctx, "scout", memory.Query{Text: "too late"})
	require.ErrorIs(t, err, context.Canceled)
}

// Kinds filter a fallback recall too (no embedder).
func TestFallbackKeepsKinds(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{})
	ctx := t.Context()
	for i, k := range []memory.Kind{memory.KindFailure, memory.KindOutcome, memory.KindFailure, memory.KindReflection} {
		_, err := m.Remember(ctx, "scout", memory.Note{Text: fmt.Sprintf("note %d", i), Kind: k})
		require.NoError(t, err)
	}
	got, err := m.Recall(ctx, "scout", memory.Query{Text: "zebra", K: 10, Kinds: []memory.Kind{memory.KindFailure}, Peek: true})
	require.NoError(t, err)
	assert.True(t, got.Fallback)
	require.Len(t, got.Results, 2)
	for _, r := range got.Results {
		assert.Equal(t, memory.KindFailure, r.Memory.Kind)
	}
	assert.Equal(t, 2, got.Compared, "compared with the memories of the kinds asked")
}

// The in-process BM25 index: Add replaces, Remove forgets, Len counts,
// and it is safe for concurrent use.
func TestIndexMaintenance(t *testing.T) {
	x := memory.NewIndex()
	x.Add("a", "deploy the api")
	x.Add("b", "write the docs")
	assert.Equal(t, 2, x.Len())
	assert.Equal(t, []string{"a"}, hitIDs(x.Search("deploy", 10)))
	x.Add("a", "review the docs") // replaces
	assert.Equal(t, 2, x.Len())
	assert.Empty(t, x.Search("deploy", 10), "the old text is gone")
	assert.ElementsMatch(t, []string{"a", "b"}, hitIDs(x.Search("docs", 10)))
	assert.Len(t, x.Search("docs", 1), 1, "limit")
	x.Remove("b")
	x.Remove("unknown")
	assert.Equal(t, 1, x.Len())
	assert.Equal(t, []string{"a"}, hitIDs(x.Search("docs", 10)))
	assert.Empty(t, x.Search("the and of", 10), "stop words find nothing")

	var zero memory.Index // the zero value is ready
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("%d-%d", g, i)
				zero.Add(id, fmt.Sprintf("topic %d of worker %d", i%5, g))
				_ = zero.Search("topic", 5)
				if i%3 == 0 {
					zero.Remove(id)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 4*(50-17), zero.Len())
}
