package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
)

// validRecord returns a record MemoryStore accepts, with a vector of dim
// dimensions (0 for a pending one).
func validRecord(id, text string, dim int) memory.Record {
	r := memory.Record{ID: id, AgentID: "scout", Text: text, Kind: memory.KindObservation,
		Importance: 0.5, Created: t0, LastAccess: t0}
	if dim > 0 {
		r.Model, r.Dimensions = "m", dim
		r.Vector = llmtest.Embedding(text, dim)
	}
	return r
}

// A store refuses a record that does not validate, with ErrInvalid, and
// keeps what it had: spec's "bad input gets a clear error and loses
// nothing".
func TestStoreRefusesBadRecordsAndKeepsWhatItHad(t *testing.T) {
	nan := validRecord("mem-nan", "a vector with NaN", 4)
	nan.Vector[2] = float32(math.NaN())
	short := validRecord("mem-short", "a vector shorter than its dimensions", 4)
	short.Vector = short.Vector[:3]
	noModel := validRecord("mem-nomodel", "a vector without a model", 4)
	noModel.Model = ""
	dimsNoVector := validRecord("mem-dims", "dimensions but no vector", 0)
	dimsNoVector.Dimensions = 8
	for _, c := range []struct {
		name string
		mod  func(*memory.Record)
		rec  *memory.Record
		want string
	}{
		{name: "invalid UTF-8", mod: func(r *memory.Record) { r.Text = "bad \xc3\x28 text" }, want: "UTF-8"},
		{name: "NUL", mod: func(r *memory.Record) { r.Text = "nul\x00inside" }, want: "NUL"},
		{name: "blank", mod: func(r *memory.Record) { r.Text = " \t\n" }, want: "blank"},
		{name: "oversize", mod: func(r *memory.Record) { r.Text = strings.Repeat("é", memory.MaxTextChars+1) }, want: "characters"},
		{name: "bad id", mod: func(r *memory.Record) { r.ID = "-starts-with-dash" }},
		{name: "bad agent", mod: func(r *memory.Record) { r.AgentID = "Scout" }},
		{name: "unknown kind", mod: func(r *memory.Record) { r.Kind = "dream" }},
		{name: "importance above 1", mod: func(r *memory.Record) { r.Importance = 1.01 }},
		{name: "zero created", mod: func(r *memory.Record) { r.Created = time.Time{} }},
		{name: "negative access count", mod: func(r *memory.Record) { r.AccessCount = -1 }},
		{name: "NaN in vector", rec: &nan},
		{name: "vector shorter than dimensions", rec: &short},
		{name: "vector without model", rec: &noModel},
		{name: "dimensions without vector", rec: &dimsNoVector},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			store := memory.NewMemoryStore()
			good := validRecord("mem-good", "a good memory", 4)
			_, _, err := store.AddMemory(ctx, good)
			require.NoError(t, err)

			bad := validRecord("mem-bad", "a bad memory", 4)
			if c.rec != nil {
				bad = *c.rec
			} else {
				c.mod(&bad)
			}
			_, _, err = store.AddMemory(ctx, bad)
			require.ErrorIs(t, err, memory.ErrInvalid)
			if c.want != "" {
				assert.Contains(t, err.Error(), c.want, "the error says why")
			}
			recs, err := store.Memories(ctx, "scout")
			require.NoError(t, err)
			require.Len(t, recs, 1, "nothing was lost, nothing half-stored")
			assert.Equal(t, good.Text, recs[0].Text)
			assert.Equal(t, good.Vector, recs[0].Vector)
		})
	}
}

// A second record with a known ID and another text is refused; the same
// text under any id is a duplicate (Store.AddMemory's contract).
func TestStoreDuplicateRules(t *testing.T) {
	ctx := t.Context()
	store := memory.NewMemoryStore()
	first := validRecord("mem-1", "deploy went fine", 0)
	_, dup, err := store.AddMemory(ctx, first)
	require.NoError(t, err)
	assert.False(t, dup)

	_, _, err = store.AddMemory(ctx, validRecord("mem-1", "another text", 0))
	require.ErrorIs(t, err, memory.ErrInvalid, "an id is one memory")

	later := validRecord("mem-2", "deploy went fine", 4)
	later.LastAccess = t0.Add(time.Hour)
	later.Importance = 0.9
	later.Important = true
	later.Fact = "deploy.status"
	got, dup, err := store.AddMemory(ctx, later)
	require.NoError(t, err)
	assert.True(t, dup)
	assert.Equal(t, "mem-1", got.ID, "the first id stays")
	assert.Equal(t, 1, got.AccessCount)
	assert.Equal(t, t0.Add(time.Hour), got.LastAccess, "the later access")
	assert.Equal(t, 0.9, got.Importance, "the larger importance")
	assert.True(t, got.Important)
	assert.Equal(t, "deploy.status", got.Fact, "the fact it had not")
	assert.False(t, got.Pending(), "a pending memory takes the vector")
	assert.Equal(t, got, memory.Merge(first, later), "Merge is the same rule")

	older := validRecord("mem-3", "deploy went fine", 0)
	older.Importance = 0.1
	got, _, err = store.AddMemory(ctx, older)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), got.LastAccess, "an earlier access never moves it back")
	assert.Equal(t, 0.9, got.Importance)
	assert.False(t, got.Pending(), "a pending duplicate never drops the vector")
	assert.Equal(t, 2, got.AccessCount)
}

// Records go in and come out as copies: changing what a store returned,
// or what was given to it, changes nothing stored.
func TestStoreCopiesRecords(t *testing.T) {
	ctx := t.Context()
	store := memory.NewMemoryStore()
	r := validRecord("mem-1", "copy me", 4)
	want := append([]float32(nil), r.Vector...)
	_, _, err := store.AddMemory(ctx, r)
	require.NoError(t, err)
	r.Vector[0] = 42
	recs, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, want, recs[0].Vector, "the store copied the vector it was given")
	recs[0].Vector[1] = 42
	recs[0].Text = "changed"
	again, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, want, again[0].Vector, "and gives out copies")
	assert.Equal(t, "copy me", again[0].Text)

	c := again[0].Clone()
	c.Vector[0] = 7
	assert.Equal(t, want, again[0].Vector, "Clone shares nothing")
}

func TestRecallRefusesBadQueries(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("m", 8)})
	ctx := t.Context()
	_, err := m.Remember(ctx, "scout", memory.Note{Text: "one memory to recall"})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		agent string
		q     memory.Query
		is    error
	}{
		{"bad agent", "../scout", memory.Query{Text: "x"}, memory.ErrInvalid},
		{"negative K", "scout", memory.Query{Text: "x", K: -1}, memory.ErrInvalid},
		{"MinRelevance above 1", "scout", memory.Query{Text: "x", MinRelevance: 1.5}, memory.ErrInvalid},
		{"MinRelevance below -1", "scout", memory.Query{Text: "x", MinRelevance: -2}, memory.ErrInvalid},
		{"negative weight", "scout", memory.Query{Text: "x", Weights: &memory.Weights{Recency: -1}}, memory.ErrInvalid},
		{"unknown kind", "scout", memory.Query{Text: "x", Kinds: []memory.Kind{"dream"}}, memory.ErrInvalid},
		{"no text, no vector", "scout", memory.Query{}, memory.ErrInvalid},
		{"vector and space disagree", "scout", memory.Query{Vector: make1(8), Space: memory.Space{Model: "m", Dimensions: 9}}, memory.ErrInvalid},
		{"zero vector", "scout", memory.Query{Vector: make([]float32, 8)}, memory.ErrInvalid},
		{"wrong dimensions", "scout", memory.Query{Vector: make1(9)}, memory.ErrSpace},
		{"wrong model", "scout", memory.Query{Vector: make1(8), Space: memory.Space{Model: "other"}}, memory.ErrSpace},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.Recall(ctx, c.agent, c.q)
			require.ErrorIs(t, err, c.is)
		})
	}
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Memories, "refused recalls change nothing")
	got, err := m.Get(ctx, "scout", mustOnlyID(t, m, "scout"))
	require.NoError(t, err)
	assert.Zero(t, got.AccessCount, "a refused recall touches no access count")
}

// mustOnlyID returns the id of the agent's one memory.
func mustOnlyID(t *testing.T, m *memory.Memory, agent string) string {
	t.Helper()
	recs, err := m.List(t.Context(), agent)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	return recs[0].ID
}

func TestValidators(t *testing.T) {
	for _, c := range []struct {
		fn   func(string) error
		name string
		in   string
		ok   bool
	}{
		{memory.ValidateAgentID, "agent", "scout", true},
		{memory.ValidateAgentID, "agent", "agent_2-b", true},
		{memory.ValidateAgentID, "agent", strings.Repeat("a", 64), true},
		{memory.ValidateAgentID, "agent", strings.Repeat("a", 65), false},
		{memory.ValidateAgentID, "agent", "", false},
		{memory.ValidateAgentID, "agent", "_hidden", false},
		{memory.ValidateAgentID, "agent", "-flag", false},
		{memory.ValidateAgentID, "agent", "Scout", false},
		{memory.ValidateAgentID, "agent", "a/b", false},
		{memory.ValidateAgentID, "agent", "a.b", false},
		{memory.ValidateID, "id", "mem-0123456789ab", true},
		{memory.ValidateID, "id", "Orig.ID:42_x", true},
		{memory.ValidateID, "id", strings.Repeat("x", 128), true},
		{memory.ValidateID, "id", strings.Repeat("x", 129), false},
		{memory.ValidateID, "id", ".hidden", false},
		{memory.ValidateID, "id", "with space", false},
		{memory.ValidateID, "id", "ü", false},
		{memory.ValidateID, "id", "", false},
		{memory.ValidateText, "text", "ok", true},
		{memory.ValidateText, "text", strings.Repeat("日", memory.MaxTextChars), true},
		{memory.ValidateText, "text", strings.Repeat("日", memory.MaxTextChars+1), false},
		{memory.ValidateText, "text", "\xff", false},
		{memory.ValidateText, "text", "a\x00b", false},
		{memory.ValidateText, "text", "\u00a0\u2003", false}, // Unicode blanks
	} {
		err := c.fn(c.in)
		if c.ok {
			assert.NoError(t, err, "%s %q", c.name, c.in)
		} else {
			assert.ErrorIs(t, err, memory.ErrInvalid, "%s %q", c.name, c.in)
		}
	}
	assert.Regexp(t, `^mem-[0-9a-f]{12}$`, memory.NewID())
	assert.NotEqual(t, memory.NewID(), memory.NewID())
}

func TestVectorEncodingRoundTrips(t *testing.T) {
	for _, v := range [][]float32{
		{1},
		{0.5, -0.25, float32(math.SmallestNonzeroFloat32), math.MaxFloat32, float32(math.Inf(-1))},
		llmtest.Embedding("a text", 768),
	} {
		b := memory.EncodeVector(v)
		assert.Len(t, b, 4*len(v))
		got, err := memory.DecodeVector(b)
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
	assert.Nil(t, memory.EncodeVector(nil))
	got, err := memory.DecodeVector(nil)
	require.NoError(t, err)
	assert.Nil(t, got)
	// Little-endian IEEE 754: 1.0 is 00 00 80 3f.
	assert.Equal(t, []byte{0, 0, 0x80, 0x3f}, memory.EncodeVector([]float32{1}))
	_, err = memory.DecodeVector([]byte{1, 2, 3})
	require.ErrorIs(t, err, memory.ErrInvalid)
}

func TestNormalize(t *testing.T) {
	u, err := memory.Normalize([]float32{3, 4})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{0.6, 0.8}, u, 1e-7)
	in := []float32{3, 4}
	_, _ = memory.Normalize(in)
	assert.Equal(t, []float32{3, 4}, in, "a new slice; the input stays")
	for _, bad := range [][]float32{{0, 0}, {1, float32(math.NaN())}, {float32(math.Inf(1)), 1}, nil} {
		_, err := memory.Normalize(bad)
		assert.ErrorIs(t, err, memory.ErrInvalid, "%v", bad)
	}
	// Large values: the sum of squares in float64 does not overflow.
	u, err = memory.Normalize([]float32{3e38, 3e38})
	require.NoError(t, err)
	assert.InDelta(t, math.Sqrt(0.5), float64(u[0]), 1e-6)
}

// failingStore fails its writes on demand, as a disk that is full.
type failingStore struct {
	*memory.MemoryStore
	mu   sync.Mutex
	fail error
}

func (s *failingStore) setFail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

func (s *failingStore) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail
}

func (s *failingStore) AddMemory(ctx context.Context, r memory.Record) (memory.Record, bool, error) {
	if err := s.err(); err != nil {
		return memory.Record{}, false, err
	}
	return s.MemoryStore.AddMemory(ctx, r)
}

func (s *failingStore) UpdateMemories(ctx context.Context, agentID string, recs []memory.Record) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.MemoryStore.UpdateMemories(ctx, agentID, recs)
}

func (s *failingStore) DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error) {
	if err := s.err(); err != nil {
		return 0, err
	}
	return s.MemoryStore.DeleteMemories(ctx, agentID, ids)
}

// A store that fails: Remember and Forget return its error wrapped and
// naming the agent, the cache does not run ahead of the store, and a
// recall's access update that fails is an EventError, not a lost recall.
func TestStoreFailuresAreReturnedAndLoseNothing(t *testing.T) {
	diskFull := errors.New("disk full")
	store := &failingStore{MemoryStore: memory.NewMemoryStore()}
	m, _, ev := newMemory(t, memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 16)})
	ctx := t.Context()
	kept, err := m.Remember(ctx, "scout", memory.Note{Text: "stored before the disk filled"})
	require.NoError(t, err)

	store.setFail(diskFull)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "stored while the disk is full"})
	require.ErrorIs(t, err, diskFull)
	assert.Contains(t, err.Error(), "scout", "the error names the agent")
	_, err = m.Forget(ctx, "scout", kept.ID)
	require.ErrorIs(t, err, diskFull)

	got, err := m.Recall(ctx, "scout", memory.Query{Text: "stored before the disk filled"})
	require.NoError(t, err, "a failed access update does not fail the recall")
	require.Len(t, got.Results, 1)
	assert.Equal(t, kept.ID, got.Results[0].Memory.ID)
	errEv := ev.wait(t, memory.EventError)
	require.ErrorIs(t, errEv.Err, diskFull)
	assert.Equal(t, "disk full", errEv.Error)

	list, err := m.List(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, list, 1, "the refused memory is not in the cache either")
	assert.Equal(t, kept.ID, list[0].ID, "and the forgotten one was not forgotten")

	store.setFail(nil)
	_, err = m.Remember(ctx, "scout", memory.Note{Text: "stored while the disk is full"})
	require.NoError(t, err, "the same note stores once the disk has room")
	st, err := m.Stats(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 2, st.Memories)
}

// Many goroutines storing the same text for one agent store it once; the
// others raise its access count (run with -race).
func TestConcurrentDuplicatesStoreOnce(t *testing.T) {
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 32)})
	ctx := t.Context()
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := m.Remember(ctx, "scout", memory.Note{Text: "the same lesson, learned by every worker"})
			assert.NoError(t, err)
			ids[i] = r.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id, "one memory")
	}
	recs, err := m.Store().Memories(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, n-1, recs[0].AccessCount)
	c := m.Counters()
	assert.Equal(t, int64(1), c.Stored)
	assert.Equal(t, int64(n-1), c.Duplicates)
}

// Agents are apart: one agent's memories are never recalled, counted or
// forgotten for another.
func TestAgentsAreIsolated(t *testing.T) {
	// MergeAt above 1: the three similar notes stay three memories.
	m, _, _ := newMemory(t, memory.Config{Embedder: llmtest.NewFakeEmbedder("", 32), MergeAt: 2})
	ctx := t.Context()
	for _, agent := range []string{"cedar", "cipher", "vault"} {
		for i := range 3 {
			_, err := m.Remember(ctx, agent, memory.Note{Text: fmt.Sprintf("%s keeps the vault key %d", agent, i)})
			require.NoError(t, err)
		}
	}
	got, err := m.Recall(ctx, "cipher", memory.Query{Text: "vault key", K: 10, MinRelevance: memory.NoThreshold})
	require.NoError(t, err)
	require.Len(t, got.Results, 3)
	for _, r := range got.Results {
		assert.Equal(t, "cipher", r.Memory.AgentID)
		assert.True(t, strings.HasPrefix(r.Memory.Text, "cipher "), r.Memory.Text)
	}
	vault, err := m.List(ctx, "vault")
	require.NoError(t, err)
	n, err := m.Forget(ctx, "cipher", vault[0].ID)
	require.NoError(t, err)
	assert.Zero(t, n, "an id of another agent forgets nothing")
	st, err := m.Stats(ctx, "vault")
	require.NoError(t, err)
	assert.Equal(t, 3, st.Memories)
}
