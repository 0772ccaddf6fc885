package sqlitestore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion4DatabaseMigrates: a database of schema version 4 (no
// agents.slots column) opens, migrates to [sqlitestore.SchemaVersion],
// loads every state with an empty board and everything else intact, and
// the next save stores the board in a column a person can query.
func TestVersion4DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	path, want := olderDatabase(t, 4)

	s := migratedStore(t, path)
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Empty(t, got.Slots, "a version-4 row has an empty board")
	slots := storetest.FullState("scout").Slots // what was saved before the downgrade
	require.NotEmpty(t, slots)
	assert.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "nothing else lost")

	got.Slots = slots
	require.NoError(t, s.Save(ctx, got))
	st, err := open(t, path, sqlitestore.Options{}).Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, slots, st.Slots, "stored after the migration")
	var col string
	require.NoError(t, s.DB().QueryRowContext(ctx, "SELECT slots FROM agents WHERE id = 'scout'").Scan(&col))
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(col), &raw))
	require.Len(t, raw, 2)
	assert.Equal(t, "weather", raw[0]["slot_id"], "GLaDOS's field names")
	assert.Equal(t, 0.8, raw[0]["importance"])
	assert.Equal(t, true, raw[0]["notify_user"])
}
