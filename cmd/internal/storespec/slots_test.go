package storespec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestSharedSlots: every kind of store keeps the shared board where it
// keeps shared documents, and a reopened store sees it; a directory store
// keeps it in slots.shared.json, which is not listed as an agent.
func TestSharedSlots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, spec := range []string{filepath.Join(dir, "state"), "sqlite:" + filepath.Join(dir, "state.db")} {
		t.Run(spec, func(t *testing.T) {
			for round := range 2 {
				store, _, closer, err := storespec.Open(ctx, spec, storespec.Options{})
				require.NoError(t, err)
				b, ok := storespec.SharedSlots(store, identity.BoardOptions{})
				require.True(t, ok)
				if round == 0 {
					_, err = b.Put(ctx, slot.Slot{ID: "news", Status: slot.Completed, Summary: "a headline"})
					require.NoError(t, err)
				} else {
					got, err := b.List(ctx)
					require.NoError(t, err)
					require.Len(t, got, 1)
					assert.Equal(t, "a headline", got[0].Summary)
					ids, err := store.List(ctx)
					require.NoError(t, err)
					assert.Empty(t, ids, "the board is not an agent")
				}
				require.NoError(t, closer.Close())
			}
		})
	}
	_, err := os.Stat(filepath.Join(dir, "state", "slots.shared.json"))
	require.NoError(t, err)
	_, ok := storespec.SharedSlots(memstore.New(), identity.BoardOptions{})
	assert.False(t, ok, "an in-memory store keeps no documents")
}
