package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/store/pgstore"
)

// pgFigures are what the PostgreSQL store did in this process during the
// timed run (the difference of two pgstore.Stats, at the start and at the
// stop), in the -json output under "postgres".
type pgFigures struct {
	// SavesPerS are the saves written per second; SavesFenced those
	// refused by the fence (a lease lost), SavesFailed those that failed
	// otherwise.
	SavesPerS   float64 `json:"saves_per_s"`
	SavesFenced int64   `json:"saves_fenced"`
	SavesFailed int64   `json:"saves_failed"`
	// Batches are the group commits (one statement and transaction
	// each); BatchMean, BatchP50 and BatchP99 their size in saves (the
	// quantiles as the upper bound of a power-of-two bucket), BatchMax
	// the largest since the store opened.
	Batches   int64   `json:"batches"`
	BatchMean float64 `json:"batch_mean"`
	BatchP50  int     `json:"batch_p50"`
	BatchP99  int     `json:"batch_p99"`
	BatchMax  int64   `json:"batch_max"`
	// RoundTrips are the statements sent to the server (all connections),
	// RoundTripsPerCycle the same per existence cycle, LeaseRoundTrips
	// those of the lease connections.
	RoundTrips         int64   `json:"round_trips"`
	RoundTripsPerCycle float64 `json:"round_trips_per_cycle"`
	LeaseRoundTrips    int64   `json:"lease_round_trips"`
	// TaskProbes are the task-queue asks answered by a shared probe,
	// TaskQueueEmpty those answered without a statement (a probe of the
	// last 100 ms found no open task), ProbeBatches the probes,
	// TaskClaims the asks that ran the claiming transaction.
	TaskProbes     int64 `json:"task_probes"`
	TaskQueueEmpty int64 `json:"task_queue_empty"`
	ProbeBatches   int64 `json:"probe_batches"`
	TaskClaims     int64 `json:"task_claims"`
	// LeasesRenewed, LeasesLate and LeasesLost count lease renewals, the
	// late ones (under the alarm margin) and the leases lost (each once).
	LeasesRenewed int64 `json:"leases_renewed"`
	LeasesLate    int64 `json:"leases_late"`
	LeasesLost    int64 `json:"leases_lost"`
	// MarginP1Ms and MarginMinMs are the first percentile and the minimum
	// of the time a lease had left at its renewal, over the store's last
	// minute, milliseconds; TTLMs and LateMarginMs what to read them
	// against.
	MarginP1Ms   float64 `json:"lease_margin_p1_ms"`
	MarginMinMs  float64 `json:"lease_margin_min_ms"`
	TTLMs        float64 `json:"ttl_ms"`
	LateMarginMs float64 `json:"late_margin_ms"`
}

// pgFiguresOf returns the figures of the interval from a to b, which ran
// cycles existence cycles in d.
func pgFiguresOf(a, b pgstore.Stats, cycles int64, d time.Duration) *pgFigures {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	f := &pgFigures{
		SavesFenced: b.SavesFenced - a.SavesFenced, SavesFailed: b.SavesFailed - a.SavesFailed,
		Batches: b.Batches - a.Batches, BatchMax: b.BatchMax,
		RoundTrips: b.RoundTrips - a.RoundTrips, LeaseRoundTrips: b.LeaseRoundTrips - a.LeaseRoundTrips,
		TaskProbes: b.TaskProbes - a.TaskProbes, TaskQueueEmpty: b.TaskQueueEmpty - a.TaskQueueEmpty,
		ProbeBatches: b.ProbeBatches - a.ProbeBatches, TaskClaims: b.TaskClaims - a.TaskClaims,
		LeasesRenewed: b.LeasesRenewed - a.LeasesRenewed, LeasesLate: b.LeasesLate - a.LeasesLate, LeasesLost: b.LeasesLost - a.LeasesLost,
		MarginP1Ms: ms(b.MarginP1), MarginMinMs: ms(b.MarginMin), TTLMs: ms(b.TTL), LateMarginMs: ms(b.LateMargin),
	}
	saves := b.Saves - a.Saves
	if d > 0 {
		f.SavesPerS = float64(saves) / d.Seconds()
	}
	if f.Batches > 0 {
		f.BatchMean = float64(saves+f.SavesFenced+f.SavesFailed) / float64(f.Batches)
	}
	var h [pgstore.BatchBuckets]int64
	for i := range h {
		h[i] = b.BatchSizes[i] - a.BatchSizes[i]
	}
	f.BatchP50, f.BatchP99 = pgstore.BatchQuantile(h, 0.5), pgstore.BatchQuantile(h, 0.99)
	if cycles > 0 {
		f.RoundTripsPerCycle = float64(f.RoundTrips) / float64(cycles)
	}
	return f
}

func (f *pgFigures) print(w io.Writer) {
	fmt.Fprintf(w, "postgres      %.1f saves/s in %d group commits (mean %.1f saves, p50 ≤ %d, p99 ≤ %d, max %d); %d fenced, %d failed\n",
		f.SavesPerS, f.Batches, f.BatchMean, f.BatchP50, f.BatchP99, f.BatchMax, f.SavesFenced, f.SavesFailed)
	fmt.Fprintf(w, "              %d round trips to the server (%.2f per cycle; %d on the lease connections); task asks: %d answered by %d shared probes, %d by an empty queue seen in the last 100 ms, %d claiming transactions\n",
		f.RoundTrips, f.RoundTripsPerCycle, f.LeaseRoundTrips, f.TaskProbes, f.ProbeBatches, f.TaskQueueEmpty, f.TaskClaims)
	fmt.Fprintf(w, "              leases: %d renewed, %d late (under %.0f ms left), %d lost; time left at renewal p1 %.0f ms, min %.0f ms (TTL %.0f ms)\n",
		f.LeasesRenewed, f.LeasesLate, f.LateMarginMs, f.LeasesLost, f.MarginP1Ms, f.MarginMinMs, f.TTLMs)
}

// LateRenewals passes the store's late renewals to the runner (which
// reports them as lease_late events): countingLeases wraps the store's
// lease.Manager, which hides its other methods.
func (c *countingLeases) LateRenewals() []lease.LateRenewal {
	if lr, ok := c.Manager.(lease.LateReporter); ok {
		return lr.LateRenewals()
	}
	return nil
}

var _ lease.LateReporter = (*countingLeases)(nil)
