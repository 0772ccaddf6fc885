package hollow_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestImportReportsInconsistencies: a key repeated in index.json, two
// memory ids sharing one vector row, and a symlinked agent directory are
// each reported in the import summary; the memories sharing a row are
// imported pending (which of them the vector is cannot be told), nothing
// is lost.
func TestImportReportsInconsistencies(t *testing.T) {
	rows := [][]float64{{3, 4, 0}, {0, 0, 2}}
	lines := []string{
		line("mem-a", "first", 1776040891, 0, ""),
		line("mem-b", "second", 1776040892, 0, ""),
		line("mem-c", "third", 1776040893, 0, ""),
	}
	dir := writeSemantic(t, "scout", lines, nil, npyFile(rows, "<f4", 1, false))
	sem := filepath.Join(dir, "semantic")
	require.NoError(t, os.WriteFile(filepath.Join(sem, "scout", "index.json"),
		[]byte(`{"mem-a": 1, "mem-b": 0, "mem-c": 0, "mem-a": 1}`), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(sem, "scout"), filepath.Join(sem, "ghost")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "elsewhere"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "identity", "phantom")))

	agents, warnings, err := hollow.ReadMemories(dir, hollow.Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"semantic/ghost: skipped: a symlink"}, warnings)
	require.Len(t, agents, 1, "the symlink is not read")
	sum := agents[0].Summary
	assert.Contains(t, sum.Warnings, "semantic/scout/index.json: memory_id mem-a is a key 2 times; its last row, 1, is used")
	assert.Contains(t, sum.Warnings, "semantic/scout/index.json: row 0 is named by memory ids mem-b, mem-c; they are imported pending")
	assert.Equal(t, 3, sum.Indexed)
	assert.Equal(t, 3, sum.Imported, "nothing lost")
	assert.Equal(t, 1, sum.Embedded, "mem-a, whose row is its own")
	assert.Equal(t, 2, sum.Pending, "mem-b and mem-c, embedded again by the backfill")

	store := memstore.New()
	isum, err := hollow.Import(context.Background(), dir, store, hollow.Options{})
	require.NoError(t, err)
	assert.Contains(t, isum.Warnings, "identity/phantom: skipped: a symlink")
	assert.Contains(t, isum.Warnings, "semantic/ghost: skipped: a symlink")
	text := isum.String()
	assert.Contains(t, text, "memory_id mem-a is a key 2 times")
	assert.Contains(t, text, "row 0 is named by memory ids mem-b, mem-c")
	assert.Contains(t, text, "semantic/ghost: skipped: a symlink")
}

// TestIndexNull: an index.json of null has no entries, as before.
func TestIndexNull(t *testing.T) {
	dir := writeSemantic(t, "scout", []string{line("mem-a", "x", 1776040891, 0, "")}, nil, nil)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "semantic", "scout", "index.json"), []byte("null"), 0o644))
	agents, _, err := hollow.ReadMemories(dir, hollow.Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, agents[0].Summary.Pending)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "semantic", "scout", "index.json"), []byte(`{"mem-a": 0} {}`), 0o644))
	_, _, err = hollow.ReadMemories(dir, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrMalformed, "data after the object")
}
