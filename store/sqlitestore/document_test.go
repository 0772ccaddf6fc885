package sqlitestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion2DatabaseMigrates: a database of schema version 2 (no
// documents table) opens, migrates to
// [sqlitestore.SchemaVersion] with its states intact, and then keeps
// documents.
func TestVersion2DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	path, want := olderDatabase(t, 2)

	s := migratedStore(t, path)
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, storetest.StateJSON(t, want), storetest.StateJSON(t, got), "nothing lost")

	doc := s.Document("requests")
	data, err := doc.Load(ctx)
	require.NoError(t, err)
	assert.Nil(t, data, "never stored")
	require.NoError(t, doc.Update(ctx, func(old []byte) ([]byte, error) {
		assert.Nil(t, old)
		return []byte(`{"version":1}`), nil
	}))
	data, err = doc.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, `{"version":1}`, string(data))
}

// TestDocumentUpdate: fn's error or nil data writes nothing; a closed
// store refuses.
func TestDocumentUpdate(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	require.NoError(t, err)
	doc := s.Document("notes")
	assert.Equal(t, "sqlite:"+path+"#notes", doc.Name())
	require.NoError(t, doc.Update(ctx, func([]byte) ([]byte, error) { return []byte("a"), nil }))
	refused := errors.New("refused")
	assert.ErrorIs(t, doc.Update(ctx, func([]byte) ([]byte, error) { return []byte("b"), refused }), refused)
	require.NoError(t, doc.Update(ctx, func(old []byte) ([]byte, error) {
		assert.Equal(t, "a", string(old))
		return nil, nil
	}))
	data, err := doc.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", string(data), "unchanged")
	other, err := s.Document("other").Load(ctx)
	require.NoError(t, err)
	assert.Nil(t, other, "documents are separate")

	require.NoError(t, s.Close())
	_, err = doc.Load(ctx)
	assert.ErrorIs(t, err, sqlitestore.ErrClosed)
	assert.ErrorIs(t, doc.Update(ctx, func([]byte) ([]byte, error) { return nil, nil }), sqlitestore.ErrClosed)
}
