package storetest

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// RunMemory is the conformance suite of [memory.Store]: the long-term
// memories every store of the SDK keeps beside the agents' states.
// [RunHarness] runs it as its "memories" subtest when h.New returns a
// store that implements memory.Store (all four SDK stores do), so a
// store's one conformance test covers both; call RunMemory to run the
// memory promises alone. The store h.New returns must implement
// memory.Store, or the suite fails.
//
// What it checks, one subtest each:
//   - an agent without memories: an empty list and zero counts;
//   - round trip of every field of [memory.Record] (the fixture sets
//     every field; vectors bit for bit; times to the microsecond, UTC),
//     of a pending memory, and of 200 memories of 768 dimensions;
//   - order: oldest first, by Created then ID;
//   - identical text stored once: the access count raised, the later
//     access, the larger importance, the important mark, a vector for a
//     pending memory; a second text under a known id refused;
//   - bad records refused with [memory.ErrInvalid] (hostile agent ids,
//     bad importance, NaN vector, mismatched dimensions, NUL in the text),
//     nothing stored;
//   - UpdateMemories and SetVectors: only their fields change, unknown
//     ids are skipped, one bad record refuses the whole call;
//   - AddMemories ([memory.AddMemories], through [memory.BatchAdder]
//     when the store has it): duplicates of stored texts and within the
//     batch merged, agents mixed, an invalid record refusing the batch
//     with nothing stored;
//   - DeleteMemories: the count of those that existed; a deleted text can
//     be stored again;
//   - agents are isolated;
//   - CountMemories by space, most common first;
//   - durability across handles, when the harness can Reopen;
//   - concurrent stores of one text (one memory, every store counted)
//     and of different texts;
//   - a canceled context;
//   - a [memory.Memory] over the store: remember, recall with the fake
//     embedder, and recall again from a second handle;
//   - [memory.Searcher] (runMemorySearch): lexical search, recall by
//     words without an embedder, hybrid fusion with a memory pending its
//     vector, supersession (near-duplicates and a fact's newer value),
//     and the recency direction.
func RunMemory(t *testing.T, h Harness) {
	t.Helper()
	require.NotNil(t, h.New, "storetest: Harness.New is nil")
	ctx := context.Background()
	open := func(t *testing.T) memory.Store {
		s := h.New(t)
		ms, ok := s.(memory.Store)
		require.True(t, ok, "%T does not implement memory.Store", s)
		return ms
	}

	t.Run("fixture sets every field", func(t *testing.T) {
		r := FullMemory("scout", "m1", "x", t0)
		missing := zeroFields(reflect.ValueOf(r))
		require.Empty(t, missing, "storetest.FullMemory leaves fields zero: %s", strings.Join(missing, ", "))
	})

	t.Run("empty", func(t *testing.T) {
		s := open(t)
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.NotNil(t, recs, "an empty slice, not nil")
		assert.Empty(t, recs)
		c, err := s.CountMemories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, memory.Counts{}, c)
		n, err := s.DeleteMemories(ctx, "scout", []string{"mem-x"})
		require.NoError(t, err)
		assert.Zero(t, n)
	})

	t.Run("round trip", func(t *testing.T) {
		s := open(t)
		full := FullMemory("scout", "mem-a1b2c3d4e5f6", "Goal 'map the workspace' step list_files: {\"files\": [\"notes.md\"]} — naïve ✓ 日本", t0)
		pending := FullMemory("scout", "mem-000000000002", "FAILED: pending, no vector yet", t0.Add(time.Second))
		pending.Model, pending.Dimensions, pending.Vector = "", 0, nil
		for _, r := range []memory.Record{full, pending} {
			got, dup, err := s.AddMemory(ctx, r)
			require.NoError(t, err)
			assert.False(t, dup)
			assertRecord(t, r, got, "AddMemory returns the memory as stored")
		}
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		require.Len(t, recs, 2)
		assertRecord(t, full, recs[0], "every field survives")
		assertRecord(t, pending, recs[1], "a pending memory survives without a vector")
		if h.Reopen != nil {
			recs, err = h.Reopen(t, s.(identity.Store)).(memory.Store).Memories(ctx, "scout")
			require.NoError(t, err)
			require.Len(t, recs, 2, "a second handle reads the memories")
			assertRecord(t, full, recs[0], "a second handle reads every field")
		}
	})

	t.Run("many vectors", func(t *testing.T) {
		s := open(t)
		var want []memory.Record
		for i := range 200 {
			text := fmt.Sprintf("memory %03d about topic %d", i, i%9)
			r := FullMemory("scout", fmt.Sprintf("m%03d", i), text, t0.Add(time.Duration(i)*time.Millisecond))
			r.Vector = llmtest.Embedding(text, 768)
			r.Dimensions = 768
			_, _, err := s.AddMemory(ctx, r)
			require.NoError(t, err)
			want = append(want, r)
		}
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		require.Len(t, recs, 200)
		for i := range want {
			assertRecord(t, want[i], recs[i], fmt.Sprintf("memory %d", i))
		}
	})

	t.Run("order", func(t *testing.T) {
		s := open(t)
		for _, c := range []struct {
			id string
			at time.Duration
		}{{"c", 0}, {"b", 2 * time.Hour}, {"a", time.Hour}, {"d", 0}} {
			_, _, err := s.AddMemory(ctx, FullMemory("scout", c.id, "text "+c.id, t0.Add(c.at)))
			require.NoError(t, err)
		}
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, []string{"c", "d", "a", "b"}, ids(recs), "by Created, then ID")
	})

	t.Run("identical text stored once", func(t *testing.T) {
		s := open(t)
		first := FullMemory("scout", "m1", "the same text", t0)
		first.Model, first.Dimensions, first.Vector = "", 0, nil // pending
		first.Important, first.Importance, first.AccessCount = false, 0.4, 2
		_, _, err := s.AddMemory(ctx, first)
		require.NoError(t, err)
		second := FullMemory("scout", "m2", "the same text", t0.Add(time.Hour))
		second.Importance, second.Important = 0.9, true
		got, dup, err := s.AddMemory(ctx, second)
		require.NoError(t, err)
		assert.True(t, dup, "a known text is a duplicate")
		assert.Equal(t, "m1", got.ID, "the first memory stays")
		assert.Equal(t, 3, got.AccessCount, "its access count is raised")
		assert.True(t, got.LastAccess.Equal(second.LastAccess), "its last access is the later one")
		assert.True(t, got.Created.Equal(t0), "its creation time stays")
		assert.Equal(t, 0.9, got.Importance, "the larger importance")
		assert.True(t, got.Important, "marked important by either")
		assert.Equal(t, second.Vector, got.Vector, "a pending memory takes the new vector")
		older := FullMemory("scout", "m3", "the same text", t0.Add(-time.Hour))
		older.Importance, older.Important = 0.1, false
		got, dup, err = s.AddMemory(ctx, older)
		require.NoError(t, err)
		assert.True(t, dup)
		assert.True(t, got.LastAccess.Equal(second.LastAccess), "an earlier access does not go back")
		assert.Equal(t, 0.9, got.Importance)
		assert.True(t, got.Important)
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		require.Len(t, recs, 1, "stored once")
		assertRecord(t, got, recs[0], "the store has what AddMemory returned")

		_, _, err = s.AddMemory(ctx, FullMemory("scout", "m1", "another text under a known id", t0))
		require.ErrorIs(t, err, memory.ErrInvalid, "a known id with another text is refused")
	})

	t.Run("bad records refused", func(t *testing.T) {
		s := open(t)
		for name, mutate := range map[string]func(r *memory.Record){
			"agent ..":           func(r *memory.Record) { r.AgentID = ".." },
			"agent ../x":         func(r *memory.Record) { r.AgentID = "../x" },
			"agent upper":        func(r *memory.Record) { r.AgentID = "Scout" },
			"agent sql":          func(r *memory.Record) { r.AgentID = "a'; DROP TABLE x; --" },
			"agent empty":        func(r *memory.Record) { r.AgentID = "" },
			"id slash":           func(r *memory.Record) { r.ID = "a/b" },
			"blank text":         func(r *memory.Record) { r.Text = " \n " },
			"nul text":           func(r *memory.Record) { r.Text = "a\x00b" },
			"bad utf8":           func(r *memory.Record) { r.Text = "\xff" },
			"kind":               func(r *memory.Record) { r.Kind = "dream" },
			"importance":         func(r *memory.Record) { r.Importance = 1.01 },
			"importance nan":     func(r *memory.Record) { r.Importance = math.NaN() },
			"vector nan":         func(r *memory.Record) { r.Vector = []float32{1, float32(math.NaN()), 0} },
			"dimensions":         func(r *memory.Record) { r.Dimensions = 4 },
			"vector no model":    func(r *memory.Record) { r.Model = "" },
			"model no vector":    func(r *memory.Record) { r.Vector = nil },
			"negative access":    func(r *memory.Record) { r.AccessCount = -1 },
			"zero created":       func(r *memory.Record) { r.Created = time.Time{} },
			"zero last access":   func(r *memory.Record) { r.LastAccess = time.Time{} },
			"superseded by self": func(r *memory.Record) { r.SupersededBy = r.ID },
			"superseded by bad":  func(r *memory.Record) { r.SupersededBy = "../x" },
			"fact nul":           func(r *memory.Record) { r.Fact = "a\x00" },
		} {
			r := FullMemory("scout", "m1", "text", t0)
			mutate(&r)
			_, _, err := s.AddMemory(ctx, r)
			require.ErrorIs(t, err, memory.ErrInvalid, name)
		}
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Empty(t, recs, "nothing was stored")
		for _, id := range []string{"", "../x", "A"} {
			_, err := s.Memories(ctx, id)
			require.ErrorIs(t, err, memory.ErrInvalid, "Memories(%q)", id)
		}
	})

	t.Run("update and set vectors", func(t *testing.T) {
		s := open(t)
		a := FullMemory("scout", "a", "text a", t0)
		b := FullMemory("scout", "b", "text b", t0.Add(time.Second))
		for _, r := range []memory.Record{a, b} {
			_, _, err := s.AddMemory(ctx, r)
			require.NoError(t, err)
		}
		up := a
		up.Text, up.Created = "ignored", t0.Add(99*time.Hour)
		up.Kind, up.Importance, up.Important, up.LastAccess, up.AccessCount = memory.KindReflection, 0.05, false, t0.Add(5*time.Hour), 9
		up.Vector = []float32{9, 9, 9}
		up.Fact, up.SupersededBy = "ignored", "" // current again
		require.NoError(t, s.UpdateMemories(ctx, "scout", []memory.Record{up, {ID: "gone", Kind: memory.KindOutcome, LastAccess: t0}}))
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		want := a
		want.Kind, want.Importance, want.Important, want.LastAccess, want.AccessCount = up.Kind, up.Importance, up.Important, up.LastAccess, up.AccessCount
		want.SupersededBy = ""
		assertRecord(t, want, recs[0], "UpdateMemories changes its fields only; an unknown id is skipped")
		assertRecord(t, b, recs[1], "the other memory is untouched")

		bad := up
		bad.Importance = 2
		upB := b
		upB.AccessCount = 50
		require.ErrorIs(t, s.UpdateMemories(ctx, "scout", []memory.Record{upB, bad}), memory.ErrInvalid)
		recs, err = s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, b.AccessCount, recs[1].AccessCount, "one bad record refuses the whole call")

		vec := []float32{0.6, 0.8}
		require.NoError(t, s.SetVectors(ctx, "scout", []memory.Record{
			{ID: "a", Model: "mxbai-embed-large", Dimensions: 2, Vector: vec},
			{ID: "b"}, // pending again
			{ID: "gone", Model: "m", Dimensions: 2, Vector: vec},
		}))
		recs, err = s.Memories(ctx, "scout")
		require.NoError(t, err)
		want.Model, want.Dimensions, want.Vector = "mxbai-embed-large", 2, vec
		assertRecord(t, want, recs[0], "SetVectors changes the vector only")
		wantB := b
		wantB.Model, wantB.Dimensions, wantB.Vector = "", 0, nil
		assertRecord(t, wantB, recs[1], "a record without a vector makes the memory pending")
		require.ErrorIs(t, s.SetVectors(ctx, "scout", []memory.Record{
			{ID: "b", Model: "m", Dimensions: 2, Vector: vec},
			{ID: "a", Model: "m", Dimensions: 3, Vector: vec},
		}), memory.ErrInvalid)
		recs, err = s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.True(t, recs[1].Pending(), "one bad vector refuses the whole call")
	})

	t.Run("batch add", func(t *testing.T) {
		s := open(t)
		_, _, err := s.AddMemory(ctx, FullMemory("scout", "old", "known before", t0))
		require.NoError(t, err)
		batch := []memory.Record{
			FullMemory("scout", "b1", "first of the batch", t0.Add(1*time.Microsecond)),
			FullMemory("relay", "b2", "another agent", t0.Add(2*time.Microsecond)),
			FullMemory("scout", "b3", "known before", t0.Add(3*time.Microsecond)),
			FullMemory("scout", "b4", "first of the batch", t0.Add(4*time.Microsecond)),
		}
		got, err := memory.AddMemories(ctx, s, batch)
		require.NoError(t, err)
		require.Len(t, got, len(batch))
		assert.Equal(t, []bool{false, false, true, true}, []bool{got[0].Dup, got[1].Dup, got[2].Dup, got[3].Dup})
		assert.Equal(t, []string{"b1", "b2", "old", "b1"}, []string{got[0].Stored.ID, got[1].Stored.ID, got[2].Stored.ID, got[3].Stored.ID},
			"a known text, before or earlier in the batch, is merged")
		assert.Equal(t, batch[0].AccessCount+1, got[3].Stored.AccessCount, "merged as AddMemory merges")
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, []string{"old", "b1"}, ids(recs))
		assertRecord(t, got[3].Stored, recs[1], "the store has what AddMemories returned")
		recs, err = s.Memories(ctx, "relay")
		require.NoError(t, err)
		assert.Equal(t, []string{"b2"}, ids(recs))

		bad := FullMemory("scout", "c2", "x", t0)
		bad.Importance = 2
		_, err = memory.AddMemories(ctx, s, []memory.Record{FullMemory("scout", "c1", "valid", t0), bad})
		require.ErrorIs(t, err, memory.ErrInvalid, "an invalid record refuses the batch")
		assert.Contains(t, err.Error(), "record 1", "the error names the record")
		c, err := s.CountMemories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, 2, c.Memories, "nothing of an invalid batch is stored")
		_, err = memory.AddMemories(ctx, s, []memory.Record{FullMemory("scout", "c1", "valid", t0), FullMemory("scout", "b1", "another text", t0)})
		require.ErrorIs(t, err, memory.ErrInvalid, "a known id with another text is refused")
		c, err = s.CountMemories(ctx, "scout")
		require.NoError(t, err)
		assert.LessOrEqual(t, c.Memories, 3, "at most the records before the refused one are stored")
		got, err = memory.AddMemories(ctx, s, nil)
		require.NoError(t, err)
		assert.Empty(t, got)
	})

	t.Run("delete", func(t *testing.T) {
		s := open(t)
		for i, text := range []string{"one", "two", "three"} {
			_, _, err := s.AddMemory(ctx, FullMemory("scout", fmt.Sprintf("m%d", i), text, t0.Add(time.Duration(i))))
			require.NoError(t, err)
		}
		n, err := s.DeleteMemories(ctx, "scout", []string{"m0", "m2", "unknown", "m0"})
		require.NoError(t, err)
		assert.Equal(t, 2, n, "how many existed")
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, []string{"m1"}, ids(recs))
		got, dup, err := s.AddMemory(ctx, FullMemory("scout", "m9", "one", t0))
		require.NoError(t, err)
		assert.False(t, dup, "a deleted text can be stored again")
		assert.Equal(t, "m9", got.ID)
	})

	t.Run("agents isolated", func(t *testing.T) {
		s := open(t)
		_, _, err := s.AddMemory(ctx, FullMemory("scout", "m1", "shared text", t0))
		require.NoError(t, err)
		_, dup, err := s.AddMemory(ctx, FullMemory("analyst", "m1", "shared text", t0))
		require.NoError(t, err)
		assert.False(t, dup, "another agent's text is its own memory, even with the same id")
		n, err := s.DeleteMemories(ctx, "analyst", []string{"m1"})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Len(t, recs, 1, "deleting analyst's memory leaves scout's")
		recs, err = s.Memories(ctx, "analyst")
		require.NoError(t, err)
		assert.Empty(t, recs)
	})

	t.Run("counts", func(t *testing.T) {
		s := open(t)
		add := func(id, model string, dims int) {
			r := FullMemory("scout", id, "text "+id, t0)
			r.Model, r.Dimensions, r.Vector = model, dims, make([]float32, dims)
			if dims > 0 {
				r.Vector[0] = 1
			} else {
				r.Vector = nil
			}
			_, _, err := s.AddMemory(ctx, r)
			require.NoError(t, err)
		}
		add("a", "nomic-embed-text", 4)
		add("b", "mxbai", 2)
		add("c", "nomic-embed-text", 4)
		add("d", "", 0)
		add("e", "mxbai", 3)
		c, err := s.CountMemories(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, memory.Counts{Memories: 5, Pending: 1, Spaces: []memory.SpaceCount{
			{Space: memory.Space{Model: "nomic-embed-text", Dimensions: 4}, Count: 2},
			{Space: memory.Space{Model: "mxbai", Dimensions: 2}, Count: 1},
			{Space: memory.Space{Model: "mxbai", Dimensions: 3}, Count: 1},
		}}, c)
	})

	t.Run("concurrent stores", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				r := FullMemory("scout", fmt.Sprintf("same-%d", g), "one text from eight writers", t0.Add(time.Duration(g)*time.Second))
				r.AccessCount = 0
				_, _, err := s.AddMemory(ctx, r)
				assert.NoError(t, err)
				for i := range 5 {
					_, _, err := s.AddMemory(ctx, FullMemory("scout", fmt.Sprintf("g%d-%d", g, i), fmt.Sprintf("writer %d text %d", g, i), t0))
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Len(t, recs, 41, "one memory for the shared text, 40 others")
		for _, r := range recs {
			if r.Text == "one text from eight writers" {
				assert.Equal(t, 7, r.AccessCount, "every duplicate store counted")
				assert.True(t, r.LastAccess.Equal(t0.Add(90*time.Minute+7*time.Second)), "the latest access")
			}
		}
	})

	t.Run("canceled context", func(t *testing.T) {
		s := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := s.AddMemory(cctx, FullMemory("scout", "m1", "x", t0))
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.Memories(cctx, "scout")
		require.ErrorIs(t, err, context.Canceled)
		recs, err := s.Memories(ctx, "scout")
		require.NoError(t, err)
		assert.Empty(t, recs, "a canceled store stores nothing")
	})

	runMemorySearch(t, open)

	t.Run("memory over the store", func(t *testing.T) {
		s := open(t)
		emb := llmtest.NewFakeEmbedder("nomic-embed-text", 768)
		m, err := memory.New(memory.Config{Store: s, Embedder: emb, NoBackfill: true})
		require.NoError(t, err)
		defer m.Close()
		for _, text := range []string{"the build broke on a missing go.sum entry", "notes.md lists the workspace layout", "the rate limiter dropped requests at night"} {
			_, err := m.Remember(ctx, "scout", memory.Note{Text: text, Kind: memory.KindOutcome})
			require.NoError(t, err)
		}
		got, err := m.Recall(ctx, "scout", memory.Query{Text: "why did the build break?", K: 1})
		require.NoError(t, err)
		require.Len(t, got.Results, 1)
		assert.Equal(t, "the build broke on a missing go.sum entry", got.Results[0].Memory.Text)
		if h.Reopen == nil {
			return
		}
		again, err := memory.New(memory.Config{Store: h.Reopen(t, s.(identity.Store)).(memory.Store), Embedder: emb, NoBackfill: true})
		require.NoError(t, err)
		defer again.Close()
		got, err = again.Recall(ctx, "scout", memory.Query{Text: "why did the build break?", K: 1})
		require.NoError(t, err)
		require.Len(t, got.Results, 1, "the memories survive in the store")
		assert.Equal(t, 2, got.Results[0].Memory.AccessCount, "both recalls were saved")
	})
}

// FullMemory returns a memory of agentID with every field set: an
// important reflection, created at created (to the microsecond, UTC) and
// last accessed 90 minutes later, with an access count, a fact, superseded
// by "mem-000000000099", and a 3-dimensional vector holding a negative
// value and a subnormal one, so that a lossy vector encoding fails the
// round trip.
func FullMemory(agentID, id, text string, created time.Time) memory.Record {
	return memory.Record{
		ID: id, AgentID: agentID, Text: text, Kind: memory.KindReflection,
		Importance: 0.625, Important: true,
		Created: created.UTC().Truncate(time.Microsecond), LastAccess: created.Add(90 * time.Minute).UTC().Truncate(time.Microsecond),
		AccessCount: 4, Model: "nomic-embed-text", Dimensions: 3,
		Vector: []float32{0.6, -0.8, float32(math.SmallestNonzeroFloat32)},
		Fact:   "workspace.layout", SupersededBy: "mem-000000000099",
	}
}

// assertRecord compares two records field by field: times by instant,
// vectors bit for bit.
func assertRecord(t *testing.T, want, got memory.Record, msg string) {
	t.Helper()
	assert.True(t, want.Created.Equal(got.Created), "%s: created %v, want %v", msg, got.Created, want.Created)
	assert.True(t, want.LastAccess.Equal(got.LastAccess), "%s: last access %v, want %v", msg, got.LastAccess, want.LastAccess)
	assert.Equal(t, time.UTC, got.Created.Location(), "%s: times come back in UTC", msg)
	assert.Equal(t, bits(want.Vector), bits(got.Vector), "%s: vector bit for bit", msg)
	want.Created, want.LastAccess, want.Vector = time.Time{}, time.Time{}, nil
	got.Created, got.LastAccess, got.Vector = time.Time{}, time.Time{}, nil
	assert.Equal(t, want, got, msg)
}

func bits(v []float32) []uint32 {
	if v == nil {
		return nil
	}
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func ids(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return slices.Clip(out)
}
