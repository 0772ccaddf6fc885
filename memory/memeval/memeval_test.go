package memeval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/memory/memeval"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

func load(t *testing.T) *memeval.Dataset {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "recall.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	ds, err := memeval.Load(f)
	require.NoError(t, err)
	return ds
}

// The figures of testdata/recall.jsonl are pinned, "queries any@1 any@5
// any@10 all@10 mrr": lexical only in each store (SQLite's FTS5 stems
// with Porter, not Snowball, and takes its BM25 statistics over every
// agent of the file), and hybrid with the fake embedder. Paraphrases
// share few words with their answers.
func TestPinnedFigures(t *testing.T) {
	ds := load(t)
	require.Len(t, ds.Memories, 23)
	require.Len(t, ds.Queries, 20)
	stores := map[string]func(t *testing.T) memory.Store{
		"memory": func(t *testing.T) memory.Store { return memory.NewMemoryStore() },
		"file": func(t *testing.T) memory.Store {
			s, err := filestore.Open(t.TempDir(), filestore.Options{})
			require.NoError(t, err)
			return s
		},
		"sqlite": func(t *testing.T) memory.Store {
			s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), sqlitestore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	want := map[string][2]string{
		"memory": {"20 0.850 0.900 0.900 0.900 0.875", "3 0.333 0.667 0.667 0.667 0.500"},
		"file":   {"20 0.850 0.900 0.900 0.900 0.875", "3 0.333 0.667 0.667 0.667 0.500"},
		"sqlite": {"20 0.900 0.900 0.900 0.900 0.900", "3 0.667 0.667 0.667 0.667 0.667"},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			rep, err := memeval.Run(context.Background(), ds, memeval.Options{Store: open(t), K: 10})
			require.NoError(t, err)
			assert.True(t, rep.LexicalOnly)
			assert.Equal(t, want[name][0], figures(rep.All))
			assert.Equal(t, want[name][1], figures(rep.Categories["paraphrase"]))
		})
	}
	t.Run("hybrid", func(t *testing.T) {
		rep, err := memeval.Run(context.Background(), ds, memeval.Options{Store: memory.NewMemoryStore(), Embedder: llmtest.NewFakeEmbedder("", 0), K: 10})
		require.NoError(t, err)
		assert.False(t, rep.LexicalOnly)
		assert.Equal(t, 23, rep.Embedded)
		assert.Equal(t, "20 0.800 0.900 0.950 0.950 0.848", figures(rep.All))
	})
}

func figures(m memeval.Metrics) string {
	return fmt.Sprintf("%d %.3f %.3f %.3f %.3f %.3f", m.Queries, m.RecallAny1, m.RecallAny5, m.RecallAnyK, m.RecallAllK, m.MRR)
}

func TestReportJSONAndText(t *testing.T) {
	rep, err := memeval.Run(context.Background(), load(t), memeval.Options{Store: memory.NewMemoryStore(), K: 5})
	require.NoError(t, err)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	all := got["all"].(map[string]any)
	for _, k := range []string{"queries", "recall_any@1", "recall_any@5", "recall_all@5", "mrr"} {
		assert.Contains(t, all, k)
	}
	assert.Contains(t, got["categories"], "temporal")
	var sb strings.Builder
	require.NoError(t, rep.Text(&sb))
	assert.Contains(t, sb.String(), "lexical only")
	assert.Contains(t, sb.String(), "temporal")
}

func TestLoadRefusesBadLines(t *testing.T) {
	for name, data := range map[string]string{
		"bad json":     `{"kind":`,
		"unknown kind": `{"kind":"fact","agent":"a","text":"x"}`,
		"bad agent":    `{"kind":"memory","agent":"A","id":"m1","text":"x","time":"2026-01-01T00:00:00Z"}`,
		"bad time":     `{"kind":"memory","agent":"a","id":"m1","text":"x","time":"yesterday"}`,
		"importance":   `{"kind":"memory","agent":"a","id":"m1","text":"x","time":"2026-01-01T00:00:00Z","importance":2}`,
		"twice": `{"kind":"memory","agent":"a","id":"m1","text":"x","time":"2026-01-01T00:00:00Z"}
{"kind":"memory","agent":"a","id":"m1","text":"y","time":"2026-01-01T00:00:00Z"}`,
		"no gold":      `{"kind":"query","agent":"a","text":"x"}`,
		"unknown gold": `{"kind":"query","agent":"a","text":"x","gold":["m9"]}`,
		"no queries":   `{"kind":"memory","agent":"a","id":"m1","text":"x","time":"2026-01-01T00:00:00Z"}`,
		"extra field":  `{"kind":"query","agent":"a","text":"x","gold":["m1"],"golden":1}`,
	} {
		_, err := memeval.Load(strings.NewReader(data))
		assert.Error(t, err, name)
	}
}

func TestRunRefusesAUsedStore(t *testing.T) {
	ds := load(t)
	s := memory.NewMemoryStore()
	_, err := memeval.Run(context.Background(), ds, memeval.Options{Store: s})
	require.NoError(t, err)
	_, err = memeval.Run(context.Background(), ds, memeval.Options{Store: s})
	require.ErrorContains(t, err, "fresh store")
}

// countingStore counts the store writes of a Run: single adds, and
// batches with their sizes.
type countingStore struct {
	*memory.MemoryStore
	adds    int
	batches []int
}

func (s *countingStore) AddMemory(ctx context.Context, r memory.Record) (memory.Record, bool, error) {
	s.adds++
	return s.MemoryStore.AddMemory(ctx, r)
}

func (s *countingStore) AddMemories(ctx context.Context, recs []memory.Record) ([]memory.Added, error) {
	s.batches = append(s.batches, len(recs))
	return s.MemoryStore.AddMemories(ctx, recs)
}

// A run stores the memories BatchSize at a time, in one write each, the
// last batch holding the rest; the figures do not depend on the batches.
func TestRunStoresInBatches(t *testing.T) {
	ds := load(t)
	ctx := context.Background()
	var reports []*memeval.Report
	for _, tc := range []struct {
		size    int
		batches []int
	}{
		{size: 10, batches: []int{10, 10, 3}},
		{size: 0, batches: []int{23}}, // DefaultBatchSize
		{size: 23, batches: []int{23}},
		{size: 1, batches: slices.Repeat([]int{1}, 23)},
	} {
		s := &countingStore{MemoryStore: memory.NewMemoryStore()}
		rep, err := memeval.Run(ctx, ds, memeval.Options{Store: s, K: 10, BatchSize: tc.size})
		require.NoError(t, err)
		assert.Zero(t, s.adds, "size %d: no single adds", tc.size)
		assert.Equal(t, tc.batches, s.batches, "size %d", tc.size)
		rep.Seconds, rep.RecallMillis = 0, 0
		reports = append(reports, rep)
	}
	for _, r := range reports[1:] {
		assert.Equal(t, reports[0], r, "the same figures whatever the batch size")
	}
	_, err := memeval.Run(ctx, ds, memeval.Options{Store: memory.NewMemoryStore(), BatchSize: -1})
	require.Error(t, err)
}
