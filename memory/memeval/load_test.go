package memeval_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/memory/memeval"
)

const (
	mem1 = `{"kind":"memory","agent":"a","id":"m1","text":"the cat sat","time":"2023-05-08T13:56:00Z"}`
	qry1 = `{"kind":"query","agent":"a","text":"where did the cat sit?","gold":["m1"]}`
)

// TestLoadRefuses pins every refusal of a dataset line: each names the
// line, and the strict JSON rules apply (a key named twice is an error,
// never last-wins).
func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"repeated key", mem1 + "\n" + `{"kind":"query","agent":"a","text":"x","text":"y","gold":["m1"]}`, `line 2: duplicate key "text" at /text`},
		{"repeated key, escaped", `{"kind":"memory","agent":"a","id":"m1","id":"m2","text":"t","time":"2023-05-08T13:56:00Z"}` + "\n" + qry1, `line 1: duplicate key "id"`},
		{"unknown key", mem1 + "\n" + `{"kind":"query","agent":"a","text":"x","gold":["m1"],"gloss":1}`, `line 2: `},
		{"invalid UTF-8", mem1 + "\n\n" + "{\"kind\":\"query\",\"agent\":\"a\",\"text\":\"caf\xe9\",\"gold\":[\"m1\"]}", `line 3: byte 40 is not UTF-8`},
		{"unknown kind", `{"kind":"note","agent":"a","text":"x"}` + "\n" + qry1, `line 1: kind "note": want "memory" or "query"`},
		{"unknown kind, no text", `{"kind":"memroy","agent":"a","id":"m1"}`, `line 1: kind "memroy": want "memory" or "query"`},
		{"no kind", `{"agent":"a","text":"x"}`, `line 1: no "kind": want "memory" or "query"`},
		{"query with an id", mem1 + "\n" + `{"kind":"query","agent":"a","id":"q","text":"x","gold":["m1"]}`, `line 2: a query takes no "id", "time" or "importance"`},
		{"memory with gold", `{"kind":"memory","agent":"a","id":"m1","text":"t","time":"2023-05-08T13:56:00Z","gold":["m1"]}`, `line 1: a memory takes no "gold" or "category"`},
		{"given twice", mem1 + "\n" + mem1, `line 2: memory m1 of a is given twice`},
		{"bad time", `{"kind":"memory","agent":"a","id":"m1","text":"t","time":"yesterday"}`, `line 1: time "yesterday" is not RFC 3339`},
		{"importance", `{"kind":"memory","agent":"a","id":"m1","text":"t","time":"2023-05-08T13:56:00Z","importance":2}`, `line 1: importance 2 is outside 0–1`},
		{"no gold", mem1 + "\n" + `{"kind":"query","agent":"a","text":"x"}`, `line 2: a query needs gold memory ids`},
		{"gold unknown", qry1 + "\n" + `{"kind":"memory","agent":"a","id":"m2","text":"t","time":"2023-05-08T13:56:00Z"}`, `line 1: gold "m1" is no memory of a`},
		{"bad JSON", mem1 + "\n" + `{"kind":`, `line 2: `},
		{"no queries", mem1, `the dataset has no queries`},
		{"long line", mem1 + "\n" + qry1 + "\n" + `{"kind":"memory","text":"` + strings.Repeat("x", 10<<20) + `"}` + "\n", `line 3: longer than 1048576 bytes: not a dataset line`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := memeval.Load(strings.NewReader(tc.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "bufio.Scanner")
		})
	}
	// Blank lines, CRLF line ends and a last line without a break are fine.
	ds, err := memeval.Load(strings.NewReader("\n" + mem1 + "\r\n\n" + qry1))
	require.NoError(t, err)
	require.Len(t, ds.Memories, 1)
	require.Len(t, ds.Queries, 1)
	assert.Equal(t, 4, ds.Queries[0].Line)
}

// TestRunFromStoresNothingOnError: a bad line far down the file stops
// RunFrom before any memory is stored.
func TestRunFromStoresNothingOnError(t *testing.T) {
	data := mem1 + "\n" + qry1 + "\n" + `{"kind":"query","agent":"a","text":"x","gold":["m1"],"gold":["m1"]}` + "\n"
	store := memory.NewMemoryStore()
	_, err := memeval.RunFrom(context.Background(), strings.NewReader(data), memeval.Options{Store: store})
	require.ErrorContains(t, err, `line 3: duplicate key "gold"`)
	c, err := store.CountMemories(context.Background(), "a")
	require.NoError(t, err)
	assert.Zero(t, c.Memories)
}

// TestRunFromMatchesRun: reading the dataset twice gives Run's figures.
func TestRunFromMatchesRun(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "recall.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	got, err := memeval.RunFrom(context.Background(), f, memeval.Options{Store: memory.NewMemoryStore(), K: 10})
	require.NoError(t, err)
	want, err := memeval.Run(context.Background(), load(t), memeval.Options{Store: memory.NewMemoryStore(), K: 10})
	require.NoError(t, err)
	assert.Equal(t, 23, got.Memories)
	assert.Equal(t, figures(want.All), figures(got.All))
	assert.Equal(t, figures(want.Categories["paraphrase"]), figures(got.Categories["paraphrase"]))
}

// generated is an io.Reader of a dataset of n lines, made as it is read:
// nine memories (of 9 agents, 100-character texts) to one query of
// three gold ids.
type generated struct {
	n, i int
	buf  bytes.Buffer
}

func (g *generated) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i < g.n {
		g.i++
		agent := fmt.Sprintf("agent-%d", g.i%10)
		if g.i%10 == 0 {
			fmt.Fprintf(&g.buf, `{"kind":"query","agent":"agent-1","text":"what happened on day %d of the long voyage?","gold":["m1","m%d","m%d"],"category":"c%d"}`+"\n",
				g.i, g.i-9, max(1, g.i-19), g.i%7)
			continue
		}
		fmt.Fprintf(&g.buf, `{"kind":"memory","agent":"%s","id":"m%d","text":"%s %08d","time":"2023-05-08T13:56:00Z","importance":0.5}`+"\n",
			agent, g.i, strings.Repeat("w", 91), g.i)
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// TestScanMemoryBounded scans a million lines (about 160 MB) and checks
// the heap never passes 300 MB: memories are not held, queries compactly.
func TestScanMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million lines: not under -short")
	}
	const lines = 1_000_000
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak, seen := uint64(0), 0
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
	}
	ds, err := memeval.Scan(&generated{n: lines}, func(memeval.Memory) error {
		if seen++; seen%50_000 == 0 {
			sample()
		}
		return nil
	})
	require.NoError(t, err)
	sample()
	assert.Equal(t, 900_000, seen)
	assert.Len(t, ds.Queries, 100_000)
	t.Logf("a million lines: heap peak about %d MB above the start", peak>>20)
	assert.Less(t, peak, uint64(300<<20), "heap grew by %d MB", peak>>20)
}
