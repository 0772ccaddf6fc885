package sqlitestore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion5MemoriesSearchable: memories of a schema version 5
// database (no rid, no full-text index, no fact or superseded_by) keep
// every field through the migration to version 6 and are found by their
// words at once; new ones are too, and a deleted one is not.
func TestVersion5MemoriesSearchable(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	require.NoError(t, err)
	t0 := time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)
	var want []string
	for i, text := range []string{"the deploy broke on a missing env var", "lunch was pasta", "deploys on Friday are risky"} {
		r := storetest.FullMemory("scout", fmt.Sprintf("m%d", i), text, t0.Add(time.Duration(i)*time.Second))
		r.Fact, r.SupersededBy = "", "" // version 5 keeps neither
		_, _, err := s.AddMemory(ctx, r)
		require.NoError(t, err)
		want = append(want, r.ID)
	}
	before, err := s.Memories(ctx, "scout")
	require.NoError(t, err)
	var stored []string
	for _, r := range before {
		stored = append(stored, r.ID)
	}
	require.ElementsMatch(t, want, stored)
	require.NoError(t, s.Close())

	db := rawDB(t, path)
	for _, stmt := range append(undoMigration[7], undoMigration[6]...) {
		_, err := db.Exec(stmt)
		require.NoError(t, err, stmt)
	}
	_, err = db.Exec("PRAGMA user_version = 5")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s = migratedStore(t, path)
	after, err := s.Memories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, before, after, "every field survives the table's rebuild")
	hits, err := s.SearchMemories(ctx, "scout", "why did the deploy break?", 10)
	require.NoError(t, err)
	require.Len(t, hits, 2, "the migration indexed the existing texts")
	assert.ElementsMatch(t, []string{"m0", "m2"}, []string{hits[0].ID, hits[1].ID})

	_, _, err = s.AddMemory(ctx, storetest.FullMemory("scout", "m9", "a new deploy", t0))
	require.NoError(t, err)
	_, err = s.DeleteMemories(ctx, "scout", []string{"m0"})
	require.NoError(t, err)
	hits, err = s.SearchMemories(ctx, "scout", "deploy", 10)
	require.NoError(t, err)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	assert.ElementsMatch(t, []string{"m2", "m9"}, ids, "the triggers keep the index")
}
