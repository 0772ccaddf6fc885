package storetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// runShared runs the subtests of the store's shared documents and of the
// shared board kept in one (see [Harness].Document).
func runShared(t *testing.T, h Harness) {
	ctx := context.Background()
	doc := func(t *testing.T, s identity.Store, name string) identity.Document {
		t.Helper()
		if h.Document == nil {
			t.Skip("Harness.Document is nil")
		}
		d := h.Document(t, s, name)
		require.NotNil(t, d)
		return d
	}

	t.Run("shared document", func(t *testing.T) {
		s := h.New(t)
		d := doc(t, s, "notes")
		assert.Contains(t, d.Name(), "notes", "the name says which document")
		got, err := d.Load(ctx)
		require.NoError(t, err)
		assert.Empty(t, got, "no document yet")
		require.NoError(t, d.Update(ctx, func(old []byte) ([]byte, error) {
			assert.Empty(t, old)
			return []byte(`{"v":1} 日本語`), nil
		}))
		got, err = d.Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, `{"v":1} 日本語`, string(got))
		require.NoError(t, d.Update(ctx, func([]byte) ([]byte, error) { return nil, nil }), "nil data writes nothing")
		failed := fmt.Errorf("refused")
		require.ErrorIs(t, d.Update(ctx, func([]byte) ([]byte, error) { return []byte("x"), failed }), failed, "fn's error comes back")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, d.Update(cctx, func([]byte) ([]byte, error) { return []byte("canceled"), nil }), context.Canceled)
		got, err = d.Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, `{"v":1} 日本語`, string(got), "nothing was written by the refused updates")
		other, err := doc(t, s, "other").Load(ctx)
		require.NoError(t, err)
		assert.Empty(t, other, "documents are separate")
		if h.Reopen != nil {
			got, err = doc(t, h.Reopen(t, s), "notes").Load(ctx)
			require.NoError(t, err)
			assert.Equal(t, `{"v":1} 日本語`, string(got), "a second handle reads the same document")
		}
		ids, err := s.List(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids, "a shared document is not an agent")
	})

	t.Run("shared document concurrent updates", func(t *testing.T) {
		s := h.New(t)
		handles := []identity.Document{doc(t, s, "counter"), doc(t, s, "counter")}
		if h.Reopen != nil {
			handles = append(handles, doc(t, h.Reopen(t, s), "counter"))
		}
		const rounds = 10
		var wg sync.WaitGroup
		for _, d := range handles {
			for range 2 {
				wg.Go(func() {
					for range rounds {
						assert.NoError(t, d.Update(ctx, func(old []byte) ([]byte, error) {
							n := 0
							if len(old) > 0 {
								var err error
								if n, err = strconv.Atoi(string(old)); err != nil {
									return nil, err
								}
							}
							return []byte(strconv.Itoa(n + 1)), nil
						}))
					}
				})
			}
		}
		wg.Wait()
		got, err := handles[0].Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(len(handles)*2*rounds), string(got), "no update was lost")
	})

	t.Run("shared board", func(t *testing.T) {
		s := h.New(t)
		now := t0
		b := identity.NewSharedBoard(doc(t, s, identity.SharedSlotsDocument), identity.BoardOptions{Max: 3, Now: func() time.Time { return now }})
		got, err := b.List(ctx)
		require.NoError(t, err)
		assert.Empty(t, got)
		for i, imp := range []float64{0.5, 0.9, 0.2} {
			dropped, err := b.Put(ctx, slot.Slot{ID: fmt.Sprintf("s%d", i), Title: fmt.Sprintf("Slot %d", i), Status: slot.Completed, Summary: "ok", Importance: imp, NextRun: 60})
			require.NoError(t, err)
			assert.Empty(t, dropped)
			now = now.Add(time.Second)
		}
		dropped, err := b.Put(ctx, slot.Slot{ID: "s3", Status: slot.Running, Importance: 0.6})
		require.NoError(t, err)
		require.Len(t, dropped, 1, "a full board drops one slot")
		assert.Equal(t, "s2", dropped[0].ID, "the least important")
		_, err = b.Put(ctx, slot.Slot{ID: "bad", Status: slot.Completed, Importance: 2})
		require.ErrorIs(t, err, slot.ErrInvalid)

		want := []string{"s0", "s1", "s3"}
		check := func(b *identity.SharedBoard, who string) {
			t.Helper()
			got, err := b.List(ctx)
			require.NoError(t, err, who)
			var ids []string
			for _, x := range got {
				ids = append(ids, x.ID)
			}
			assert.Equal(t, want, ids, who)
			x, ok := slot.Find(got, "s3")
			require.True(t, ok, who)
			assert.Equal(t, "s3", x.Title, "%s: a blank title is the id", who)
			assert.Equal(t, t0.Add(3*time.Second), x.UpdatedAt.UTC(), "%s: stamped when posted", who)
		}
		check(b, "the same board")
		check(identity.NewSharedBoard(doc(t, s, identity.SharedSlotsDocument), identity.BoardOptions{}), "a second board on the same store")
		if h.Reopen != nil {
			check(identity.NewSharedBoard(doc(t, h.Reopen(t, s), identity.SharedSlotsDocument), identity.BoardOptions{}), "a second handle")
		}
		removed, err := b.Remove(ctx, "s0")
		require.NoError(t, err)
		assert.True(t, removed)
		removed, err = b.Remove(ctx, "s0")
		require.NoError(t, err)
		assert.False(t, removed)
		want = []string{"s1", "s3"}
		check(b, "after a removal")
	})

	t.Run("shared board corrupt", func(t *testing.T) {
		s := h.New(t)
		d := doc(t, s, identity.SharedSlotsDocument)
		require.NoError(t, d.Update(ctx, func([]byte) ([]byte, error) { return []byte(`{"schema_version": 1, "slots": [{"slot_id": `), nil }))
		b := identity.NewSharedBoard(d, identity.BoardOptions{})
		_, err := b.List(ctx)
		require.ErrorIs(t, err, identity.ErrCorrupt)
		assert.Contains(t, err.Error(), d.Name(), "the error names the document")
		_, err = b.Put(ctx, slot.Slot{ID: "x", Status: slot.Idle})
		require.ErrorIs(t, err, identity.ErrCorrupt, "a corrupt board is never replaced silently")
		raw, err := d.Load(ctx)
		require.NoError(t, err)
		assert.Equal(t, `{"schema_version": 1, "slots": [{"slot_id": `, string(raw), "left untouched")
		require.NoError(t, d.Update(ctx, func([]byte) ([]byte, error) { return []byte(`{"schema_version": 9, "slots": []}`), nil }))
		_, err = b.List(ctx)
		require.ErrorIs(t, err, identity.ErrCorrupt, "a newer version is refused")
		assert.Contains(t, err.Error(), "newer")
	})
}
