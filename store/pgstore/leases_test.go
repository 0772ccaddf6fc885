package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
)

// expire makes every live lease of the database lapse now, as if the TTL
// had passed (the tests never sleep through a TTL).
func expire(t *testing.T, s *pgstore.Store, ids ...string) {
	t.Helper()
	_, err := s.Pool().Exec(context.Background(),
		`UPDATE existence_leases SET expires_at = now() - interval '1 second' WHERE agent_id = ANY($1)`, ids)
	require.NoError(t, err)
}

func ids(t *testing.T, s *pgstore.Store, max int) []string {
	t.Helper()
	ls, err := s.Claim(context.Background(), max)
	require.NoError(t, err)
	var out []string
	for _, l := range ls {
		out = append(out, l.AgentID)
	}
	slices.Sort(out)
	return out
}

func TestClaimByDueTimeUpToMax(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Minute), open(t, url, "host-b:2", time.Minute)
	for i, id := range []string{"c", "a", "b"} {
		st := state(id, "")
		st.UpdatedAt = t0.Add(time.Duration(i) * time.Hour) // c is due first
		require.NoError(t, a.Save(ctx, st))
	}
	require.NoError(t, a.Enroll(ctx, "fresh"))
	ls, err := a.Claim(ctx, 2)
	require.NoError(t, err)
	require.Len(t, ls, 2, "claimed %+v", ls)
	require.Equal(t, int64(1), ls[0].Epoch, "claimed %+v", ls)
	require.Equal(t, "host-a:1", ls[0].Owner, "claimed %+v", ls)
	got := []string{ls[0].AgentID, ls[1].AgentID}
	slices.Sort(got)
	require.Equal(t, []string{"c", "fresh"}, got, "want the never-saved and the longest-unsaved")
	require.Equal(t, []string{"a", "b"}, ids(t, b, 10), "b claimed: want the rest")
	require.Empty(t, ids(t, a, 10), "a claimed with every agent held")
	view, err := a.Leases(ctx)
	require.NoError(t, err)
	for _, l := range view {
		assert.True(t, l.Live, "leases view row %+v: want live with owner, host and pid", l)
		assert.NotEmpty(t, l.Owner, "leases view row %+v: want live with owner, host and pid", l)
		assert.NotZero(t, l.PID, "leases view row %+v: want live with owner, host and pid", l)
		assert.NotEmpty(t, l.Host, "leases view row %+v: want live with owner, host and pid", l)
	}
}

func TestFencingAfterTakeover(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Minute), open(t, url, "host-b:2", time.Minute)
	require.NoError(t, a.Save(ctx, state("scout", "v1 by a")))
	require.Equal(t, []string{"scout"}, ids(t, a, 1), "a claimed")
	require.NoError(t, a.Save(ctx, state("scout", "v2 by a")))
	// b may not write an agent a holds, even without a lease of its own.
	err := b.Save(ctx, state("scout", "by b without a lease"))
	var fe *pgstore.FencedError
	require.ErrorAs(t, err, &fe, "b's unleased save: want a FencedError naming host-a:1")
	require.Equal(t, "host-a:1", fe.Holder, "b's unleased save = %v, want a FencedError naming host-a:1", err)
	// a's lease lapses (a long GC pause) and b takes over at epoch 2.
	expire(t, a, "scout")
	require.Equal(t, []string{"scout"}, ids(t, b, 1), "b claimed")
	require.NoError(t, b.Save(ctx, state("scout", "v3 by b")))
	// a wakes up: its stale epoch's save and queue operations fail and
	// change nothing.
	err = a.Save(ctx, state("scout", "stale write by a"))
	require.ErrorIs(t, err, pgstore.ErrFenced, "stale save")
	t.Log(err)
	_, err = a.Tasks().Next(ctx, "scout")
	require.ErrorIs(t, err, pgstore.ErrFenced, "stale Next")
	got, err := b.Load(ctx, "scout")
	require.NoError(t, err)
	require.Equal(t, "v3 by b", got.Identity.Narrative, "stored narrative: want the new owner's")
	lost, err := a.Renew(ctx)
	require.NoError(t, err, "a.Renew")
	require.Equal(t, []string{"scout"}, lost, "a.Renew: want scout lost")
	lost, err = b.Renew(ctx)
	require.NoError(t, err, "b.Renew")
	require.Empty(t, lost, "b.Renew: want nothing lost")
	require.NoError(t, a.Release(ctx, "scout"))
	_, ok := b.Held("scout")
	require.True(t, ok, "a's release of a lost lease freed b's lease")
}

func TestReleaseHandsOverAtOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	require.NoError(t, a.Enroll(ctx, "x", "y"))
	require.Len(t, ids(t, a, 5), 2, "a claimed")
	require.NoError(t, a.Release(ctx, "x", "y"))
	require.ErrorIs(t, a.Save(ctx, state("x", "after release")), pgstore.ErrFenced, "save after release")
	ls, err := b.Claim(ctx, 5)
	require.NoError(t, err, "b.Claim")
	require.Len(t, ls, 2, "b.Claim: want both at epoch 2 without waiting for the TTL")
	require.Equal(t, int64(2), ls[0].Epoch, "b.Claim = %+v: want both at epoch 2 without waiting for the TTL", ls)
}

func TestLockIsALease(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	unlock, err := a.Lock("scout")
	require.NoError(t, err)
	_, err = b.Lock("scout")
	var le *identity.LockedError
	require.ErrorAs(t, err, &le, "b.Lock: want a LockedError")
	t.Log(err)
	require.Empty(t, ids(t, b, 5), "b claimed locked agents")
	require.NoError(t, unlock())
	require.Equal(t, []string{"scout"}, ids(t, b, 5), "b claimed after unlock")
	// A Lock on an agent claimed by the same store (an existence.Agent
	// created for a claimed lease) succeeds and leaves the lease alone.
	u, err := b.Lock("scout")
	require.NoError(t, err)
	require.NoError(t, u())
	_, ok := b.Held("scout")
	require.True(t, ok, "the unlock of a claimed lease released it")
	require.NoError(t, b.Save(ctx, state("scout", "b")))
}

// TestFencedViewOfAnOlderLease: an agent object left over from an earlier
// lease of the same process (dropped, then the agent claimed again) cannot
// write, while the view of the current lease can.
func TestFencedViewOfAnOlderLease(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "host-a:1", time.Hour)
	require.NoError(t, s.Enroll(ctx, "scout"))
	first, err := s.Claim(ctx, 1)
	require.NoError(t, err)
	require.Len(t, first, 1)
	old := s.Fenced(first[0])
	require.NoError(t, old.Save(ctx, state("scout", "v1")))
	expire(t, s, "scout")
	second, err := s.Claim(ctx, 1)
	require.NoError(t, err)
	require.Len(t, second, 1)
	require.Equal(t, first[0].Epoch+1, second[0].Epoch)
	cur := s.Fenced(second[0])
	require.ErrorIs(t, old.Save(ctx, state("scout", "zombie")), pgstore.ErrFenced, "the older lease's save")
	_, err = old.Tasks().Next(ctx, "scout")
	require.ErrorIs(t, err, pgstore.ErrFenced, "the older lease's Next")
	require.NoError(t, cur.Save(ctx, state("scout", "v2")))
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err, "stored")
	require.Equal(t, "v2", got.Identity.Narrative, "stored %v", got)
}
