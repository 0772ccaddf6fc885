//go:build unix

package taskqueue

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
)

var hostileNow = func() time.Time { return time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC) }

func makeSpecial(t *testing.T, kind, path string) {
	t.Helper()
	switch kind {
	case "named pipe":
		require.NoError(t, syscall.Mkfifo(path, 0o600))
	case "socket":
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Skipf("cannot make a unix socket: %v", err)
		}
		t.Cleanup(func() { l.Close() })
	case "device":
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, int(1<<8|3)); err != nil {
			t.Skipf("cannot mknod a device (needs CAP_MKNOD): %v", err)
		}
	case "directory":
		require.NoError(t, os.Mkdir(path, 0o700))
	}
}

func openWithin(t *testing.T, dir string, opts Options) (q *Queue, err error) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); q, err = Open(dir, opts) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		require.Fail(t, "Open did not return: it waits on a special file")
	}
	return q, err
}

// TestHostileQueueFiles: a FIFO, socket, device or directory in place of
// tasks.json or tasks.lock is refused at once with an error naming the file
// and its type; with FreshOnCorrupt a bad tasks.json is moved aside and the
// queue starts empty; files beside it are untouched.
func TestHostileQueueFiles(t *testing.T) {
	for _, kind := range []string{"named pipe", "socket", "device", "directory"} {
		t.Run("tasks.json is a "+kind, func(t *testing.T) {
			dir := t.TempDir()
			other := filepath.Join(dir, "scout.json")
			require.NoError(t, os.WriteFile(other, []byte(`{"x":1}`), 0o600))
			path := filepath.Join(dir, FileName)
			makeSpecial(t, kind, path)
			_, err := openWithin(t, dir, Options{})
			checkCorrupt(t, err, path, "a "+kind+", not a regular file")
			t.Logf("Open: %v", err)

			var logs bytes.Buffer
			q, err := openWithin(t, dir, Options{Now: hostileNow, FreshOnCorrupt: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			moved := filepath.Join(dir, "tasks.json.corrupt-20261121T222300Z")
			assert.Equal(t, moved, q.Quarantined())
			st, err := os.Lstat(moved)
			require.NoError(t, err, "moved aside, not deleted")
			assert.False(t, st.Mode().IsRegular())
			assert.Contains(t, logs.String(), "corrupt queue file moved aside")
			_, err = q.Submit(context.Background(), "after the fresh start", "")
			require.NoError(t, err)
			b, err := os.ReadFile(other)
			require.NoError(t, err)
			assert.Equal(t, `{"x":1}`, string(b), "other files are untouched")
		})
		t.Run("tasks.lock is a "+kind, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, LockFileName)
			makeSpecial(t, kind, path)
			_, err := openWithin(t, dir, Options{FreshOnCorrupt: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+" is a "+kind+": not a regular file")
			t.Logf("Open: %v", err)
		})
	}
}

func TestFreshOnCorruptQueue(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"tasks":[{`), 0o600))
	_, err := Open(dir, Options{})
	checkCorrupt(t, err, path, "")
	b, _ := os.ReadFile(path)
	assert.Equal(t, `{"version":1,"tasks":[{`, string(b), "left untouched without the option")

	q, err := Open(dir, Options{Now: hostileNow, FreshOnCorrupt: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	b, err = os.ReadFile(q.Quarantined())
	require.NoError(t, err)
	assert.Equal(t, `{"version":1,"tasks":[{`, string(b), "the corrupt file is kept, moved aside")
	tasks, err := q.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, tasks)

	// A second corrupt file the same second gets "-2".
	require.NoError(t, os.WriteFile(path, []byte(`garbage`), 0o600))
	q, err = Open(dir, Options{Now: hostileNow, FreshOnCorrupt: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tasks.json.corrupt-20261121T222300Z-2"), q.Quarantined())

	q, err = Open(dir, Options{FreshOnCorrupt: true})
	require.NoError(t, err)
	assert.Empty(t, q.Quarantined(), "nothing to move")
}

func TestOpenRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".tasks.json.tmp-1-1-a", ".tasks.json.tmp-2-2-b"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("half"), 0o600))
	}
	var logs bytes.Buffer
	_, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, ".tasks.json.tmp-1-1-a"))
	assert.NoFileExists(t, filepath.Join(dir, ".tasks.json.tmp-2-2-b"))
	assert.Contains(t, logs.String(), "removed temp files of interrupted writes")
}
