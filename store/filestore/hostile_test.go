//go:build unix

package filestore

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
)

// special makes a non-regular file of the given kind at path; it skips the
// test when the system does not allow it (mknod needs CAP_MKNOD).
func special(t *testing.T, kind, path string) {
	t.Helper()
	switch kind {
	case "named pipe":
		require.NoError(t, syscall.Mkfifo(path, 0o600))
	case "socket":
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Skipf("cannot make a unix socket at %s: %v", path, err)
		}
		t.Cleanup(func() { l.Close() })
	case "device":
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, int(1<<8|3)); err != nil { // like /dev/null
			t.Skipf("cannot mknod a device (needs CAP_MKNOD): %v", err)
		}
	case "directory":
		require.NoError(t, os.Mkdir(path, 0o700))
	}
}

// within runs fn and fails the test if it does not return within 10 s
// (a hang on a FIFO is the bug this guards against).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		require.Fail(t, "timed out", "%s did not return: it waits on a special file", what)
	}
}

// TestFileStoreHostileSpecialFiles covers the hostile special files: a FIFO,
// socket, device or directory in place of a state file, a journal or a
// lock file is refused at once with an error naming the file and its type,
// and no other agent's state is touched.
func TestFileStoreHostileSpecialFiles(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"named pipe", "socket", "device", "directory"} {
		for _, target := range []struct {
			name, word string // the file; how Save's refusal names it
			path       func(s *Store) string
		}{
			{"state file", "document", func(s *Store) string { return s.Path("scout") }},
			{"journal", "journal", func(s *Store) string { return s.JournalPath("scout") }},
		} {
			t.Run(target.name+" is a "+kind, func(t *testing.T) {
				dir := t.TempDir()
				s := openStore(t, dir)
				require.NoError(t, s.Save(ctx, sampleState("analyst")))
				if target.word == "journal" {
					require.NoError(t, s.Save(ctx, sampleState("scout"))) // the document the journal follows
				}
				before := snapshot(t, s.Path("analyst"))
				path := target.path(s)
				special(t, kind, path)
				var err error
				within(t, "Load", func() { _, err = s.Load(ctx, "scout") })
				require.ErrorIs(t, err, identity.ErrCorrupt)
				assert.Contains(t, err.Error(), path)
				assert.Contains(t, err.Error(), "a "+kind+", not a regular file")
				t.Logf("Load: %v", err)
				within(t, "Save", func() { err = s.Save(ctx, sampleState("scout")) })
				require.ErrorIs(t, err, identity.ErrCorrupt, "Save refuses to replace it")
				assert.Contains(t, err.Error(), "unusable "+target.word+" "+path+"; quarantine it first")
				within(t, "Save with a new store", func() { err = openStore(t, dir).Save(ctx, sampleState("scout")) })
				require.ErrorIs(t, err, identity.ErrCorrupt, "a fresh store refuses too")
				_, err = s.Quarantine("scout")
				require.NoError(t, err)
				st, err := os.Lstat(path + ".corrupt-20261121T222300Z")
				require.NoError(t, err)
				assert.Equal(t, kind, atomicfile.DescribeMode(st.Mode()), "the quarantine moved it, untouched")
				require.NoError(t, s.Save(ctx, sampleState("scout")), "a fresh start after the quarantine")
				require.NoError(t, s.Save(ctx, sampleState("scout")), "and a journal again")
				assert.Equal(t, before, snapshot(t, s.Path("analyst")), "the other agent is untouched")
			})
		}
		t.Run("lock file is a "+kind, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			require.NoError(t, s.Save(ctx, sampleState("analyst")))
			before := snapshot(t, s.Path("analyst"))
			special(t, kind, filepath.Join(dir, "scout.lock"))
			var err error
			within(t, "Lock", func() { _, err = s.Lock("scout") })
			require.ErrorIs(t, err, atomicfile.ErrNotRegular)
			assert.Contains(t, err.Error(), filepath.Join(dir, "scout.lock")+" is a "+kind)
			assert.Contains(t, err.Error(), `agent "scout"`)
			t.Logf("Lock: %v", err)
			unlock, err := s.Lock("analyst")
			require.NoError(t, err, "other agents still lock")
			require.NoError(t, unlock())
			assert.Equal(t, before, snapshot(t, s.Path("analyst")), "the other agent is untouched")
		})
	}
}

// TestFileStoreLockRemovesStaleTemps: temp files of interrupted saves are
// removed when the agent's lock is taken, and the removal is reported;
// another agent's temp files and documents are left alone.
func TestFileStoreLockRemovesStaleTemps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logs bytes.Buffer
	s, err := Open(dir, Options{Now: fixedNow, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx, sampleState("scout")))
	require.NoError(t, s.Save(ctx, sampleState("analyst")))
	doc := snapshot(t, s.Path("scout"))
	for _, n := range []string{".scout.json.tmp-1-1-a", ".scout.json.tmp-99-7-b", ".analyst.json.tmp-1-1-c"} {
		writeFile(t, dir, n, []byte("half a document"))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".scout.json.tmp-dir"), 0o700)) // not a temp file of ours
	unlock, err := s.Lock("scout")
	require.NoError(t, err)
	defer unlock()
	for _, n := range []string{".scout.json.tmp-1-1-a", ".scout.json.tmp-99-7-b"} {
		assert.NoFileExists(t, filepath.Join(dir, n))
	}
	assert.FileExists(t, filepath.Join(dir, ".analyst.json.tmp-1-1-c"), "another agent's temp file stays until its lock is taken")
	assert.DirExists(t, filepath.Join(dir, ".scout.json.tmp-dir"))
	assert.Equal(t, doc, snapshot(t, s.Path("scout")))
	assert.Contains(t, logs.String(), "removed temp files of interrupted saves")
	assert.Contains(t, logs.String(), ".scout.json.tmp-1-1-a")
	t.Log(logs.String())
}
