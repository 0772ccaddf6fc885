package filestore_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/storetest"
)

var mt0 = time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)

func openStore(t *testing.T, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	return s
}

func addN(t *testing.T, s *filestore.Store, n int) {
	t.Helper()
	for i := range n {
		_, _, err := s.AddMemory(t.Context(), storetest.FullMemory("scout", fmt.Sprintf("m%03d", i), fmt.Sprintf("memory %d", i), mt0.Add(time.Duration(i)*time.Second)))
		require.NoError(t, err)
	}
}

func TestMemoryLogTornEndIgnoredAndCut(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	addN(t, s, 3)
	path := s.MemoryPath("scout")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`1234abcd {"op":"add","rec":{"id":"m9","te`) // a write cut short
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s2 := openStore(t, dir)
	recs, err := s2.Memories(t.Context(), "scout")
	require.NoError(t, err, "a torn last line is ignored")
	assert.Len(t, recs, 3)
	_, _, err = s2.AddMemory(t.Context(), storetest.FullMemory("scout", "m4", "after the tear", mt0.Add(time.Hour)))
	require.NoError(t, err)
	recs, err = openStore(t, dir).Memories(t.Context(), "scout")
	require.NoError(t, err, "the torn end was cut off before the append")
	assert.Len(t, recs, 4)
}

func TestMemoryLogCorruptLineNamed(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	addN(t, s, 3)
	path := s.MemoryPath("scout")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	lines[1] = strings.Replace(lines[1], "memory 1", "memory X", 1) // the checksum no longer matches
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600))

	s2 := openStore(t, dir)
	_, err = s2.Memories(t.Context(), "scout")
	require.ErrorIs(t, err, identity.ErrCorrupt)
	var ce *identity.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, path, ce.Path)
	assert.Contains(t, ce.Reason, "line 2")
	_, _, err = s2.AddMemory(t.Context(), storetest.FullMemory("scout", "m9", "new", mt0))
	require.ErrorIs(t, err, identity.ErrCorrupt, "a corrupt log is never written over")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(lines, ""), string(after), "the file is left for a person")
}

func TestMemoryLogCompacts(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	addN(t, s, 10)
	r := storetest.FullMemory("scout", "m000", "memory 0", mt0)
	for i := range 300 {
		r.AccessCount = i
		require.NoError(t, s.UpdateMemories(t.Context(), "scout", []memory.Record{r}))
	}
	data, err := os.ReadFile(s.MemoryPath("scout"))
	require.NoError(t, err)
	assert.Less(t, strings.Count(string(data), "\n"), 256, "the log was rewritten")
	recs, err := openStore(t, dir).Memories(t.Context(), "scout")
	require.NoError(t, err)
	require.Len(t, recs, 10)
	assert.Equal(t, 299, recs[0].AccessCount, "nothing lost by the compaction")
	assert.Equal(t, []float32{0.6, -0.8, recs[0].Vector[2]}, recs[0].Vector)
	got, dup, err := s.AddMemory(t.Context(), storetest.FullMemory("scout", "again", "memory 5", mt0.Add(time.Hour)))
	require.NoError(t, err)
	assert.True(t, dup)
	assert.Equal(t, storetest.FullMemory("scout", "m005", "memory 5", mt0).Vector, got.Vector, "the vector is read back from the compacted log")
}

func TestMemoryLogNoticesAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	a, b := openStore(t, dir), openStore(t, dir)
	addN(t, a, 2)
	n, err := b.DeleteMemories(t.Context(), "scout", []string{"m000"})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "b reads what a wrote")
	_, dup, err := a.AddMemory(t.Context(), storetest.FullMemory("scout", "m7", "memory 0", mt0))
	require.NoError(t, err)
	assert.False(t, dup, "a sees b's delete")
}

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(b *testing.B) memory.Store {
		s, err := filestore.Open(b.TempDir(), filestore.Options{})
		require.NoError(b, err)
		return s
	})
}
