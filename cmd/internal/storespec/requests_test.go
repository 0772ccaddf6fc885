package storespec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// TestOpenRequests: a sqlite: or postgres:// store keeps the requests in
// its database, and a reopened store sees them; a directory store is left
// to requests.Open.
func TestOpenRequests(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	specs := []string{"sqlite:" + filepath.Join(dir, "state.db"), "postgres"}
	for _, spec := range specs {
		t.Run(spec, func(t *testing.T) {
			if spec == "postgres" {
				spec = pgtest.New(t)
			}
			for round := range 2 {
				store, _, closer, err := storespec.Open(ctx, spec, storespec.Options{})
				require.NoError(t, err)
				q, ok, err := storespec.OpenRequests(ctx, store, requests.Options{})
				require.NoError(t, err)
				require.True(t, ok)
				if round == 0 {
					_, err = q.Submit(ctx, "scout", requests.Question, "which format?")
					require.NoError(t, err)
				} else {
					got, err := q.Get(ctx, "1")
					require.NoError(t, err)
					assert.Equal(t, "which format?", got.Text)
				}
				require.NoError(t, closer.Close())
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, requests.FileName, e.Name(), "no requests.json next to the database")
	}

	store, _, closer, err := storespec.Open(ctx, filepath.Join(dir, "state"), storespec.Options{})
	require.NoError(t, err)
	defer closer.Close()
	q, ok, err := storespec.OpenRequests(ctx, store, requests.Options{})
	assert.NoError(t, err)
	assert.False(t, ok, "a directory store keeps requests.json itself")
	assert.Nil(t, q)
}
