package pgtest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewGivesAFreshDatabase(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		c, err := pgx.Connect(ctx, pgtest.New(t))
		require.NoError(t, err)
		_, err = c.Exec(ctx, "CREATE TABLE t (x int)")
		require.NoError(t, err) // a second database with the table would fail here
		c.Close(ctx)
	}
}

func TestProxyCutHoldsTraffic(t *testing.T) {
	s := pgtest.Start(t)
	if s.Dir == "" {
		t.Skip("needs a throwaway server")
	}
	p := pgtest.NewProxy(t, "127.0.0.1:"+strconv.Itoa(s.Port))
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(s.URL("postgres"))
	require.NoError(t, err)
	cfg.Port = uint16(p.Port())
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer c.Close(ctx)
	p.Cut()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.Exec(short, "SELECT 1")
	require.Error(t, err, "a query went through a cut proxy")
	p.Restore()
}
