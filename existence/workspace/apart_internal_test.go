package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithinComparesDirectories: two names for one directory that no
// comparison of names sees (a bind mount, a case-insensitive file system;
// here an unresolved symbolic link stands in for them) are caught by
// comparing the directories themselves with os.SameFile.
func TestWithinComparesDirectories(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "deep", "state"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "other"), 0o700))
	require.NoError(t, os.Symlink(ws, filepath.Join(root, "mount")))
	alias := filepath.Join(root, "mount", "deep", "state") // not resolved on purpose, as a bind mount of ws would not be
	assert.True(t, within(alias, ws), "inside, by identity")
	assert.True(t, within(alias, filepath.Join(ws, "deep", "state")), "the same, by identity")
	assert.False(t, within(ws, alias))
	assert.False(t, within(filepath.Join(root, "other"), ws))
	assert.False(t, within(filepath.Join(root, "missing"), ws))
}
