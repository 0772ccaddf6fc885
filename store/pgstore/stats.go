package pgstore

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Stats counts the work of a [Store] since [Open]: what the group commit
// gathered, how often the server was asked, and how close the lease
// renewals came to their leases' expiry. Get it with [Store.Stats]; the
// counters only grow, so the figures of an interval are the difference of
// two Stats.
type Stats struct {
	// Saves is the number of saves written (committed); SavesFenced the
	// saves refused by the fence ([ErrFenced]), SavesFailed those that
	// failed otherwise (a corrupt stored state, a database error).
	Saves, SavesFenced, SavesFailed int64
	// Batches is the number of group commits: statements, each its own
	// transaction, that carried saves. Saves+SavesFenced+SavesFailed over
	// Batches is the mean batch size.
	Batches int64
	// BatchSizes is the histogram of the group commits' sizes, in saves:
	// BatchSizes[0] counts the batches of 1 save, [1] of 2, [2] of 3–4,
	// [3] of 5–8, and [i] of 2^(i-1)+1 to 2^i; the last bucket also holds
	// everything larger. [BatchQuantile] reads a quantile from it.
	BatchSizes [BatchBuckets]int64
	// BatchMax is the largest group commit, in saves.
	BatchMax int64

	// TaskProbes counts the task queue's [Queue.Next] calls answered by a
	// shared probe (one statement for many agents, see [Queue.Next]);
	// TaskQueueEmpty those answered without a statement, by a probe of
	// the last 100 ms that found no open task at all; ProbeBatches the
	// probe statements; TaskClaims the Next calls that ran the full
	// claiming transaction (a task to hand over, or a fence to report).
	TaskProbes, TaskQueueEmpty, ProbeBatches, TaskClaims int64

	// RoundTrips counts the statements sent to the server (each one round
	// trip: a query, an Exec, a BEGIN or COMMIT, a statement prepared),
	// by every connection of the Store; LeaseRoundTrips are those of them
	// sent on the lease connections (claims and renewals).
	RoundTrips, LeaseRoundTrips int64

	// LeasesClaimed counts the leases taken by [Store.Claim] and
	// [Store.Lock]; LeasesRenewed the lease renewals that succeeded (one
	// per lease per renewal round); LeasesLost the leases found lost
	// (each counted once); LeasesLate the renewals that found less than
	// Options.LateMargin of their lease's TTL left (see [Store.Renew]),
	// including the leases that a failed renewal left under it.
	// RenewRounds counts the renewal statements (512 leases at most
	// each).
	LeasesClaimed, LeasesRenewed, LeasesLost, LeasesLate, RenewRounds int64

	// MarginP1 and MarginMin are the first percentile and the minimum of
	// the time left on a lease when its renewal took effect, over the
	// renewals of the last MarginWindow (4 TTLs, 60 s by default): the
	// TTL minus the time since the lease was last claimed or renewed, by
	// this process's clock, measured when the server's answer arrived.
	// A healthy holder renewing every TTL/3 keeps it near 2/3 of the
	// TTL; under Options.LateMargin is late. MarginSamples is the number
	// of renewals in the window (0: none, and both are 0). MarginP1 is
	// read from a histogram of TTL/200 buckets, rounded down.
	MarginP1, MarginMin time.Duration
	MarginSamples       int64
	MarginWindow        time.Duration

	// TTL and LateMargin are the Store's Options.TTL and
	// Options.LateMargin, to read the margins against.
	TTL, LateMargin time.Duration
}

// BatchBuckets is the number of buckets of [Stats].BatchSizes: the last
// one counts batches of 4097 saves or more.
const BatchBuckets = 14

// batchBucket returns the BatchSizes bucket of a batch of n saves.
func batchBucket(n int) int {
	if n <= 1 {
		return 0
	}
	return min(bits.Len(uint(n-1)), BatchBuckets-1)
}

// BatchQuantile returns the q-quantile (0–1) of the batch sizes counted in
// h (a [Stats].BatchSizes, or the difference of two), as the upper bound of
// its bucket (1, 2, 4, 8, …); 0 when h is empty.
func BatchQuantile(h [BatchBuckets]int64, q float64) int {
	var total int64
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := int64(q * float64(total-1))
	var seen int64
	for i, c := range h {
		seen += c
		if seen > rank {
			return 1 << i
		}
	}
	return 1 << (BatchBuckets - 1)
}

// counters are a Store's atomic counters.
type counters struct {
	saves, savesFenced, savesFailed, batches, batchMax   atomic.Int64
	batchSizes                                           [BatchBuckets]atomic.Int64
	taskProbes, taskQueueEmpty, probeBatches, taskClaims atomic.Int64
	roundTrips, leaseRoundTrips                          atomic.Int64
	claimed, renewed, lost, late, renewRounds            atomic.Int64
}

func (c *counters) batch(n int) {
	c.batches.Add(1)
	c.batchSizes[batchBucket(n)].Add(1)
	for {
		m := c.batchMax.Load()
		if int64(n) <= m || c.batchMax.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// Stats returns the Store's counters and the lease margins of the last
// MarginWindow.
func (s *Store) Stats() Stats {
	c := &s.count
	st := Stats{
		Saves: c.saves.Load(), SavesFenced: c.savesFenced.Load(), SavesFailed: c.savesFailed.Load(),
		Batches: c.batches.Load(), BatchMax: c.batchMax.Load(),
		TaskProbes: c.taskProbes.Load(), TaskQueueEmpty: c.taskQueueEmpty.Load(), ProbeBatches: c.probeBatches.Load(), TaskClaims: c.taskClaims.Load(),
		RoundTrips: c.roundTrips.Load(), LeaseRoundTrips: c.leaseRoundTrips.Load(),
		LeasesClaimed: c.claimed.Load(), LeasesRenewed: c.renewed.Load(), LeasesLost: c.lost.Load(),
		LeasesLate: c.late.Load(), RenewRounds: c.renewRounds.Load(),
		TTL: s.opts.TTL, LateMargin: s.opts.LateMargin,
	}
	for i := range st.BatchSizes {
		st.BatchSizes[i] = c.batchSizes[i].Load()
	}
	st.MarginP1, st.MarginMin, st.MarginSamples = s.margins.quantile(s.opts.Now(), 0.01)
	st.MarginWindow = s.margins.window
	return st
}

// tracer counts the statements a pool sends (pgx calls it for every
// Query, QueryRow, Exec and Prepare, BEGIN and COMMIT included).
type tracer struct {
	n    *atomic.Int64
	also *atomic.Int64 // a second counter (the lease pool's), or nil
}

func (t tracer) count() {
	t.n.Add(1)
	if t.also != nil {
		t.also.Add(1)
	}
}

func (t tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.count()
	return ctx
}

func (t tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t tracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	t.count()
	return ctx
}

func (t tracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

var (
	_ pgx.QueryTracer   = tracer{}
	_ pgx.PrepareTracer = tracer{}
)

// marginBuckets is the resolution of the margin histogram: TTL/200.
const marginBuckets = 200

// marginSlots is the number of time slots the margin window is made of.
const marginSlots = 6

// marginWindow keeps the lease margins measured at renewal over a sliding
// window of time, as a histogram per slot of window/marginSlots.
type marginWindow struct {
	ttl    time.Duration
	window time.Duration

	mu    sync.Mutex
	slots [marginSlots]marginSlot
}

type marginSlot struct {
	start  time.Time // when the slot's period began; zero: empty
	counts [marginBuckets + 1]int64
	min    time.Duration
	n      int64
}

func newMarginWindow(ttl time.Duration) *marginWindow {
	return &marginWindow{ttl: ttl, window: 4 * ttl}
}

func (w *marginWindow) slotLen() time.Duration { return w.window / marginSlots }

// add records the margins left, measured at now.
func (w *marginWindow) add(now time.Time, left ...time.Duration) {
	if len(left) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	start := now.Truncate(w.slotLen())
	sl := &w.slots[int(start.UnixNano()/int64(w.slotLen()))%marginSlots]
	if !sl.start.Equal(start) {
		*sl = marginSlot{start: start}
	}
	for _, d := range left {
		b := 0
		if d > 0 {
			b = min(int(d*marginBuckets/w.ttl), marginBuckets)
		}
		sl.counts[b]++
		if sl.n == 0 || d < sl.min {
			sl.min = d
		}
		sl.n++
	}
}

// quantile returns the q-quantile (rounded down to its bucket) and the
// minimum of the margins of the window ending at now, and their number.
func (w *marginWindow) quantile(now time.Time, q float64) (p, least time.Duration, n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var counts [marginBuckets + 1]int64
	from := now.Add(-w.window)
	for i := range w.slots {
		sl := &w.slots[i]
		if sl.n == 0 || !sl.start.Add(w.slotLen()).After(from) {
			continue
		}
		for b, c := range sl.counts {
			counts[b] += c
		}
		if n == 0 || sl.min < least {
			least = sl.min
		}
		n += sl.n
	}
	if n == 0 {
		return 0, 0, 0
	}
	rank := int64(q * float64(n-1))
	var seen int64
	for b, c := range counts {
		seen += c
		if seen > rank {
			p = time.Duration(b) * w.ttl / marginBuckets
			if b == 0 {
				p = least // the bucket of margins near zero, and below it
			}
			break
		}
	}
	return max(p, least), least, n
}
