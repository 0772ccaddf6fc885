package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalDataset is the small dataset memory/memeval pins its figures on.
func evalDataset(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "memory", "memeval", "testdata", "recall.jsonl"))
	require.NoError(t, err)
	return p
}

func TestMemoryEval(t *testing.T) {
	ds := evalDataset(t)
	for _, store := range []string{"memory", "file", "sqlite"} {
		code, out, errOut := runCLI(t, "memory", "eval", "-dataset", ds, "-k", "10", "-lexical-only", "-store", store, "-json")
		require.Equal(t, 0, code, errOut)
		var rep map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		assert.Equal(t, 23.0, rep["memories"], store)
		assert.Equal(t, true, rep["lexical_only"])
		all := rep["all"].(map[string]any)
		assert.Equal(t, 20.0, all["queries"])
		assert.GreaterOrEqual(t, all["recall_any@10"].(float64), 0.9, store)
		assert.Contains(t, all, "recall_all@10")
		assert.Contains(t, rep["categories"], "paraphrase")
	}

	code, out, errOut := runCLI(t, "memory", "eval", "-dataset", ds, "-embed-url", embedServer(t))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "23 memories of 2 agents (23 embedded), k 5, hybrid")
	assert.Contains(t, out, "recall_any@1")

	for _, args := range [][]string{
		{"memory", "eval"},
		{"memory", "eval", "-dataset", ds, "-agent", "scout"},
		{"memory", "eval", "-dataset", ds, "-k", "0"},
		{"memory", "eval", "-dataset", ds, "-store", "mysql://x", "-lexical-only"},
		{"memory", "eval", "-dataset", ds, "extra"},
	} {
		code, _, _ := runCLI(t, args...)
		assert.Equal(t, ExitUsage, code, "%v", args)
	}
	code, _, errOut = runCLI(t, "memory", "eval", "-dataset", filepath.Join(t.TempDir(), "missing.jsonl"), "-lexical-only")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "missing.jsonl")
}

// TestMemoryEvalRefusesBadLines: a repeated key, invalid UTF-8, an
// unknown kind and a 10 MB line are refused with the line's number, and
// nothing is stored.
func TestMemoryEvalRefusesBadLines(t *testing.T) {
	const mem = `{"kind":"memory","agent":"a","id":"m1","text":"the cat sat","time":"2023-05-08T13:56:00Z"}`
	const qry = `{"kind":"query","agent":"a","text":"where did the cat sit?","gold":["m1"]}`
	tests := []struct{ name, data, want string }{
		{"repeated key", mem + "\n" + `{"kind":"query","agent":"a","text":"x","text":"y","gold":["m1"]}`, `line 2: duplicate key "text"`},
		{"invalid UTF-8", mem + "\n" + qry + "\n" + "{\"kind\":\"query\",\"agent\":\"a\",\"text\":\"\xff\",\"gold\":[\"m1\"]}", `line 3: byte 37 is not UTF-8`},
		{"unknown kind", mem + "\n" + `{"kind":"fact","agent":"a","id":"m2"}` + "\n" + qry, `line 2: kind "fact": want "memory" or "query"`},
		{"long line", mem + "\n" + qry + "\n\n" + `{"kind":"memory","text":"` + strings.Repeat("x", 10<<20) + `"}`, `line 4: longer than 1048576 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ds.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(tc.data), 0o644))
			code, _, errOut := runCLI(t, "memory", "eval", "-dataset", p, "-lexical-only")
			assert.Equal(t, ExitError, code)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "token too long")
		})
	}
}

// Without -store, eval keeps a dataset up to 64 MiB in process and puts a
// larger one in a SQLite file, so that the process never holds a large
// dataset's memories.
func TestMemoryEvalDefaultStore(t *testing.T) {
	for _, tc := range []struct {
		size int64
		want string
	}{
		{0, "memory"},
		{64 << 20, "memory"},
		{64<<20 + 1, "sqlite"},
		{200 << 20, "sqlite"},
	} {
		assert.Equal(t, tc.want, evalDefaultStore(tc.size), "%d bytes", tc.size)
	}
}
