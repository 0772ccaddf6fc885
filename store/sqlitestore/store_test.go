package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
	"github.com/existence-loop/sdk/task"
)

var _ task.Source = (*sqlitestore.Queue)(nil)

// open opens the store at path and closes it at the end of the test.
func open(t testing.TB, path string, opts sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// savedDatabase returns the path of a closed database holding
// storetest.FullState("scout"), and that state: the starting point of the
// migration tests, which then turn the file into an older version.
func savedDatabase(t *testing.T) (string, *identity.AgentState) {
	t.Helper()
	path := dbPath(t)
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	require.NoError(t, err)
	want := storetest.FullState("scout")
	require.NoError(t, s.Save(context.Background(), want))
	require.NoError(t, s.Close())
	return path, want
}

// undoMigration holds, for each schema version, the statements that take
// a database of that version back to the version before.
var undoMigration = map[int][]string{
	2: {"ALTER TABLE agents DROP COLUMN last_presence"},
	3: {"DROP TABLE documents"},
	4: {"DROP TABLE memories"},
	5: {"ALTER TABLE agents DROP COLUMN slots"},
	7: {"ALTER TABLE agents DROP COLUMN extra"},
	6: {
		"DROP TABLE memories_fts",
		`CREATE TABLE memories_v5 (agent_id TEXT NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
			importance REAL NOT NULL, important INTEGER NOT NULL, created INTEGER NOT NULL, last_access INTEGER NOT NULL,
			access_count INTEGER NOT NULL, model TEXT, dimensions INTEGER, vector BLOB, PRIMARY KEY (agent_id, id))`,
		`INSERT INTO memories_v5 SELECT agent_id, id, text, kind, importance, important, created, last_access, access_count, model, dimensions, vector FROM memories`,
		"DROP TABLE memories",
		"ALTER TABLE memories_v5 RENAME TO memories",
		"CREATE UNIQUE INDEX memories_text ON memories (agent_id, text)",
		"CREATE INDEX memories_order ON memories (agent_id, created, id)",
	},
}

// olderDatabase returns the path of a closed database of schema version v
// holding storetest.FullState("scout"), and that state as such a database
// keeps it (no slots before version 5). A new schema version needs its
// undo in undoMigration.
func olderDatabase(t *testing.T, v int) (string, *identity.AgentState) {
	t.Helper()
	path, want := savedDatabase(t)
	db := rawDB(t, path)
	for w := sqlitestore.SchemaVersion; w > v; w-- {
		require.Contains(t, undoMigration, w, "undoMigration lacks schema version %d", w)
		for _, stmt := range undoMigration[w] {
			_, err := db.Exec(stmt)
			require.NoError(t, err, stmt)
		}
	}
	if v < 5 {
		want.Slots = nil
	}
	if v < 7 {
		want.WorkingMemory, want.WorkingMemoryNote, want.Commissioned = nil, "", time.Time{}
	}
	_, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	return path, want
}

// migratedStore opens the older database at path and checks it was
// migrated to the current schema version on open.
func migratedStore(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	s := open(t, path, sqlitestore.Options{})
	var v int
	require.NoError(t, s.DB().QueryRow("PRAGMA user_version").Scan(&v))
	assert.Equal(t, sqlitestore.SchemaVersion, v, "migrated on open")
	return s
}

// rawDB opens path with the plain driver, bypassing the store.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.RunHarness(t, storetest.Harness{
		New: func(t *testing.T) identity.Store {
			return open(t, filepath.Join(t.TempDir(), "state.db"), sqlitestore.Options{})
		},
		Corrupt: func(t *testing.T, s identity.Store, id string) {
			_, err := rawDB(t, s.(*sqlitestore.Store).Path()).Exec(`UPDATE agents SET suffering = '{"active": [' WHERE id = ?`, id)
			require.NoError(t, err)
		},
		FutureVersion: func(t *testing.T, s identity.Store, id string) error {
			path := s.(*sqlitestore.Store).Path()
			require.NoError(t, s.(*sqlitestore.Store).Close())
			_, err := rawDB(t, path).Exec("PRAGMA user_version = 99")
			require.NoError(t, err)
			s2, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
			if err == nil {
				s2.Close()
			}
			return err
		},
		Reopen: func(t *testing.T, s identity.Store) identity.Store {
			return open(t, s.(*sqlitestore.Store).Path(), sqlitestore.Options{})
		},
		Document: func(t *testing.T, s identity.Store, name string) identity.Document {
			return s.(*sqlitestore.Store).Document(name)
		},
	})
}
