package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// BenchmarkSave measures fenced saves of a mid-life agent state (a few KiB
// of JSON) against a real server: 100 agents leased by one Store, saved
// from parallel goroutines (GOMAXPROCS × -cpu). saves/s is the figure the
// README quotes.
func BenchmarkSave(b *testing.B) {
	ctx := context.Background()
	url := pgtest.New(b)
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "bench", TTL: time.Hour, MaxConns: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 100
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("agent-%03d", i))
	}
	if err := s.Enroll(ctx, ids...); err != nil {
		b.Fatal(err)
	}
	if ls, err := s.Claim(ctx, n); err != nil || len(ls) != n {
		b.Fatalf("claimed %d, %v", len(ls), err)
	}
	base := benchState()
	var next atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			st := base.Clone()
			st.Identity.AgentID = ids[next.Add(1)%n]
			st.UpdatedAt = time.Now()
			if err := s.Save(ctx, st); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "saves/s")
}

// BenchmarkGroupCommit compares single saves (MaxBatch 1: a statement and
// a transaction each, from as many connections as the pool has) with group
// commit (the defaults), through the storetest harness: see
// [storetest.BenchmarkGroupCommit]. The saves are unleased (fenced by
// "nobody holds a live lease"), as a single process without leases
// writes; the server's CPU is not in cpu-µs/save.
func BenchmarkGroupCommit(b *testing.B) {
	storetest.BenchmarkGroupCommit(b, storetest.GroupCommitBench{
		Open: func(b *testing.B, group bool) identity.Store {
			opts := pgstore.Options{Owner: "bench", MaxBatch: 1, MaxConns: 16}
			if group {
				opts.MaxBatch = 0
			}
			s, err := pgstore.Open(context.Background(), pgtest.New(b), opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(s.Close)
			return s
		},
		Commits: func(s identity.Store) int64 { return s.(*pgstore.Store).Stats().Batches },
	})
}

func benchState() *identity.AgentState {
	l := identity.DefaultLimits()
	st := state("agent-000", "")
	id := &st.Identity
	id.SetWorldview("Everything I know I wrote down; everything else is gone by the next cycle.", l)
	for i := range 20 {
		id.AddOpinion(identity.Opinion{Text: fmt.Sprintf("opinion number %d about the state of the workspace", i), Domain: "workspace", Formed: t0}, l)
		id.AddQuestion(fmt.Sprintf("open question %d: who reads what we write?", i), l)
	}
	for i := range 30 {
		_ = id.StartGoal(identity.Goal{ID: fmt.Sprint(i), Objective: fmt.Sprintf("goal %d: map the workspace and write it down", i), Started: t0}, l)
		_, _ = id.EndGoal(identity.Done, "wrote scout/map.md", t0.Add(time.Minute), l)
	}
	return st
}
