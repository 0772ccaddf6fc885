package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// expire makes every live lease of the database lapse now, as if the TTL
// had passed (the tests never sleep through a TTL).
func expire(t *testing.T, s *pgstore.Store, ids ...string) {
	t.Helper()
	_, err := s.Pool().Exec(context.Background(),
		`UPDATE existence_leases SET expires_at = now() - interval '1 second' WHERE agent_id = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
}

func ids(t *testing.T, s *pgstore.Store, max int) []string {
	t.Helper()
	ls, err := s.Claim(context.Background(), max)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := a.Save(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Enroll(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	ls, err := a.Claim(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Epoch != 1 || ls[0].Owner != "host-a:1" {
		t.Fatalf("claimed %+v", ls)
	}
	got := []string{ls[0].AgentID, ls[1].AgentID}
	slices.Sort(got)
	if want := []string{"c", "fresh"}; !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want the never-saved and the longest-unsaved %v", got, want)
	}
	if got := ids(t, b, 10); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("b claimed %v, want the rest", got)
	}
	if got := ids(t, a, 10); len(got) != 0 {
		t.Fatalf("a claimed %v with every agent held", got)
	}
	view, err := a.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range view {
		if !l.Live || l.Owner == "" || l.PID == 0 || l.Host == "" {
			t.Errorf("leases view row %+v: want live with owner, host and pid", l)
		}
	}
}

func TestFencingAfterTakeover(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Minute), open(t, url, "host-b:2", time.Minute)
	if err := a.Save(ctx, state("scout", "v1 by a")); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, a, 1); !slices.Equal(got, []string{"scout"}) {
		t.Fatalf("a claimed %v", got)
	}
	if err := a.Save(ctx, state("scout", "v2 by a")); err != nil {
		t.Fatal(err)
	}
	// b may not write an agent a holds, even without a lease of its own.
	err := b.Save(ctx, state("scout", "by b without a lease"))
	var fe *pgstore.FencedError
	if !errors.As(err, &fe) || fe.Holder != "host-a:1" {
		t.Fatalf("b's unleased save = %v, want a FencedError naming host-a:1", err)
	}
	// a's lease lapses (a long GC pause) and b takes over at epoch 2.
	expire(t, a, "scout")
	if got := ids(t, b, 1); !slices.Equal(got, []string{"scout"}) {
		t.Fatalf("b claimed %v", got)
	}
	if err := b.Save(ctx, state("scout", "v3 by b")); err != nil {
		t.Fatal(err)
	}
	// a wakes up: its stale epoch's save and queue operations fail and
	// change nothing.
	err = a.Save(ctx, state("scout", "stale write by a"))
	if !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("stale save = %v, want ErrFenced", err)
	}
	t.Log(err)
	if _, err := a.Tasks().Next(ctx, "scout"); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("stale Next = %v, want ErrFenced", err)
	}
	got, err := b.Load(ctx, "scout")
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity.Narrative != "v3 by b" {
		t.Fatalf("stored narrative %q, want the new owner's", got.Identity.Narrative)
	}
	lost, err := a.Renew(ctx)
	if err != nil || !slices.Equal(lost, []string{"scout"}) {
		t.Fatalf("a.Renew = %v, %v; want scout lost", lost, err)
	}
	lost, err = b.Renew(ctx)
	if err != nil || len(lost) != 0 {
		t.Fatalf("b.Renew = %v, %v; want nothing lost", lost, err)
	}
	if err := a.Release(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Held("scout"); !ok {
		t.Fatal("a's release of a lost lease freed b's lease")
	}
}

func TestReleaseHandsOverAtOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	if err := a.Enroll(ctx, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, a, 5); len(got) != 2 {
		t.Fatalf("a claimed %v", got)
	}
	if err := a.Release(ctx, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, state("x", "after release")); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("save after release = %v, want ErrFenced", err)
	}
	ls, err := b.Claim(ctx, 5)
	if err != nil || len(ls) != 2 || ls[0].Epoch != 2 {
		t.Fatalf("b.Claim = %+v, %v; want both at epoch 2 without waiting for the TTL", ls, err)
	}
}

func TestLockIsALease(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	unlock, err := a.Lock("scout")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock("scout")
	var le *identity.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("b.Lock = %v, want a LockedError", err)
	}
	t.Log(err)
	if got := ids(t, b, 5); len(got) != 0 {
		t.Fatalf("b claimed locked agents %v", got)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, b, 5); !slices.Equal(got, []string{"scout"}) {
		t.Fatalf("b claimed %v after unlock", got)
	}
	// A Lock on an agent claimed by the same store (an existence.Agent
	// created for a claimed lease) succeeds and leaves the lease alone.
	u, err := b.Lock("scout")
	if err != nil {
		t.Fatal(err)
	}
	if err := u(); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Held("scout"); !ok {
		t.Fatal("the unlock of a claimed lease released it")
	}
	if err := b.Save(ctx, state("scout", "b")); err != nil {
		t.Fatal(err)
	}
}

// TestFencedViewOfAnOlderLease: an agent object left over from an earlier
// lease of the same process (dropped, then the agent claimed again) cannot
// write, while the view of the current lease can.
func TestFencedViewOfAnOlderLease(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.New(t), "host-a:1", time.Hour)
	if err := s.Enroll(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	first, err := s.Claim(ctx, 1)
	if err != nil || len(first) != 1 {
		t.Fatal(first, err)
	}
	old := s.Fenced(first[0])
	if err := old.Save(ctx, state("scout", "v1")); err != nil {
		t.Fatal(err)
	}
	expire(t, s, "scout")
	second, err := s.Claim(ctx, 1)
	if err != nil || len(second) != 1 || second[0].Epoch != first[0].Epoch+1 {
		t.Fatal(second, err)
	}
	cur := s.Fenced(second[0])
	if err := old.Save(ctx, state("scout", "zombie")); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the older lease's save = %v, want ErrFenced", err)
	}
	if _, err := old.Tasks().Next(ctx, "scout"); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the older lease's Next = %v, want ErrFenced", err)
	}
	if err := cur.Save(ctx, state("scout", "v2")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "scout")
	if err != nil || got.Identity.Narrative != "v2" {
		t.Fatalf("stored %v, %v", got, err)
	}
}
