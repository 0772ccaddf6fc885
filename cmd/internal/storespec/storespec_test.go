package storespec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		spec string
		want any
	}{
		{filepath.Join(dir, "state"), &filestore.Store{}},
		{"sqlite:" + filepath.Join(dir, "state.db"), &sqlitestore.Store{}},
	} {
		store, tasks, closer, err := storespec.Open(ctx, tc.spec, storespec.Options{})
		require.NoError(t, err, tc.spec)
		assert.IsType(t, tc.want, store, tc.spec)
		_, shared := storespec.Leases(store)
		assert.False(t, shared, "%s: one process's store has no leases", tc.spec)
		checkMemories(t, store)
		require.NoError(t, store.Save(ctx, storetest.FullState("scout")))
		task, err := tasks.Submit(ctx, "map the workspace", "")
		require.NoError(t, err)
		got, err := tasks.Next(ctx, "scout")
		require.NoError(t, err)
		assert.Equal(t, task.ID, got.ID)
		require.NoError(t, closer.Close())
	}
}

// TestOpenPostgres: a postgres:// spec opens store/pgstore (a real
// server, started by internal/pgtest), whose store hands out leases.
func TestOpenPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	store, tasks, closer, err := storespec.Open(ctx, url, storespec.Options{})
	require.NoError(t, err)
	defer closer.Close()
	assert.IsType(t, &pgstore.Store{}, store)
	_, shared := storespec.Leases(store)
	assert.True(t, shared, "a PostgreSQL store hands out leases")
	checkMemories(t, store)
	require.NoError(t, store.Save(ctx, storetest.FullState("scout")))
	task, err := tasks.Submit(ctx, "map the workspace", "")
	require.NoError(t, err)
	got, err := tasks.Next(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, task.ID, got.ID)

	_, _, _, err = storespec.Open(ctx, "postgres://nobody@127.0.0.1:1/x?connect_timeout=1", storespec.Options{})
	assert.ErrorIs(t, err, pgstore.ErrUnreachable)
}

func TestKind(t *testing.T) {
	for spec, want := range map[string]string{"./trio-state": "dir", "sqlite:/x/state.db": "sqlite", "sqlite:rel.db": "sqlite", "postgres://u@h/db": "postgres", "postgresql://h/db": "postgres"} {
		got, err := storespec.Kind(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, got, spec)
	}
	for _, bad := range []string{"", "sqlite:", "mysql://x"} {
		_, err := storespec.Kind(bad)
		require.ErrorIs(t, err, storespec.ErrSpec, bad)
		t.Logf("%q: %v", bad, err)
	}
}

// checkMemories: the store holds memories too.
func checkMemories(t *testing.T, store identity.Store) {
	t.Helper()
	m, ok := storespec.Memories(store)
	require.True(t, ok, "%T holds memories", store)
	_, _, err := m.AddMemory(t.Context(), storetest.FullMemory("scout", "m1", "a memory", time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, err)
	recs, err := m.Memories(t.Context(), "scout")
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}

// TestCheckWorkspace: a workspace overlapping the state a spec names is
// refused in every shape — the same directory, one inside the other, a
// symbolic link, a SQLite file inside the workspace — and PostgreSQL needs
// no check.
func TestCheckWorkspace(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	require.NoError(t, os.MkdirAll("ws/st", 0o700))
	require.NoError(t, os.MkdirAll("x", 0o700))
	require.NoError(t, os.Symlink(filepath.Join(root, "x"), "link"))
	tests := []struct {
		spec, workspace string
		overlap         bool
	}{
		{"x", "x", true},
		{"ws/st", "ws", true},
		{"ws", "ws/st", true},
		{"link", "x", true},
		{"sqlite:ws/agents.db", "ws", true},
		{"sqlite:" + filepath.Join(root, "ws", "st", "agents.db"), "ws", true},
		{"sqlite:x/agents.db", "ws", false},
		{"sqlite:agents.db", "ws", false},       // a workspace beside the database file: out of the agents' reach
		{"sqlite:agents.db", ".", true},         // the database in the workspace
		{"sqlite:ws/agents.db", "ws/st", false}, // the workspace below the database's directory
		{"x", "ws", false},
		{"postgres://u@127.0.0.1/db", "ws", false},
	}
	for _, tt := range tests {
		err := storespec.CheckWorkspace(tt.spec, tt.workspace)
		if tt.overlap {
			assert.ErrorIs(t, err, workspace.ErrOverlap, "%s and %s", tt.spec, tt.workspace)
		} else {
			assert.NoError(t, err, "%s and %s", tt.spec, tt.workspace)
		}
	}
	assert.ErrorIs(t, storespec.CheckWorkspace("ftp://x", "ws"), storespec.ErrSpec)
	dir, ok, err := storespec.StateDir("sqlite:data/agents.db")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "data", dir)
}

// TestDirListsAgentsOnly: the task queue's and the requests queue's
// documents sit beside the agents' in a directory store, and are not
// listed (nor loaded) as agents.
func TestDirListsAgentsOnly(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	store, tasks, closer, err := storespec.Open(ctx, dir, storespec.Options{})
	require.NoError(t, err)
	defer closer.Close()
	_, err = tasks.Submit(ctx, "water the plants", "")
	require.NoError(t, err)
	reqs, err := requests.Open(dir, requests.Options{})
	require.NoError(t, err)
	_, err = reqs.Submit(ctx, "scout", requests.Kinds[0], "may I?")
	require.NoError(t, err)
	require.NoError(t, store.Save(ctx, &identity.AgentState{Identity: identity.New("scout", "Scout", time.Now())}))
	require.FileExists(t, filepath.Join(dir, "tasks.json"))
	require.FileExists(t, filepath.Join(dir, "requests.json"))
	ids, err := store.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids)
}
