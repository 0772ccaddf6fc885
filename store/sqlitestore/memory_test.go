package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion3DatabaseMigrates: a database of schema version 3 (no
// memories table) opens, migrates with its states intact, and then keeps
// memories.
func TestVersion3DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	path, want := olderDatabase(t, 3)

	s := migratedStore(t, path)
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "nothing lost")
	r := storetest.FullMemory("scout", "m1", "kept after the migration", time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC))
	_, _, err = s.AddMemory(ctx, r)
	require.NoError(t, err)
	recs, err := s.Memories(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, recs, 1)
}

// TestCorruptVectorNamed: a vector BLOB that is not float32 values is
// named in a CorruptError, not decoded into garbage.
func TestCorruptVectorNamed(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path, sqlitestore.Options{})
	_, _, err := s.AddMemory(ctx, storetest.FullMemory("scout", "m1", "text", time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, err)
	_, err = rawDB(t, path).Exec(`UPDATE memories SET vector = x'010203' WHERE id = 'm1'`)
	require.NoError(t, err)
	_, err = s.Memories(ctx, "scout")
	require.ErrorIs(t, err, identity.ErrCorrupt)
	require.ErrorIs(t, err, memory.ErrInvalid)
	assert.Contains(t, err.Error(), "memories[scout/m1]")
}

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(b *testing.B) memory.Store {
		return open(b, filepath.Join(b.TempDir(), "state.db"), sqlitestore.Options{})
	})
}
