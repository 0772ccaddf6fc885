package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// TestSharedBoardCache: Cached answers from the cache within MaxAge (what
// an agent reads every cycle), reads again after it, and keeps the last
// slots read when the document fails.
func TestSharedBoardCache(t *testing.T) {
	ctx := context.Background()
	doc := &flaky{Document: identity.NewMemoryDocument("slots")}
	a := identity.NewSharedBoard(doc, identity.BoardOptions{MaxAge: time.Hour})
	b := identity.NewSharedBoard(doc, identity.BoardOptions{})
	_, err := a.Put(ctx, slot.Slot{ID: "one", Status: slot.Idle})
	require.NoError(t, err)
	_, err = b.Put(ctx, slot.Slot{ID: "two", Status: slot.Idle})
	require.NoError(t, err)
	got, err := a.Cached(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "within MaxAge: the cache (updated by a's own Put)")
	got, err = a.List(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 2, "List reads the document")

	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	fresh := identity.NewSharedBoard(doc, identity.BoardOptions{MaxAge: time.Second, Now: func() time.Time { return now }})
	got, err = fresh.Cached(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 2)
	doc.fail = errors.New("disk gone")
	got, err = fresh.Cached(ctx)
	require.NoError(t, err, "within MaxAge: no read")
	assert.Len(t, got, 2)
	now = now.Add(time.Second)
	got, err = fresh.Cached(ctx)
	require.ErrorIs(t, err, doc.fail)
	assert.Len(t, got, 2, "the last slots read come back with the error")
	assert.Equal(t, "memory#slots", fresh.Name())
	assert.Equal(t, slot.DefaultMax, fresh.Max())
}

type flaky struct {
	identity.Document
	fail error
}

func (f *flaky) Load(ctx context.Context) ([]byte, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return f.Document.Load(ctx)
}
