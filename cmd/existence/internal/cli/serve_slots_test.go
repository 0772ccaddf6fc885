package cli

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/filestore"
)

// TestServeSlots: serve posts to the shared board the store keeps (the
// processes running the agents read it), and refuses an agent's own board,
// which belongs to the process that runs the agent.
func TestServeSlots(t *testing.T) {
	ctx := context.Background()
	store, err := filestore.Open(t.TempDir(), filestore.Options{})
	require.NoError(t, err)
	require.NoError(t, store.Save(ctx, &identity.AgentState{Identity: identity.New("scout", "Cedar", time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))}))
	src := newStoreSource(store, "dir", slog.New(slog.DiscardHandler))
	require.NoError(t, src.refresh(ctx))

	require.NoError(t, src.PostSharedSlot(ctx, slot.Slot{ID: "news", Status: slot.Completed, Summary: "from serve"}))
	board, ok := storespec.SharedSlots(store, identity.BoardOptions{})
	require.True(t, ok)
	got, err := board.List(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "from serve", got[0].Summary)
	listed, err := src.SharedSlots(ctx)
	require.NoError(t, err)
	assert.Len(t, listed, 1)

	err = src.PostSlot(ctx, "scout", slot.Slot{ID: "x", Status: slot.Idle})
	require.ErrorIs(t, err, monitor.ErrUnsupported)
	assert.Contains(t, err.Error(), "runs in another process")
	require.ErrorIs(t, src.PostSlot(ctx, "nobody", slot.Slot{ID: "x", Status: slot.Idle}), monitor.ErrNoAgent)

	// Removal: the shared board's slot goes; an agent's own board is
	// refused like a post.
	removed, err := src.RemoveSharedSlot(ctx, "news")
	require.NoError(t, err)
	assert.True(t, removed)
	got, err = board.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	removed, err = src.RemoveSharedSlot(ctx, "news")
	require.NoError(t, err)
	assert.False(t, removed, "gone already")
	_, err = src.RemoveSlot(ctx, "scout", "x")
	require.ErrorIs(t, err, monitor.ErrUnsupported)
	_, err = src.RemoveSlot(ctx, "nobody", "x")
	require.ErrorIs(t, err, monitor.ErrNoAgent)
}
