package pgstore_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// open opens a Store on url with a test owner name, closed at the end.
func open(t *testing.T, url, owner string, ttl time.Duration) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{Owner: owner, TTL: ttl})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func state(id, narrative string) *identity.AgentState {
	st := &identity.AgentState{Identity: identity.New(id, "Name-"+id, t0), UpdatedAt: t0}
	st.Identity.Narrative = narrative
	return st
}

var discard = slog.New(slog.DiscardHandler)
