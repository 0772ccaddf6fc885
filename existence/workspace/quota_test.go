package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/workspace"
)

// fill creates n files of 3 bytes in dir, spread over 100 subdirectories,
// outside the workspace API (as a previous run, or another process, would
// have left them).
func fill(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
		if i < 100 {
			require.NoError(t, os.MkdirAll(sub, 0o700))
		}
		require.NoError(t, os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%06d", i)), []byte("abc"), 0o600))
	}
}

// TestRunningUsage: the usage is measured once, at Open, and then kept up
// to date by writes, appends and deletes, without walking the tree again
// (a walk per write took 426 ms at 100,000 files).
func TestRunningUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	fill(t, dir, 10)
	scans := workspace.Scans()
	ws, err := workspace.Open(dir, workspace.Limits{Quota: 100, MaxFiles: 12})
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })

	check := func(bytes int64, files int) {
		t.Helper()
		b, err := ws.Usage()
		require.NoError(t, err)
		f, err := ws.Files()
		require.NoError(t, err)
		assert.Equal(t, bytes, b, "bytes")
		assert.Equal(t, files, f, "files")
	}
	check(30, 10)
	require.NoError(t, ws.Write("new.txt", "12345"))
	check(35, 11)
	require.NoError(t, ws.Write("new.txt", "12"))
	check(32, 11)
	require.NoError(t, ws.Append("new.txt", "345"))
	check(35, 11)
	require.NoError(t, ws.Write("d00/f000000", "abcdef"))
	check(38, 11)
	require.NoError(t, ws.Write("last.txt", ""))
	check(38, 12)

	// The file-count quota.
	err = ws.Write("one-too-many.txt", "x")
	assert.ErrorIs(t, err, workspace.ErrQuota)
	assert.EqualError(t, err, `"one-too-many.txt": workspace quota exceeded: the workspace would hold 13 files, the limit is 12; delete files to make room`)
	require.NoError(t, ws.Write("last.txt", "replacing is no new file"))
	check(62, 12)

	// The byte quota.
	err = ws.Write("last.txt", strings.Repeat("x", 63))
	assert.ErrorIs(t, err, workspace.ErrQuota)
	check(62, 12)

	// Deletes give room back; refused operations change nothing.
	require.NoError(t, ws.Delete("last.txt"))
	check(38, 11)
	assert.Error(t, ws.Delete("last.txt"))
	require.NoError(t, ws.Delete("d01/f000001"))
	check(35, 10)
	require.NoError(t, ws.Write("one-too-many.txt", "x"))
	check(36, 11)
	assert.Equal(t, scans+1, workspace.Scans(), "one walk, at Open")
}

// TestManyFiles is the 100,000-file row of the hostile table: a workspace
// filled outside the API opens with one walk, refuses new files beyond
// the default file quota, and still lets files be replaced, read and
// deleted.
func TestManyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 100,000 files")
	}
	dir := filepath.Join(fastTempDir(t), "ws")
	fill(t, dir, 100_000)
	scans := workspace.Scans()
	ws, err := workspace.Open(dir, workspace.Limits{})
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	n, err := ws.Files()
	require.NoError(t, err)
	assert.Equal(t, 100_000, n)

	err = ws.Write("new.txt", "x")
	assert.ErrorIs(t, err, workspace.ErrQuota)
	assert.Contains(t, err.Error(), "would hold 100001 files, the limit is 10000")
	for i := range 100 {
		require.NoError(t, ws.Write(fmt.Sprintf("d%02d/f%06d", i, i), "replaced"))
	}
	got, err := ws.Read("d07/f000007")
	require.NoError(t, err)
	assert.Equal(t, "replaced", got)
	require.NoError(t, ws.Delete("d07/f000007"))
	n, _ = ws.Files()
	assert.Equal(t, 99_999, n)
	assert.Equal(t, scans+1, workspace.Scans(), "no walk per write")

	// With room for them, new files go in.
	ws2, err := workspace.Open(dir, workspace.Limits{MaxFiles: 200_000})
	require.NoError(t, err)
	t.Cleanup(func() { ws2.Close() })
	require.NoError(t, ws2.Write("new.txt", "x"))
}

// fastTempDir is a temporary directory on tmpfs (/dev/shm) when there is
// one, else t.TempDir(): creating 100,000 files on a busy disk takes half a
// minute.
func fastTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/dev/shm", "workspace-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
