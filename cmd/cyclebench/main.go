package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// canned is the harness's CANNED reply.
const canned = `{"action": "goal",
  "content": "Read design/index.md and write a one-page map of what exists, with paths",
  "reasoning": "Cipher said my last map was wrong; I want to see for myself",
  "worldview_update": "The workspace is the only shared memory we have; what is not written down is gone.",
  "new_open_questions": ["Does anyone read analyst/review.md?"],
  "new_opinions": [{"opinion": "A map with paths beats a summary without them", "domain": "method"}],
  "suffering_assessment": {"new_stressors": [{"type": "invisibility", "description": "no one cites my notes", "condition": "a peer cites a note of mine"}], "resolved": []}}`

func main() {
	harness := flag.String("harness", "/work/shared/bench/hollow-original/harness.py", "the original's harness.py")
	data := flag.String("data", "/work/shared/data/hollow-memory", "hollow-agentOS memory snapshot")
	agent := flag.String("agent", "scout", "agent id")
	rounds := flag.Int("rounds", 5, "rounds, alternating the two implementations")
	n := flag.Int("n", 40, "cycles per round and implementation")
	base := flag.String("base", os.TempDir(), "parent of the temp state directories")
	reload := flag.Bool("reload", false, "also time the Go cycle that re-opens the agent from the store each time")
	stores := flag.String("stores", "file,sqlite", "comma-separated stores of the Go side: file, sqlite")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cyclebench: -cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	kinds := strings.Split(*stores, ",")
	for _, k := range kinds {
		if k != "file" && k != "sqlite" {
			fmt.Fprintf(os.Stderr, "cyclebench: -stores: unknown store %q (want file or sqlite)\n", k)
			os.Exit(2)
		}
	}
	if err := run(*harness, *data, *agent, *base, kinds, *rounds, *n, *reload); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "cyclebench:", err)
		os.Exit(1)
	}
}

func run(harness, data, agent, base string, kinds []string, rounds, n int, reload bool) error {
	ctx := context.Background()
	states, _, err := hollow.Read(data, hollow.Options{})
	if err != nil {
		return err
	}
	var st *identity.AgentState
	for _, s := range states {
		if s.Identity.AgentID == agent {
			st = s
		}
	}
	if st == nil {
		return fmt.Errorf("agent %q not in %s", agent, data)
	}
	var pyTimes []time.Duration
	goTimes := map[string][]time.Duration{}
	goReload := map[string][]time.Duration{}
	// roundRatio[k] holds each round's Go/original ratio of medians: the
	// two sides of one round ran back to back, under the same load.
	roundRatio := map[string][]float64{}
	for r := range rounds {
		py, err := python(harness, data, agent, base, n)
		if err != nil {
			return err
		}
		pyTimes = append(pyTimes, py)
		line := fmt.Sprintf("round %d: python median %v", r+1, py)
		for _, k := range kinds {
			g, err := goCycles(ctx, k, st, base, n, false)
			if err != nil {
				return err
			}
			goTimes[k] = append(goTimes[k], g...)
			roundRatio[k] = append(roundRatio[k], float64(median(g))/float64(py))
			line += fmt.Sprintf(", go/%s median %v", k, median(g))
			if reload {
				g, err := goCycles(ctx, k, st, base, n, true)
				if err != nil {
					return err
				}
				goReload[k] = append(goReload[k], g...)
			}
		}
		fmt.Fprintln(os.Stderr, line)
	}
	pm := median(pyTimes)
	fmt.Printf("agent %s (document %d bytes compact), %d rounds × %d cycles, state under %s, fsync on (Go) / off (original)\n",
		agent, docSize(st), rounds, n, base)
	fmt.Printf("original steady cycle: median %v\n", pm)
	for _, k := range kinds {
		gm := median(goTimes[k])
		fmt.Printf("Go steady cycle (Tick+goal end, %s store): median %v, p90 %v; ratio Go/original %.3f (%.1f× faster)\n",
			k, gm, pct(goTimes[k], 0.9), float64(gm)/float64(pm), float64(pm)/float64(gm))
		rr := slices.Clone(roundRatio[k])
		slices.Sort(rr)
		fmt.Printf("  per-round ratios Go/original (%s store): median %.3f (%.1f× faster), worst %.3f (%.1f×)\n",
			k, rr[(len(rr)-1)/2], 1/rr[(len(rr)-1)/2], rr[len(rr)-1], 1/rr[len(rr)-1])
		if reload {
			rm := median(goReload[k])
			fmt.Printf("Go cycle with reload (New+Tick+goal end+Close, %s store): median %v, ratio %.3f (%.1f× faster)\n",
				k, rm, float64(rm)/float64(pm), float64(pm)/float64(rm))
		}
	}
	return nil
}

func docSize(st *identity.AgentState) int {
	b, _ := json.Marshal(st)
	return len(b)
}

// python runs n steady cycles of the original on the snapshot data and
// returns its median.
func python(harness, data, agent, base string, n int) (time.Duration, error) {
	cmd := exec.Command("python3", harness, "--mode", "steady", "--n", fmt.Sprint(n), "--agent", agent, "--base", base, "--json", "--quiet")
	cmd.Env = append(os.Environ(), "HOLLOW_SNAPSHOT="+data) // the same state on both sides
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("harness: %w", err)
	}
	var res struct {
		Cycle struct {
			Median float64 `json:"median_us"`
		} `json:"cycle"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, fmt.Errorf("harness output %q: %w", out, err)
	}
	return time.Duration(res.Cycle.Median * float64(time.Microsecond)), nil
}

// openStore opens a store of kind ("file" or "sqlite") in dir and returns
// it with its closer.
func openStore(ctx context.Context, kind, dir string) (identity.Store, func() error, error) {
	if kind == "sqlite" {
		s, err := sqlitestore.Open(ctx, filepath.Join(dir, "state.db"), sqlitestore.Options{})
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
	s, err := filestore.Open(filepath.Join(dir, "state"), filestore.Options{})
	return s, func() error { return nil }, err
}

// goCycles runs n durable cycles of the agent against a store of kind
// (see openStore) in a fresh temp directory and returns each cycle's time.
func goCycles(ctx context.Context, kind string, st *identity.AgentState, base string, n int, reload bool) (_ []time.Duration, err error) {
	dir, err := os.MkdirTemp(base, "go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, closeStore, err := openStore(ctx, kind, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := closeStore(); err == nil {
			err = cerr
		}
	}()
	if err := store.Save(ctx, st); err != nil {
		return nil, err
	}
	fake := llmtest.NewFake(llmtest.Reply{Text: canned})
	fake.Repeat = true
	cfg := existence.Config{ID: st.Identity.AgentID, Name: st.Identity.Name, Model: fake, Store: store, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}}
	open := func() (*existence.Agent, error) { return existence.New(ctx, cfg) }
	a, err := open()
	if err != nil {
		return nil, err
	}
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if reload {
			if err := a.Close(); err != nil {
				return nil, err
			}
			if a, err = open(); err != nil {
				return nil, err
			}
		}
		if err := a.Tick(ctx); err != nil {
			return nil, err
		}
		if err := a.WaitGoal(ctx); err != nil {
			return nil, err
		}
		times = append(times, time.Since(start))
	}
	return times, a.Close()
}

func median(d []time.Duration) time.Duration { return pct(d, 0.5) }

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}
