package sqlitestore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion1DatabaseMigrates: a database of schema version 1 (no
// agents.last_presence column) opens, migrates to
// [sqlitestore.SchemaVersion], loads every state as never present with
// everything else intact, and the next save stores LastPresence.
func TestVersion1DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	path, want := olderDatabase(t, 1)

	s := migratedStore(t, path)
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.True(t, got.LastPresence.IsZero(), "a version-1 row is never present")
	want.LastPresence = time.Time{}
	assert.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "nothing else lost")

	got.LastPresence = t0
	require.NoError(t, s.Save(ctx, got))
	again := open(t, path, sqlitestore.Options{})
	st, err := again.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, t0, st.LastPresence, "stored after the migration")
	var col string
	require.NoError(t, s.DB().QueryRowContext(ctx, "SELECT last_presence FROM agents WHERE id = 'scout'").Scan(&col))
	assert.Equal(t, t0.Format(time.RFC3339Nano), col, "a column a person can query")
}
