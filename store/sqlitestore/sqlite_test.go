package sqlitestore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
	"github.com/existence-loop/sdk/task"
)

var t0 = time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "state.db") }

// TestGroupCommit: saves of many goroutines share transactions, and each
// returns only once its save is committed (read back through a second
// handle right after it returns).
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path, sqlitestore.Options{})
	other := open(t, path, sqlitestore.Options{})
	const agents, rounds = 40, 5
	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("agent-%02d", a)
			for r := range rounds {
				st := storetest.FullState(id)
				st.Identity.Worldview = fmt.Sprintf("round %d", r)
				if !assert.NoError(t, s.Save(ctx, st)) {
					return
				}
				got, err := other.Load(ctx, id)
				if assert.NoError(t, err, "durable once Save returns") {
					assert.Equal(t, st.Identity.Worldview, got.Identity.Worldview)
				}
			}
		}()
	}
	wg.Wait()
	stats := s.Stats()
	assert.Equal(t, int64(agents*rounds), stats.Saves)
	assert.Less(t, stats.Commits, stats.Saves, "concurrent saves share commits")
	t.Logf("%d saves in %d commits", stats.Saves, stats.Commits)
}

// TestSaveWritesWhatChanged: the goal history and discoveries are rows;
// a save that appends a goal writes that row (and the changed last one),
// not the whole history.
func TestSaveWritesWhatChanged(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t), sqlitestore.Options{})
	st := storetest.OverCapState("scout")
	st.Identity.Goals = st.Identity.Goals[:100]
	require.NoError(t, s.Save(ctx, st))
	base := s.Stats().Rows
	assert.GreaterOrEqual(t, base, int64(100+30+2), "the first save writes every row")

	// The usual cycle: the oldest goal falls off, the last one ends, a
	// new one starts.
	l := identity.DefaultLimits()
	_, err := st.Identity.EndGoal(identity.Done, "ok", t0, l)
	require.ErrorIs(t, err, identity.ErrNoActiveGoal)
	st.Identity.Goals[99].Status = identity.Failed
	require.NoError(t, st.Identity.StartGoal(identity.Goal{ID: "new", Objective: "a new goal", Started: t0}, l))
	require.Len(t, st.Identity.Goals, 100)
	require.NoError(t, s.Save(ctx, st))
	assert.Equal(t, int64(3), s.Stats().Rows-base, "one row deleted, one updated, one inserted")

	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, storetest.StateJSON(t, st), storetest.StateJSON(t, got))

	// A second handle wrote meanwhile: the next save rewrites, still right.
	other := open(t, s.Path(), sqlitestore.Options{})
	st2 := storetest.FullState("scout")
	require.NoError(t, other.Save(ctx, st2))
	st.Identity.Worldview = "after the other handle"
	require.NoError(t, s.Save(ctx, st))
	got, err = other.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, storetest.StateJSON(t, st), storetest.StateJSON(t, got))
}

// TestQueryableColumns: what a person would query is in columns.
func TestQueryableColumns(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t), sqlitestore.Options{})
	for i, id := range []string{"scout", "analyst", "builder"} {
		st := storetest.FullState(id)
		st.Identity.Name = []string{"Cedar", "Cipher", "Vault"}[i]
		st.Suffering.Active[0].Severity = 0.1 * float64(i+1)
		require.NoError(t, s.Save(ctx, st))
	}
	rows, err := s.DB().QueryContext(ctx, "SELECT name, load FROM agents ORDER BY load DESC")
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		var load float64
		require.NoError(t, rows.Scan(&name, &load))
		got = append(got, fmt.Sprintf("%s %.2f", name, load))
	}
	assert.Equal(t, []string{"Vault 0.55", "Cipher 0.45", "Cedar 0.35"}, got)
	var active string
	require.NoError(t, s.DB().QueryRowContext(ctx, "SELECT objective FROM goals WHERE agent_id = 'scout' AND status = 'active'").Scan(&active))
	assert.Equal(t, "explore the workspace and build something useful", active)
	_, err = s.DB().ExecContext(ctx, "DELETE FROM agents")
	require.Error(t, err, "DB() is read-only")
}

func TestMessagesPersisted(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path, sqlitestore.Options{})
	st := storetest.FullState("scout")
	st.Inbox = append(st.Inbox, identity.AgentMessage{From: "Vault", Text: "second", At: t0})
	st.Host = append(st.Host, identity.AgentMessage{From: "host", Text: "are you there?", At: t0})
	require.NoError(t, s.Save(ctx, st))
	require.NoError(t, s.Close())
	got, err := open(t, path, sqlitestore.Options{}).Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, st.Inbox, got.Inbox)
	assert.Equal(t, st.Host, got.Host)
}

func TestLockLease(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	path := dbPath(t)
	var logs bytes.Buffer
	a := open(t, path, sqlitestore.Options{Now: clock, LeaseTTL: time.Minute})
	b := open(t, path, sqlitestore.Options{Now: clock, LeaseTTL: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_, err := a.Lock("scout")
	require.NoError(t, err)
	_, err = b.Lock("scout")
	var le *identity.LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, os.Getpid(), le.PID)
	assert.Contains(t, err.Error(), `agent "scout" is already running`)
	assert.Contains(t, err.Error(), "holder ")
	assert.Contains(t, err.Error(), path)
	t.Log(err)
	now = now.Add(2 * time.Minute) // a's lease lapsed (a renews only on its ticker)
	unlock, err := b.Lock("scout")
	require.NoError(t, err, "a lapsed lease is taken over")
	assert.Contains(t, logs.String(), "taking over a lock")
	require.NoError(t, unlock())
}

// TestLockOfDeadProcess: a lock row left by a killed process of this host
// is taken over at once.
func TestLockOfDeadProcess(t *testing.T) {
	if os.Getenv("SQLITESTORE_LOCK_CHILD") != "" {
		return
	}
	path := dbPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$")
	cmd.Env = append(os.Environ(), "SQLITESTORE_LOCK_CHILD="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := open(t, path, sqlitestore.Options{})
	var holder string
	require.NoError(t, s.DB().QueryRow("SELECT holder FROM locks WHERE agent_id = 'scout'").Scan(&holder))
	unlock, err := s.Lock("scout")
	require.NoError(t, err, "the holder %s is gone", holder)
	require.NoError(t, unlock())
}

// TestLockChild takes a lock and exits without releasing it (the child of
// TestLockOfDeadProcess).
func TestLockChild(t *testing.T) {
	path := os.Getenv("SQLITESTORE_LOCK_CHILD")
	if path == "" {
		t.Skip("child process of TestLockOfDeadProcess")
	}
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	require.NoError(t, err)
	_, err = s.Lock("scout")
	require.NoError(t, err)
	os.Exit(0) // no unlock, no Close: as if killed
}

func TestQueue(t *testing.T) {
	ctx := context.Background()
	now := t0
	path := dbPath(t)
	s := open(t, path, sqlitestore.Options{Now: func() time.Time { return now }, TaskLimits: task.Limits{Timeout: time.Hour, MaxTasks: 2}})
	q := s.Tasks()

	_, err := q.Submit(ctx, "  ", "")
	require.ErrorIs(t, err, task.ErrInvalid)
	_, err = q.Submit(ctx, "x", "../bad")
	require.ErrorIs(t, err, task.ErrInvalid)
	t1, err := q.Submit(ctx, "  map the workspace ", "")
	require.NoError(t, err)
	assert.Equal(t, "task-000001", t1.ID)
	assert.Equal(t, "map the workspace", t1.Description)
	t2, err := q.Submit(ctx, "for the analyst", "analyst")
	require.NoError(t, err)

	p, err := q.Peek(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, t1.ID, p.ID)
	n, err := q.Next(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, task.Assigned, n.Status)
	again, err := q.Next(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, t1.ID, again.ID, "an agent resumes its task")
	none, err := q.Next(ctx, "builder")
	require.NoError(t, err)
	assert.Nil(t, none, "the analyst's task is not the builder's")

	_, err = q.Finish(ctx, t2.ID, true, "x")
	require.ErrorIs(t, err, task.ErrNotAssigned)
	_, err = q.Finish(ctx, "task-999999", true, "x")
	require.ErrorIs(t, err, task.ErrNotFound)
	done, err := q.Finish(ctx, t1.ID, true, "mapped")
	require.NoError(t, err)
	assert.Equal(t, task.Completed, done.Status)
	_, err = q.Finish(ctx, t1.ID, true, "again")
	require.ErrorIs(t, err, task.ErrEnded)

	a, err := q.Next(ctx, "analyst")
	require.NoError(t, err)
	now = now.Add(2 * time.Hour)
	exp, err := q.Expire(ctx)
	require.NoError(t, err)
	require.Len(t, exp, 1)
	assert.Equal(t, a.ID, exp[0].ID)
	assert.Equal(t, "no result after 1h0m0s", exp[0].Result)

	for range 3 {
		tk, err := q.Submit(ctx, "more", "")
		require.NoError(t, err)
		_, err = q.Next(ctx, "scout")
		require.NoError(t, err)
		_, err = q.Finish(ctx, tk.ID, false, "no")
		require.NoError(t, err)
	}
	all, err := q.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2, "the oldest ended tasks beyond MaxTasks are dropped")
	assert.Equal(t, "task-000005", all[1].ID, "ids are never reused")

	// Durable across handles.
	require.NoError(t, s.Close())
	got, err := open(t, path, sqlitestore.Options{}).Tasks().Get(ctx, "task-000005")
	require.NoError(t, err)
	assert.Equal(t, task.Failed, got.Status)
	_, err = open(t, path, sqlitestore.Options{}).Tasks().Get(ctx, "task-000001")
	require.ErrorIs(t, err, task.ErrNotFound)
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, dbPath(t), sqlitestore.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Save(ctx, storetest.FullState("scout")), sqlitestore.ErrClosed)
	_, err = s.Load(ctx, "scout")
	require.ErrorIs(t, err, sqlitestore.ErrClosed)
}
