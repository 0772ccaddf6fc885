package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportSummaryReportsInconsistencies: the import summary names a key
// repeated in index.json, two memory ids sharing one vector row, and a
// symlinked agent directory skipped.
func TestImportSummaryReportsInconsistencies(t *testing.T) {
	src := t.TempDir()
	sem := filepath.Join(src, "semantic")
	require.NoError(t, os.MkdirAll(filepath.Join(sem, "scout"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(src, "identity"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sem, "scout", "metadata.jsonl"), []byte(
		`{"memory_id": "mem-a", "thought": "first", "timestamp": 1776040891}`+"\n"+
			`{"memory_id": "mem-b", "thought": "second", "timestamp": 1776040892}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sem, "scout", "index.json"), []byte(`{"mem-a": 0, "mem-b": 0, "mem-a": 0}`), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(sem, "scout"), filepath.Join(sem, "ghost")))
	require.NoError(t, os.Symlink(filepath.Join(sem, "scout"), filepath.Join(src, "identity", "phantom")))

	code, out, errOut := runCLI(t, "import", "-hollow", src, "-store", filepath.Join(t.TempDir(), "s"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "memory_id mem-a is a key 2 times")
	assert.Contains(t, out, "row 0 is named by memory ids mem-a, mem-b; they are imported pending")
	assert.Contains(t, out, "warning: semantic/ghost: skipped: a symlink")
	assert.Contains(t, out, "warning: identity/phantom: skipped: a symlink")
}
