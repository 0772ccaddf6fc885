package sqlitestore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion6DatabaseMigrates: a database of schema version 6 (no
// agents.extra column) opens, migrates to [sqlitestore.SchemaVersion],
// loads every state with no working memory and never commissioned and
// everything else intact, and the next save stores them.
func TestVersion6DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	path, want := olderDatabase(t, 6)

	s := migratedStore(t, path)
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Empty(t, got.WorkingMemory, "a version-6 row has no working memory")
	assert.True(t, got.Commissioned.IsZero())
	assert.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "nothing else lost")

	full := storetest.FullState("scout")
	got.WorkingMemory, got.Commissioned = full.WorkingMemory, full.Commissioned
	require.NoError(t, s.Save(ctx, got))
	st, err := open(t, path, sqlitestore.Options{}).Load(ctx, "scout")
	require.NoError(t, err)
	assert.JSONEq(t, string(full.WorkingMemory), string(st.WorkingMemory), "stored after the migration")
	assert.True(t, full.Commissioned.Equal(st.Commissioned))
}
