package memory_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/memory"
)

// t0 is the tests' start time.
var t0 = time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)

// events collects a Memory's events and lets a test wait for one kind.
type events struct {
	mu  sync.Mutex
	all []memory.Event
	ch  chan memory.Event
}

func newEvents() *events { return &events{ch: make(chan memory.Event, 1<<14)} }

func (e *events) on(ev memory.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	e.ch <- ev
}

// kind returns the events of kind k so far.
func (e *events) kind(k memory.EventKind) []memory.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []memory.Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// wait returns the next event of kind k, failing after 10 s (a
// watchdog, not a timing assumption).
func (e *events) wait(t *testing.T, k memory.EventKind) memory.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if ev.Kind == k {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event within 10 s", k)
		}
	}
}

// newMemory returns a Memory over a fresh MemoryStore with cfg's other
// fields, its clock and its events.
func newMemory(t *testing.T, cfg memory.Config) (*memory.Memory, *existencetest.Clock, *events) {
	t.Helper()
	c := existencetest.NewClock(t0)
	ev := newEvents()
	if cfg.Store == nil {
		cfg.Store = memory.NewMemoryStore()
	}
	if cfg.Clock == nil {
		cfg.Clock = c
	}
	cfg.OnEvent = ev.on
	m, err := memory.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m, c, ev
}

// randomUnit returns n random unit vectors of dim dimensions.
func randomUnit(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		u, err := memory.Normalize(v)
		if err != nil {
			panic(err)
		}
		out[i] = u
	}
	return out
}

// cosine is the exact cosine of a and b, in float64.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// bruteForce ranks vecs by exact cosine with q, highest first, ties by
// index (the original's stable sort), keeping those at or above threshold, at
// most k.
func bruteForce(vecs [][]float32, q []float32, threshold float64, k int) []int {
	type hit struct {
		i int
		s float64
	}
	var hits []hit
	for i, v := range vecs {
		if s := cosine(v, q); s >= threshold {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	var out []int
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.i)
	}
	return out
}
