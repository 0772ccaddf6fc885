package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/sqlitestore"
	"github.com/existence-loop/sdk/identity/storetest"
)

var _ existence.TaskSource = (*sqlitestore.Queue)(nil)

// open opens the store at path and closes it at the end of the test.
func open(t testing.TB, path string, opts sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
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
	})
}
