package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/memory"
)

func main() {
	spec := flag.String("store", "", "the store (DIR, sqlite:PATH or postgres://...); default a SQLite file in a temp dir")
	n := flag.Int("n", 10000, "memories of the agent")
	dim := flag.Int("dim", 768, "dimensions of the vectors")
	recalls := flag.Int("recalls", 200, "recalls timed")
	flag.Parse()
	if err := run(*spec, *n, *dim, *recalls); err != nil {
		fmt.Fprintln(os.Stderr, "memorybench:", err)
		os.Exit(1)
	}
}

func run(spec string, n, dim, recalls int) error {
	ctx := context.Background()
	if spec == "" {
		dir, err := os.MkdirTemp("", "memorybench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		spec = "sqlite:" + filepath.Join(dir, "memories.db")
	}
	store, _, closer, err := storespec.Open(ctx, spec, storespec.Options{})
	if err != nil {
		return err
	}
	defer closer.Close()
	ms, ok := storespec.Memories(store)
	if !ok {
		return fmt.Errorf("%s holds no memories", spec)
	}
	agent := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1e9)
	fmt.Printf("machine: %s, GOMAXPROCS %d, %s\n", cpuModel(), runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Printf("store: %s; agent %s: %d memories of %d dimensions\n", spec, agent, n, dim)

	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	start := time.Now()
	for i := range n {
		v, err := memory.Normalize(randomVector(rng, dim))
		if err != nil {
			return err
		}
		at := t0.Add(-time.Duration(rng.IntN(2000)) * time.Hour)
		r := memory.Record{ID: fmt.Sprintf("m%07d", i), AgentID: agent, Text: fmt.Sprintf("Goal 'bench %d' step write_file: wrote %d.md", i, i),
			Kind: memory.KindOutcome, Importance: rng.Float64(), Created: at, LastAccess: at, Model: "nomic-embed-text", Dimensions: dim, Vector: v}
		if _, _, err := ms.AddMemory(ctx, r); err != nil {
			return err
		}
	}
	el := time.Since(start)
	fmt.Printf("insert: %d memories in %v: %.0f memories/s (store only, one at a time)\n", n, el.Round(time.Millisecond), float64(n)/el.Seconds())

	rss0, heap0 := usage()
	m, err := memory.New(memory.Config{Store: ms, NoBackfill: true, Cap: -1})
	if err != nil {
		return err
	}
	defer m.Close()
	start = time.Now()
	st, err := m.Stats(ctx, agent)
	if err != nil {
		return err
	}
	load := time.Since(start)
	rss1, heap1 := usage()
	per := 10000 / float64(max(st.Memories, 1))
	fmt.Printf("load: %d memories into the cache in %v\n", st.Memories, load.Round(time.Millisecond))
	fmt.Printf("cache: RSS +%.1f MB, Go heap +%.1f MB: %.1f MB RSS and %.1f MB heap per 10,000 memories (vectors alone: %.1f MB)\n",
		mb(rss1-rss0), mb(heap1-heap0), mb(rss1-rss0)*per, mb(heap1-heap0)*per, float64(10000*dim*4)/1e6)

	for _, c := range []struct {
		name string
		q    memory.Query
	}{
		{"weighted, no threshold (every memory scored)", memory.Query{MinRelevance: memory.NoThreshold, Peek: true}},
		{"relevance only, threshold 0.35", memory.Query{RelevanceOnly: true, Peek: true}},
	} {
		lat := make([]time.Duration, recalls)
		for i := range lat {
			q := c.q
			q.Vector, q.Space = randomVector(rng, dim), memory.Space{Model: "nomic-embed-text"}
			start := time.Now()
			if _, err := m.Recall(ctx, agent, q); err != nil {
				return err
			}
			lat[i] = time.Since(start)
		}
		slices.Sort(lat)
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		mean := sum / time.Duration(len(lat))
		fmt.Printf("recall (%s): mean %v, p50 %v, p99 %v, %.0f MB/s scanned\n", c.name, mean.Round(time.Microsecond),
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), float64(st.Embedded*dim*4)/mean.Seconds()/1e6)
	}
	_, err = ms.DeleteMemories(ctx, agent, ids(n))
	return err
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("m%07d", i)
	}
	return out
}

func randomVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// usage returns the resident set size (VmRSS of /proc/self/status, 0
// where there is none) and the live Go heap, after a garbage collection
// that returns the freed memory to the system.
func usage() (rss, heap uint64) {
	runtime.GC()
	debug.FreeOSMemory() // what the collector freed goes back to the system

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f, err := os.Open("/proc/self/status")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb * 1024
			}
		}
	}
	return rss, ms.HeapAlloc
}

func mb(b uint64) float64 { return float64(int64(b)) / 1e6 }

// cpuModel reads the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}
