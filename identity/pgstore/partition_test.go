package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// TestPartition: a process whose connection is cut while it writes, and
// restored after its lease expired and another process took the agent
// over, must not write: its delayed write arrives and is refused, and so
// is every later one.
func TestPartition(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	if srv.Dir == "" {
		t.Skip("needs a throwaway server to put a proxy in front of")
	}
	url := srv.CreateDatabase(t)
	proxy := pgtest.NewProxy(t, "127.0.0.1:"+strconv.Itoa(srv.Port))
	viaProxy := replacePort(url, srv.Port, proxy.Port())

	const ttl = time.Minute // the tests expire leases through SQL, never by waiting
	cut := open(t, viaProxy, "host-cut:1", ttl)
	other := open(t, url, "host-b:2", ttl)
	if err := cut.Save(ctx, state("scout", "v1")); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cut, 1); !slices.Equal(got, []string{"scout"}) {
		t.Fatalf("claimed %v", got)
	}
	if err := cut.Save(ctx, state("scout", "v2 by the holder")); err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	// The holder saves during the partition: the write is held in the
	// network, as TCP holds a segment it retransmits.
	delayed := make(chan error, 1)
	go func() { delayed <- cut.Save(ctx, state("scout", "delayed write from the partitioned holder")) }()
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if _, err := cut.Renew(rctx); err == nil {
		t.Fatal("Renew through a cut connection succeeded")
	}
	cancel()

	// Meanwhile the lease expires and another process takes the agent over.
	expire(t, other, "scout")
	if got := ids(t, other, 1); !slices.Equal(got, []string{"scout"}) {
		t.Fatalf("the other process claimed %v", got)
	}
	if err := other.Save(ctx, state("scout", "v3 by the new owner")); err != nil {
		t.Fatal(err)
	}

	proxy.Restore()
	if err := <-delayed; !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the delayed write = %v, want ErrFenced", err)
	}
	if err := cut.Save(ctx, state("scout", "later write")); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("a later write = %v, want ErrFenced", err)
	}
	if _, err := cut.Tasks().Next(ctx, "scout"); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("a later Next = %v, want ErrFenced", err)
	}
	lost, err := cut.Renew(ctx)
	if err != nil || !slices.Equal(lost, []string{"scout"}) {
		t.Fatalf("Renew after the partition = %v, %v; want scout lost", lost, err)
	}
	got, err := other.Load(ctx, "scout")
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity.Narrative != "v3 by the new owner" {
		t.Fatalf("stored %q: the partitioned process wrote", got.Identity.Narrative)
	}
}

func replacePort(url string, from, to int) string {
	a, b := ":"+strconv.Itoa(from)+"/", ":"+strconv.Itoa(to)+"/"
	for i := 0; i+len(a) <= len(url); i++ {
		if url[i:i+len(a)] == a {
			return url[:i] + b + url[i+len(a):]
		}
	}
	return url
}
