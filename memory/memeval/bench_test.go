package memeval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/existence-loop/sdk/memory/memeval"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// benchDataset returns a dataset of n memories over agents agents, each
// of 8–19 words drawn from a vocabulary of 20,000, and one query per
// 1,000 memories whose gold is a memory it shares four words with; the
// same every time (a fixed seed).
func benchDataset(n, agents int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 20000)
	for i := range words {
		b := make([]byte, 3+r.IntN(6))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	t0 := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	var queries []map[string]any
	for i := range n {
		ws := make([]string, 8+r.IntN(12))
		for j := range ws {
			ws[j] = words[r.IntN(len(words))]
		}
		agent := fmt.Sprintf("a%d", i%agents)
		id := fmt.Sprintf("m%d", i)
		_ = enc.Encode(map[string]any{"kind": "memory", "agent": agent, "id": id,
			"text": fmt.Sprintf("%s (note %d)", strings.Join(ws, " "), i), "time": t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339)})
		if i%1000 == 0 {
			queries = append(queries, map[string]any{"kind": "query", "agent": agent, "text": strings.Join(ws[:4], " "), "gold": []string{id}})
		}
	}
	for _, q := range queries {
		_ = enc.Encode(q)
	}
	return buf.Bytes()
}

// BenchmarkRunFromSQLite stores 20,000 memories of 20 agents into a
// fresh SQLite file and recalls by words, one memory a write (batch 1)
// and a thousand (batch 1000); memories/s is the whole run's rate. For
// the 1e6-line figures of docs/performance.md, run `existence memory
// eval` on a generated file under /usr/bin/time -v.
//
//	go test -run '^$' -bench RunFromSQLite -benchtime 1x ./memory/memeval
func BenchmarkRunFromSQLite(b *testing.B) {
	const n = 20000
	data := benchDataset(n, 20)
	for _, batch := range []int{1, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("eval%d.db", i)), sqlitestore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := memeval.RunFrom(ctx, bytes.NewReader(data), memeval.Options{Store: s, BatchSize: batch}); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}
