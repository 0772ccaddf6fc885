package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// dirSnapshot lists every file under dir with its size and modification
// time, to show that nothing was written.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%v %v %d", fi.Mode(), fi.ModTime(), fi.Size())
		return nil
	}))
	return out
}

// readOnlyStore saves the trio's states in a fresh directory store, with
// no tasks.lock (a store copied, or made by an older version, or on a
// read-only mount where the lock could never be made).
func readOnlyStore(t *testing.T) string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "trio-state")
	s, err := filestore.Open(spec, filestore.Options{})
	require.NoError(t, err)
	saveAll(t, s, trioStates())
	_, err = os.Lstat(filepath.Join(spec, taskqueue.LockFileName))
	require.ErrorIs(t, err, fs.ErrNotExist)
	return spec
}

// TestReadOnlyStoreIsOnlyRead: `serve` (which says "read-only, no lock
// taken") and `run -show` write nothing to the store: no tasks.lock, no
// file created or changed, so that they work on a store they may not
// write. This holds when the tests run as root too, where a chmod would
// not stop a write; TestReadOnlyStoreChmod checks the permission itself.
func TestReadOnlyStoreIsOnlyRead(t *testing.T) {
	t.Run("run -show", func(t *testing.T) {
		spec := readOnlyStore(t)
		before := dirSnapshot(t, spec)
		out, _, err := runTrioTest(t, "-state", spec, "-workspace", filepath.Join(t.TempDir(), "ws"), "-show", "scout")
		require.NoError(t, err)
		assert.Contains(t, out, `"name": "Cedar"`)
		assert.Equal(t, before, dirSnapshot(t, spec), "-show wrote to the store")
	})
	t.Run("serve", func(t *testing.T) {
		spec := readOnlyStore(t)
		before := dirSnapshot(t, spec)
		base, stderr := startServe(t, "-store", spec, "-refresh", "1h")
		assert.Contains(t, stderr.String(), "read-only, no lock taken")
		status, body := call(t, base, "GET", "/api/agents?sort=name", "")
		require.Equal(t, 200, status, body)
		status, body = call(t, base, "GET", "/api/tasks", "")
		require.Equal(t, 200, status, body)
		assert.Equal(t, before, dirSnapshot(t, spec), "serve wrote to the store")
	})
}

// TestReadOnlyStoreChmod: on a directory its user may not write, `serve`
// and `run -show` work. As root the permission does not hold, so the test
// is skipped there (TestReadOnlyStoreIsOnlyRead covers it).
func TestReadOnlyStoreChmod(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a read-only directory; TestReadOnlyStoreIsOnlyRead shows nothing is written")
	}
	spec := readOnlyStore(t)
	require.NoError(t, os.Chmod(spec, 0o500))
	t.Cleanup(func() { os.Chmod(spec, 0o700) })
	out, _, err := runTrioTest(t, "-state", spec, "-workspace", filepath.Join(t.TempDir(), "ws"), "-show", "scout")
	require.NoError(t, err)
	assert.Contains(t, out, `"name": "Cedar"`)
	base, _ := startServe(t, "-store", spec, "-refresh", "1h")
	status, body := call(t, base, "GET", "/api/agents", "")
	require.Equal(t, 200, status, body)
}
