package taskqueue

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/task"
	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Environment of a child process started by TestMultiProcess.
const (
	childDirEnv   = "TASKQUEUE_TEST_CHILD_DIR"
	childIndexEnv = "TASKQUEUE_TEST_CHILD_INDEX"
	childCountEnv = "TASKQUEUE_TEST_CHILD_COUNT"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(runChild(dir))
	}
	os.Exit(m.Run())
}

// runChild is a child process of TestMultiProcess: it submits count tasks,
// claims and finishes one after every other submission, and prints the ids
// it claimed, one per line.
func runChild(dir string) int {
	index, err1 := strconv.Atoi(os.Getenv(childIndexEnv))
	count, err2 := strconv.Atoi(os.Getenv(childCountEnv))
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "bad child environment")
		return 2
	}
	ctx := context.Background()
	q, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	agent := fmt.Sprintf("proc-%d", index)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := range count {
		if _, err := q.Submit(ctx, fmt.Sprintf("proc %d task %d", index, i), ""); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i%2 == 1 {
			continue
		}
		got, err := q.Next(ctx, agent)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if got == nil {
			continue
		}
		if _, err := q.Finish(ctx, got.ID, true, agent); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, got.ID)
	}
	return 0
}

// TestMultiProcess runs real processes (this test binary, re-executed)
// that submit and claim concurrently on one queue directory; no task may be
// lost or claimed twice.
func TestMultiProcess(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	const children = 4
	count := 20
	if testing.Short() {
		count = 10
	}
	outputs := make([]bytes.Buffer, children)
	cmds := make([]*exec.Cmd, children)
	for i := range children {
		cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			childDirEnv+"="+dir,
			childIndexEnv+"="+strconv.Itoa(i),
			childCountEnv+"="+strconv.Itoa(count),
		)
		cmd.Stdout = &outputs[i]
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
		t.Cleanup(func() {
			if t.Failed() && stderr.Len() > 0 {
				t.Logf("child %d stderr: %s", i, stderr.String())
			}
		})
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "child %d", i)
	}

	submitted, claimed := map[string]int{}, map[string]int{}
	for i := range children {
		for _, id := range strings.Fields(outputs[i].String()) {
			claimed[id]++
		}
	}
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	all, err := q.List(context.Background())
	require.NoError(t, err)
	for _, tk := range all {
		submitted[tk.ID]++
	}
	want := map[string]bool{}
	for i := range children {
		for j := range count {
			want[fmt.Sprintf("proc %d task %d", i, j)] = true
		}
	}
	got := map[string]bool{}
	for _, tk := range all {
		assert.False(t, got[tk.Description], "duplicate %q", tk.Description)
		got[tk.Description] = true
	}
	assert.Equal(t, want, got, "every task from every process is present exactly once")
	checkNoneLost(t, q, submitted, claimed, children*count)
}

// TestConcurrentQueuesOnOneDir opens several Queues on one directory (as
// several processes would) and submits and claims from many goroutines on
// each (run with -race).
func TestConcurrentQueuesOnOneDir(t *testing.T) {
	dir := t.TempDir()
	const instances, goroutines = 4, 4
	perG := 8
	if testing.Short() {
		perG = 4
	}
	var queues []*Queue
	for range instances {
		q, err := Open(dir, Options{})
		require.NoError(t, err)
		queues = append(queues, q)
	}
	submitted, claimed := hammer(t, queues, goroutines, perG)
	fresh, err := Open(dir, Options{})
	require.NoError(t, err)
	checkNoneLost(t, fresh, submitted, claimed, instances*goroutines*perG)
}

func TestDurableAcrossOpen(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	dir := filepath.Join(t.TempDir(), "state", "tasks")
	q, err := Open(dir, Options{Now: clock.Now})
	require.NoError(t, err)
	a, err := q.Submit(ctx, "first", "cedar")
	require.NoError(t, err)
	_, err = q.Submit(ctx, "second", "")
	require.NoError(t, err)
	_, err = q.Submit(ctx, "third", "")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	_, err = q.Next(ctx, "cedar")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	_, err = q.Finish(ctx, a.ID, false, "could not")
	require.NoError(t, err)
	_, err = q.Next(ctx, "vault")
	require.NoError(t, err)
	before, err := q.List(ctx)
	require.NoError(t, err)
	require.Len(t, before, 3)

	q2, err := Open(dir, Options{Now: clock.Now})
	require.NoError(t, err)
	after, err := q2.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	next, err := q2.Submit(ctx, "fourth", "")
	require.NoError(t, err)
	assert.Equal(t, "task-000004", next.ID, "the id sequence is persisted")

	if runtime.GOOS != "windows" {
		st, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o700), st.Mode().Perm())
		for _, name := range []string{FileName, LockFileName} {
			st, err := os.Stat(filepath.Join(dir, name))
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), name)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{FileName, LockFileName}, names, "no temp files left behind")
}

func TestGoldenFile(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	dir := t.TempDir()
	q, err := Open(dir, Options{Now: clock.Now})
	require.NoError(t, err)
	a, err := q.Submit(ctx, "Summarise reports/ in one page", "cedar")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	_, err = q.Submit(ctx, "Check the build — then say \"done\"", "")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	_, err = q.Submit(ctx, "Left for later", "")
	require.NoError(t, err)
	_, err = q.Next(ctx, "cedar")
	require.NoError(t, err)
	_, err = q.Next(ctx, "vault")
	require.NoError(t, err)
	clock.Advance(30 * time.Second)
	_, err = q.Finish(ctx, a.ID, true, "wrote reports/summary.md")
	require.NoError(t, err)

	got, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	golden := filepath.Join("testdata", "tasks.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	// The golden file is readable.
	d, err := decode(want, golden)
	require.NoError(t, err)
	assert.Len(t, d.Tasks, 3)
}

func TestCorruptFileIsNeverOverwritten(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "tasks.golden.json"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		content string
		reason  string
	}{
		{"empty file", "", "empty file"},
		{"white space", "  \n", "empty file"},
		{"truncated", string(valid[:len(valid)/2]), "truncated"},
		{"not JSON", "tasks: none", "invalid character"},
		{"wrong type", `{"version":1,"seq":"x","tasks":[]}`, "seq"},
		{"tasks not a list", `{"version":1,"seq":1,"tasks":{}}`, "tasks"},
		{"no version", `{"seq":0,"tasks":[]}`, "no schema version"},
		{"future version", `{"version":2,"seq":0,"tasks":[]}`, "newer than this SDK"},
		{"unknown field", `{"version":1,"seq":0,"tasks":[],"owner":"x"}`, "unknown field"},
		{"trailing data", `{"version":1,"seq":0,"tasks":[]} {}`, "data after"},
		{"duplicate id", `{"version":1,"seq":2,"tasks":[` + pendingJSON("task-1") + `,` + pendingJSON("task-1") + `]}`, "duplicate id"},
		{"unknown status", `{"version":1,"seq":1,"tasks":[{"id":"t","description":"d","status":"done","submitted":"2025-01-01T00:00:00Z"}]}`, `unknown status "done"`},
		{"blank description", `{"version":1,"seq":1,"tasks":[{"id":"t","description":" ","status":"pending","submitted":"2025-01-01T00:00:00Z"}]}`, "blank description"},
		{"assigned to nobody", `{"version":1,"seq":1,"tasks":[{"id":"t","description":"d","status":"assigned","assigned":"2025-01-01T00:00:00Z","submitted":"2025-01-01T00:00:00Z"}]}`, "assigned_to"},
		{"bad time", `{"version":1,"seq":1,"tasks":[{"id":"t","description":"d","status":"pending","submitted":"yesterday"}]}`, "yesterday"},
	}
	ops := map[string]func(ctx context.Context, q *Queue) error{
		"Submit": func(ctx context.Context, q *Queue) error { _, err := q.Submit(ctx, "x", ""); return err },
		"Next":   func(ctx context.Context, q *Queue) error { _, err := q.Next(ctx, "cedar"); return err },
		"Finish": func(ctx context.Context, q *Queue) error {
			_, err := q.Finish(ctx, "task-000002", true, "")
			return err
		},
		"Expire": func(ctx context.Context, q *Queue) error { _, err := q.Expire(ctx); return err },
		"Get":    func(ctx context.Context, q *Queue) error { _, err := q.Get(ctx, "task-000002"); return err },
		"List":   func(ctx context.Context, q *Queue) error { _, err := q.List(ctx); return err },
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			// A queue opened while the file was fine.
			require.NoError(t, os.WriteFile(path, valid, 0o600))
			q, err := Open(dir, Options{})
			require.NoError(t, err)

			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			_, err = Open(dir, Options{})
			checkCorrupt(t, err, path, tt.reason)
			for name, op := range ops {
				checkCorrupt(t, op(ctx, q), path, tt.reason, name)
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(got), "the corrupt file is untouched")
		})
	}
}

func pendingJSON(id string) string {
	return `{"id":"` + id + `","description":"d","status":"pending","submitted":"2025-01-01T00:00:00Z"}`
}

func checkCorrupt(t *testing.T, err error, path, reason string, op ...string) {
	t.Helper()
	require.ErrorIs(t, err, identity.ErrCorrupt, op)
	var ce *identity.CorruptError
	require.ErrorAs(t, err, &ce, op)
	assert.Equal(t, path, ce.Path, op)
	assert.Contains(t, err.Error(), path, op)
	assert.Contains(t, ce.Reason, reason, op)
}

func TestUnusableFiles(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, FileName), 0o700))
		_, err := Open(dir, Options{})
		checkCorrupt(t, err, filepath.Join(dir, FileName), "not a regular file")
	})
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, FileName)
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(MaxFileSize+1)) // sparse: fast
		require.NoError(t, f.Close())
		_, err = Open(dir, Options{})
		checkCorrupt(t, err, path, "larger than")
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, int64(MaxFileSize+1), st.Size())
	})
	t.Run("symlink leaving the directory", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		secret := filepath.Join(outside, "secret.json")
		require.NoError(t, os.WriteFile(secret, []byte(`{"version":1,"seq":0,"tasks":[]}`), 0o600))
		if err := os.Symlink(secret, filepath.Join(dir, FileName)); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		_, err := Open(dir, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(dir, FileName))
	})
	t.Run("lock file is a symlink", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, LockFileName)); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		_, err := Open(dir, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a regular file")
		_, err = os.Lstat(filepath.Join(outside, "x"))
		assert.ErrorIs(t, err, fs.ErrNotExist, "nothing created outside")
	})
	t.Run("dir is a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		_, err := Open(path, Options{})
		require.Error(t, err)
	})
	t.Run("empty dir name", func(t *testing.T) {
		_, err := Open("", Options{})
		require.ErrorIs(t, err, task.ErrInvalid)
	})
}

// TestSizeLimits lowers the store's limits: a submission beyond the live
// limit is refused with task.ErrFull and changes nothing, and the oldest ended
// tasks are dropped to keep the file under its limit.
func TestSizeLimits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	s := q.store.(*fileStore)
	s.maxLive, s.maxFile = 2000, 4000
	desc := strings.Repeat("x", 300)

	var live []string
	for {
		tk, err := q.Submit(ctx, desc, "")
		if err != nil {
			require.ErrorIs(t, err, task.ErrFull)
			break
		}
		live = append(live, tk.ID)
		require.Less(t, len(live), 20, "never refused")
	}
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	_, err = q.Submit(ctx, desc, "")
	require.ErrorIs(t, err, task.ErrFull)
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	assert.Equal(t, before, after, "a refused submission changes nothing")

	// Claim and finish everything with long results: ended tasks are
	// dropped, oldest first, to stay under maxFile; live ones never.
	for range live {
		got, err := q.Next(ctx, "cedar")
		require.NoError(t, err)
		require.NotNil(t, got)
		_, err = q.Finish(ctx, got.ID, true, strings.Repeat("r", 900))
		require.NoError(t, err)
		st, err := os.Stat(filepath.Join(dir, FileName))
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Size(), int64(s.maxFile))
	}
	all, err := q.List(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	require.Less(t, len(all), len(live), "some ended tasks were dropped")
	assert.Equal(t, live[len(live)-1], all[len(all)-1].ID, "the newest ended task is kept")

	// Room again for new work.
	_, err = q.Submit(ctx, desc, "")
	require.NoError(t, err)
}

func TestLockWaitHonoursContext(t *testing.T) {
	dir := t.TempDir()
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	other := flock.New(filepath.Join(dir, LockFileName))
	require.NoError(t, other.Lock()) // another process holds the queue
	defer other.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.Submit(ctx, "waits", "")
		errc <- err
	}()
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	// While the lock is held, reads still work and show nothing submitted.
	all, err := q.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, all)

	// Once released, a waiting submission goes through.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := q.Submit(context.Background(), "after unlock", "")
		assert.NoError(t, err)
	}()
	require.NoError(t, other.Unlock())
	wg.Wait()
	all, err = q.List(context.Background())
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, "after unlock", all[0].Description)
}

// TestOpenAndReadWriteNothing: opening a queue and reading it create no
// file (no tasks.lock), so that a reader works in a directory it may not
// write; the first update creates the lock file.
func TestOpenAndReadWriteNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	_, err = q.List(ctx)
	require.NoError(t, err)
	_, err = q.Peek(ctx, "scout")
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "opening and reading wrote nothing")

	_, err = q.Submit(ctx, "map the workspace", "")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, LockFileName))
	require.NoError(t, err, "the first update makes the lock file")
}
