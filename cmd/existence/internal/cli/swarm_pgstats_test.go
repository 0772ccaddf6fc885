package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/store/pgstore"
)

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
