package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestVersion1DatabaseMigrates: a database of schema version 1 (no
// existence_documents table) opens, migrates to
// [pgstore.SchemaVersion] with its states intact, and then keeps
// documents.
func TestVersion1DatabaseMigrates(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s := open(t, url, "a", 0)
	require.NoError(t, s.Save(ctx, storetest.FullState("scout")))
	_, err := s.Pool().Exec(ctx, `DROP TABLE existence_documents; DROP TABLE existence_memories; DELETE FROM existence_migrations WHERE version > 1`)
	require.NoError(t, err)
	s.Close()

	s = open(t, url, "b", 0)
	var n int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT max(version) FROM existence_migrations`).Scan(&n))
	require.Equal(t, pgstore.SchemaVersion, n, "schema version after open")
	_, err = s.Load(ctx, "scout")
	require.NoError(t, err, "state lost in the migration")
	doc := s.Document("requests")
	data, err := doc.Load(ctx)
	require.NoError(t, err)
	require.Nil(t, data, "Load: want nothing")
	require.NoError(t, doc.Update(ctx, func([]byte) ([]byte, error) { return []byte(`{"version":1}`), nil }))
	data, err = doc.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"version":1}`, string(data), "Load")
}

// TestDocumentUpdate: fn's error or nil data writes nothing; concurrent
// read-modify-writes from two stores lose no update (the row lock).
func TestDocumentUpdate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s1, s2 := open(t, url, "a", 0), open(t, url, "b", 0)
	doc := s1.Document("notes")
	name := doc.Name()
	assert.True(t, strings.HasPrefix(name, "postgres://"), "Name = %q", name)
	assert.True(t, strings.HasSuffix(name, "#notes"), "Name = %q", name)
	assert.NotContains(t, name, "@", "Name = %q", name)
	refused := errors.New("refused")
	err := doc.Update(ctx, func([]byte) ([]byte, error) { return []byte("x"), refused })
	require.ErrorIs(t, err, refused, "Update: want fn's error")
	require.NoError(t, doc.Update(ctx, func([]byte) ([]byte, error) { return nil, nil }))
	data, err := doc.Load(ctx)
	require.NoError(t, err)
	require.Nil(t, data, "Load: want nothing written")

	const each = 20
	var wg sync.WaitGroup
	for _, s := range []*pgstore.Store{s1, s2} {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := s.Document("notes")
				for range each {
					err := d.Update(ctx, func(old []byte) ([]byte, error) { return append(old, '+'), nil })
					if !assert.NoError(t, err) {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	data, err = s2.Document("notes").Load(ctx)
	require.NoError(t, err)
	require.Len(t, data, 4*each, "updates kept")
}
