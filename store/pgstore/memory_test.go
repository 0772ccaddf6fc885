package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion2DatabaseMigrates: a database of schema version 2 (no
// existence_memories table) opens, migrates with its states intact, and
// then keeps memories.
func TestVersion2DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s := open(t, url, "a", 0)
	require.NoError(t, s.Save(ctx, storetest.FullState("scout")))
	_, err := s.Pool().Exec(ctx, `DROP TABLE existence_memories; DELETE FROM existence_migrations WHERE version > 2`)
	require.NoError(t, err)
	s.Close()

	s = open(t, url, "b", 0)
	var n int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT max(version) FROM existence_migrations`).Scan(&n))
	require.Equal(t, pgstore.SchemaVersion, n)
	_, err = s.Load(ctx, "scout")
	require.NoError(t, err, "state kept by the migration")
	_, _, err = s.AddMemory(ctx, storetest.FullMemory("scout", "m1", "kept after the migration", t0))
	require.NoError(t, err)
	recs, err := s.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}

// TestCorruptVectorNamed: a vector that is not float32 values is named
// in a CorruptError.
func TestCorruptVectorNamed(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "a", 0)
	_, _, err := s.AddMemory(ctx, storetest.FullMemory("scout", "m1", "text", t0))
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, `UPDATE existence_memories SET vector = '\x010203' WHERE id = 'm1'`)
	require.NoError(t, err)
	_, err = s.Memories(ctx, "scout")
	require.ErrorIs(t, err, identity.ErrCorrupt)
	require.ErrorIs(t, err, memory.ErrInvalid)
	assert.Contains(t, err.Error(), "existence_memories[scout/m1]")
}

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(b *testing.B) memory.Store {
		s, err := pgstore.Open(context.Background(), pgtest.New(b), pgstore.Options{Owner: "bench"})
		require.NoError(b, err)
		b.Cleanup(s.Close)
		return s
	})
}
