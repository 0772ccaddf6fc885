package storetest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// GroupCommitBench is what [BenchmarkGroupCommit] needs of a store.
type GroupCommitBench struct {
	// Open returns a new, empty store (closed by its own b.Cleanup):
	// with group false, one that writes every save in its own
	// transaction (store/sqlitestore and store/pgstore: MaxBatch 1);
	// with group true, one with group commit (their defaults).
	Open func(b *testing.B, group bool) identity.Store
	// Commits returns the transactions s has committed for saves so far
	// (sqlitestore's Stats().Commits, pgstore's Stats().Batches), to
	// report saves per commit; nil leaves that figure out.
	Commits func(s identity.Store) int64
}

// BenchmarkGroupCommit compares single saves with group commit on one
// store: sub-benchmarks "single" and "group" open it each way and, every
// iteration, save a cycle's change of every agent at once, one goroutine
// per agent (the burst of a heartbeat on which every agent saves). Each
// reports saves/s, the latency quantiles of the saves (p50-ms, p99-ms), the
// client's CPU time per save (cpu-µs/save: this process only, a database
// server's CPU not included) and, with Commits, saves/commit.
//
// The number of agents is $STORETEST_BENCH_AGENTS, default 256:
//
//	STORETEST_BENCH_AGENTS=2000 go test -run '^$' -bench GroupCommit -benchtime 5x ./store/pgstore/ ./store/sqlitestore/
func BenchmarkGroupCommit(b *testing.B, h GroupCommitBench) {
	n := 256
	if v := os.Getenv("STORETEST_BENCH_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("STORETEST_BENCH_AGENTS=%q: want a positive integer", v)
		}
	}
	for _, mode := range []struct {
		name  string
		group bool
	}{{"single", false}, {"group", true}} {
		b.Run(mode.name, func(b *testing.B) { benchSaves(b, h, mode.group, n) })
	}
}

// benchSaves runs one sub-benchmark of BenchmarkGroupCommit.
func benchSaves(b *testing.B, h GroupCommitBench, group bool, n int) {
	ctx := context.Background()
	s := h.Open(b, group)
	agents := make([]*identity.AgentState, n)
	for i := range agents {
		agents[i] = FullState(fmt.Sprintf("agent-%05d", i))
	}
	burst := func(lat []time.Duration) {
		var wg sync.WaitGroup
		for i, st := range agents {
			wg.Go(func() {
				t := time.Now()
				cycle(st, t)
				if err := s.Save(ctx, st); err != nil {
					b.Error(err)
					return
				}
				if lat != nil {
					lat[i] = time.Since(t)
				}
			})
		}
		wg.Wait()
	}
	burst(nil) // every agent stored once: the timed saves replace states
	var commits0 int64
	if h.Commits != nil {
		commits0 = h.Commits(s)
	}
	lat := make([]time.Duration, 0, n*b.N)
	round := make([]time.Duration, n)
	b.ResetTimer()
	start := time.Now()
	cpu0, cpuOK := cpuTime()
	for range b.N {
		burst(round)
		lat = append(lat, round...)
	}
	el := time.Since(start)
	cpu1, _ := cpuTime()
	b.StopTimer()
	saves := float64(n * b.N)
	b.ReportMetric(saves/el.Seconds(), "saves/s")
	b.ReportMetric(quantile(lat, 0.5), "p50-ms")
	b.ReportMetric(quantile(lat, 0.99), "p99-ms")
	if cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/saves, "cpu-µs/save")
	}
	if h.Commits != nil {
		b.ReportMetric(saves/float64(max(h.Commits(s)-commits0, 1)), "saves/commit")
	}
}

// cycle changes st as one existence cycle does: the active goal ends, a
// new one starts (20 kept), the narrative and a stressor change.
func cycle(st *identity.AgentState, now time.Time) {
	id := &st.Identity
	if g := id.ActiveGoal(); g != nil {
		g.Status, g.Ended, g.Outcome = identity.Done, now, "wrote it down"
	}
	n := len(id.Goals)
	id.Goals = append(id.Goals, identity.Goal{ID: fmt.Sprintf("c%d", now.UnixNano()), Objective: fmt.Sprintf("map directory %d", n), Status: identity.Active, Started: now})
	if len(id.Goals) > 20 {
		id.Goals = slices.Delete(id.Goals, 0, len(id.Goals)-20)
	}
	id.Narrative = fmt.Sprintf("[cycle at %s] Completed: map a directory.", now.Format(time.RFC3339Nano))
	if len(st.Suffering.Active) > 0 {
		st.Suffering.Active[0].Severity = float64(now.UnixNano()%90) / 100
	}
	st.UpdatedAt = now
}

// quantile returns the q-quantile of d in milliseconds (d is sorted).
func quantile(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
}
