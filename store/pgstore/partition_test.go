package pgstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
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
	require.NoError(t, cut.Save(ctx, state("scout", "v1")))
	require.Equal(t, []string{"scout"}, ids(t, cut, 1), "claimed")
	require.NoError(t, cut.Save(ctx, state("scout", "v2 by the holder")))

	proxy.Cut()
	// The holder saves during the partition: the write is held in the
	// network, as TCP holds a segment it retransmits.
	delayed := make(chan error, 1)
	go func() { delayed <- cut.Save(ctx, state("scout", "delayed write from the partitioned holder")) }()
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := cut.Renew(rctx)
	require.Error(t, err, "Renew through a cut connection succeeded")
	cancel()

	// Meanwhile the lease expires and another process takes the agent over.
	expire(t, other, "scout")
	require.Equal(t, []string{"scout"}, ids(t, other, 1), "the other process claimed")
	require.NoError(t, other.Save(ctx, state("scout", "v3 by the new owner")))

	proxy.Restore()
	require.ErrorIs(t, <-delayed, pgstore.ErrFenced, "the delayed write")
	require.ErrorIs(t, cut.Save(ctx, state("scout", "later write")), pgstore.ErrFenced, "a later write")
	_, err = cut.Tasks().Next(ctx, "scout")
	require.ErrorIs(t, err, pgstore.ErrFenced, "a later Next")
	lost, err := cut.Renew(ctx)
	require.NoError(t, err, "Renew after the partition")
	require.Equal(t, []string{"scout"}, lost, "Renew after the partition: want scout lost")
	got, err := other.Load(ctx, "scout")
	require.NoError(t, err)
	require.Equal(t, "v3 by the new owner", got.Identity.Narrative, "stored: the partitioned process wrote")
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
