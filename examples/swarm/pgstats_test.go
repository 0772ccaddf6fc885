package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// TestPostgresFigures: with PostgreSQL the run reports what the store did
// (saves per second, group commits, round trips per cycle, leases renewed,
// late and lost, the lease margin), printed and under "postgres" in -json.
func TestPostgresFigures(t *testing.T) {
	res, err := run(context.Background(), short(t, pgtest.New(t)))
	require.NoError(t, err)
	f := res.Postgres
	require.NotNil(t, f)
	assert.Positive(t, f.SavesPerS)
	assert.Positive(t, f.Batches)
	assert.GreaterOrEqual(t, f.BatchMean, 1.0)
	assert.Positive(t, f.RoundTripsPerCycle)
	assert.Zero(t, f.LeasesLost)
	assert.Zero(t, f.SavesFenced)
	assert.EqualValues(t, pgstore.DefaultTTL.Milliseconds(), f.TTLMs)

	var text bytes.Buffer
	require.NoError(t, res.print(&text, false))
	assert.Contains(t, text.String(), "group commits")
	assert.Contains(t, text.String(), "time left at renewal p1")
	var js bytes.Buffer
	require.NoError(t, res.print(&js, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	pg, ok := m["postgres"].(map[string]any)
	require.True(t, ok, "a postgres object in -json")
	for _, k := range []string{"saves_per_s", "batch_mean", "batch_p99", "round_trips_per_cycle", "leases_renewed", "leases_late", "leases_lost", "lease_margin_p1_ms"} {
		assert.Contains(t, pg, k)
	}
}

// TestPostgresFiguresOf: the figures of an interval are the differences
// of the store's counters.
func TestPostgresFiguresOf(t *testing.T) {
	a := pgstore.Stats{Saves: 100, Batches: 10, RoundTrips: 50, LeasesRenewed: 10}
	a.BatchSizes[3] = 10
	b := pgstore.Stats{Saves: 400, SavesFenced: 2, Batches: 30, BatchMax: 60, RoundTrips: 150, LeasesRenewed: 30, LeasesLate: 1,
		MarginP1: 9500 * 1e6, TTL: 15e9, LateMargin: 5e9}
	b.BatchSizes = a.BatchSizes
	b.BatchSizes[4] += 15 // 9–16 saves
	b.BatchSizes[6] += 5  // 33–64 saves
	f := pgFiguresOf(a, b, 200, 2e9)
	assert.InDelta(t, 150, f.SavesPerS, 1e-9)
	assert.EqualValues(t, 20, f.Batches)
	assert.InDelta(t, 302.0/20, f.BatchMean, 1e-9)
	assert.Equal(t, 16, f.BatchP50)
	assert.Equal(t, 64, f.BatchP99)
	assert.InDelta(t, 0.5, f.RoundTripsPerCycle, 1e-9)
	assert.EqualValues(t, 20, f.LeasesRenewed)
	assert.EqualValues(t, 1, f.LeasesLate)
	assert.InDelta(t, 9500, f.MarginP1Ms, 1e-9)
	assert.InDelta(t, 5000, f.LateMarginMs, 1e-9)
}
