package hollow_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/memstore"
)

// source is the scout sample's semantic memory read straight from its
// files, independently of the importer: metadata lines, index.json and
// the raw (not normalised) rows of embeddings.npy.
type source struct {
	lines []sourceLine
	index map[string]int
	rows  [][]float64
}

type sourceLine struct {
	ID      string  `json:"memory_id"`
	Thought string  `json:"thought"`
	TS      float64 `json:"timestamp"`
	Count   int     `json:"access_count"`
	Last    float64 `json:"last_accessed"`
}

func readSource(t *testing.T, dir string) source {
	t.Helper()
	var s source
	// The sample keeps metadata.jsonl gzipped (2 MB as text), as an
	// archived memory directory may.
	f, err := os.Open(filepath.Join(dir, "metadata.jsonl.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l sourceLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		s.lines = append(s.lines, l)
	}
	require.NoError(t, sc.Err())
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &s.index))
	npy, err := os.ReadFile(filepath.Join(dir, "embeddings.npy"))
	require.NoError(t, err)
	// A version 1 header of '<f4', C order, shape (N, D), as numpy.save
	// writes it.
	hlen := int(binary.LittleEndian.Uint16(npy[8:10]))
	header := string(npy[10 : 10+hlen])
	require.Contains(t, header, "'descr': '<f4'")
	require.Contains(t, header, "'fortran_order': False")
	var n, d int
	_, err = fmt.Sscanf(header[strings.Index(header, "'shape': (")+len("'shape': ("):], "%d, %d)", &n, &d)
	require.NoError(t, err)
	body := npy[10+hlen:]
	require.Len(t, body, n*d*4)
	for i := range n {
		row := make([]float64, d)
		for j := range d {
			row[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(body[4*(i*d+j):])))
		}
		s.rows = append(s.rows, row)
	}
	return s
}

const scoutSemantic = sample + "/semantic/scout"

// TestScoutMemoryCountsMatchTheSource: every line of the real sample is
// accounted for: imported, merged into an earlier line with the same text,
// deleted or skipped; the vectors are those index.json names.
func TestScoutMemoryCountsMatchTheSource(t *testing.T) {
	src := readSource(t, scoutSemantic)
	agents, _, err := hollow.ReadMemories(sample, hollow.Options{})
	require.NoError(t, err)
	require.Len(t, agents, 1)
	am := agents[0]
	sum := am.Summary
	assert.Equal(t, "scout", am.AgentID)

	distinct, deleted, embedded := map[string]bool{}, 0, map[string]bool{}
	for _, l := range src.lines {
		if l.Thought == "[DELETED]" {
			deleted++
			continue
		}
		distinct[l.Thought] = true
		if _, ok := src.index[l.ID]; ok {
			embedded[l.Thought] = true
		}
	}
	assert.Equal(t, len(src.lines), sum.Lines, "every line read")
	assert.Equal(t, len(src.rows), sum.Rows)
	assert.Equal(t, len(src.index), sum.Indexed)
	assert.Equal(t, deleted, sum.Deleted)
	assert.Zero(t, sum.Skipped, "the sample has no unusable line")
	assert.Equal(t, len(distinct), sum.Imported, "one memory per distinct text")
	assert.Equal(t, len(src.lines)-deleted-len(distinct), sum.Repeated)
	assert.Equal(t, sum.Lines, sum.Imported+sum.Repeated+sum.Deleted+sum.Skipped, "every line accounted for")
	assert.Equal(t, len(embedded), sum.Embedded, "a text has a vector when one of its lines is indexed")
	assert.Equal(t, sum.Imported-sum.Embedded, sum.Pending)
	assert.Len(t, am.Records, sum.Imported)
	assert.Equal(t, memory.Space{Model: "nomic-embed-text", Dimensions: 768}, sum.Space)

	// Each id carries its own text, timestamps and access count: the
	// first line of each text.
	first := map[string]sourceLine{}
	repeats := map[string]int{}
	for _, l := range src.lines {
		if _, ok := first[l.Thought]; ok {
			repeats[l.Thought]++
			continue
		}
		first[l.Thought] = l
	}
	for _, r := range am.Records {
		l := first[r.Text]
		require.Equal(t, l.ID, r.ID, "memory %s carries the text of its own line", r.ID)
		assert.Equal(t, memory.KindImported, r.Kind)
		assert.Equal(t, time.UnixMicro(int64(math.Round(l.TS*1e6))).UTC(), r.Created, "the timestamp is kept")
		if repeats[r.Text] == 0 {
			assert.Equal(t, l.Count, r.AccessCount, "the access count is kept")
			assert.Equal(t, time.UnixMicro(int64(math.Round(l.Last*1e6))).UTC(), r.LastAccess, "the last access is kept")
		} else {
			assert.GreaterOrEqual(t, r.AccessCount, l.Count+repeats[r.Text], "each repeat raises the access count")
		}
	}
}

// TestScoutRowIsNotLine documents the original's mislabelling: its
// search reads row i of embeddings.npy against line i of metadata.jsonl,
// but rows are appended only when an embedding succeeded, so row i
// belongs to another line. The importer joins by memory_id through
// index.json.
func TestScoutRowIsNotLine(t *testing.T) {
	src := readSource(t, scoutSemantic)
	mislabelled := 0
	for row := range src.rows {
		if src.index[src.lines[row].ID] != row {
			mislabelled++ // the original would show line row's text for this vector
		}
	}
	assert.Positive(t, mislabelled, "row i is not line i in the real sample")
	t.Logf("the original's search mislabels %d of %d rows", mislabelled, len(src.rows))

	agents, _, err := hollow.ReadMemories(sample, hollow.Options{})
	require.NoError(t, err)
	// A memory's vector is the row index.json names for the first of its
	// text's lines that has one.
	rowOf := map[string]int{}
	for _, l := range src.lines {
		if row, ok := src.index[l.ID]; ok {
			if _, seen := rowOf[l.Thought]; !seen {
				rowOf[l.Thought] = row
			}
		}
	}
	checked := 0
	for _, r := range agents[0].Records {
		row, ok := rowOf[r.Text]
		if !ok {
			assert.Empty(t, r.Vector, "memory %s: no line of its text is indexed, so it is pending", r.ID)
			continue
		}
		want := normalise(src.rows[row])
		require.Len(t, r.Vector, len(want))
		for j := range want {
			require.InDelta(t, want[j], float64(r.Vector[j]), 1e-6, "memory %s has row %d, the one index.json names", r.ID, row)
		}
		checked++
	}
	assert.Equal(t, agents[0].Summary.Embedded, checked)
}

func normalise(v []float64) []float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / math.Sqrt(s)
	}
	return out
}

func cos(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return d / math.Sqrt(na*nb)
}

// TestScoutRecallIsExactCosine imports the sample into a store and checks
// a relevance-only recall with a query vector against an exact cosine
// computed from the source files: the same ids in the same order, scores
// within 1e-4, and each id with its own text.
func TestScoutRecallIsExactCosine(t *testing.T) {
	ctx := context.Background()
	src := readSource(t, scoutSemantic)
	store := memstore.New()
	_, err := hollow.Import(ctx, sample, store, hollow.Options{})
	require.NoError(t, err)
	mem, err := memory.New(memory.Config{Store: store, NoBackfill: true})
	require.NoError(t, err)
	defer mem.Close()

	// The expected memories: one per distinct text, with its first
	// line's id and the raw row of the first of its lines that has one.
	type want struct {
		id, text string
		created  float64
		vec      []float64
	}
	var wants []*want
	byText := map[string]*want{}
	thought := map[string]string{}
	for _, l := range src.lines {
		thought[l.ID] = l.Thought
		w := byText[l.Thought]
		if w == nil {
			w = &want{id: l.ID, text: l.Thought, created: l.TS}
			byText[l.Thought] = w
			wants = append(wants, w)
		}
		if row, ok := src.index[l.ID]; ok && w.vec == nil {
			w.vec = src.rows[row]
		}
	}

	for qi, query := range [][]float64{src.rows[0], src.rows[len(src.rows)/2], mean(src.rows)} {
		type hit struct {
			w *want
			s float64
		}
		var hits []hit
		for _, w := range wants {
			if w.vec == nil {
				continue
			}
			if s := cos(query, w.vec); s >= memory.DefaultMinRelevance {
				hits = append(hits, hit{w, s})
			}
		}
		slices.SortStableFunc(hits, func(a, b hit) int {
			switch {
			case a.s > b.s:
				return -1
			case a.s < b.s:
				return 1
			case a.w.created < b.w.created:
				return -1
			case a.w.created > b.w.created:
				return 1
			}
			return strings.Compare(a.w.id, b.w.id)
		})
		hits = hits[:min(10, len(hits))]
		require.NotEmpty(t, hits, "query %d finds memories above 0.35", qi)

		q := make([]float32, len(query))
		for i, x := range query {
			q[i] = float32(x)
		}
		got, err := mem.Recall(ctx, "scout", memory.Query{Vector: q, Space: memory.Space{Model: "nomic-embed-text"}, RelevanceOnly: true, K: 10, Peek: true})
		require.NoError(t, err)
		require.Len(t, got.Results, len(hits), "query %d", qi)
		for i, r := range got.Results {
			assert.Equal(t, hits[i].w.id, r.Memory.ID, "query %d rank %d", qi, i)
			assert.InDelta(t, hits[i].s, r.Score, 1e-4, "query %d rank %d: the exact cosine", qi, i)
			assert.Equal(t, thought[r.Memory.ID], r.Memory.Text, "memory %s carries its own line's text", r.Memory.ID)
		}
	}
}

func mean(rows [][]float64) []float64 {
	out := make([]float64, len(rows[0]))
	for _, r := range rows {
		for j, x := range r {
			out[j] += x / float64(len(rows))
		}
	}
	return out
}

// writeSemantic writes a synthetic semantic/{agent}/ directory.
func writeSemantic(t *testing.T, agent string, lines []string, index map[string]int, npy []byte) string {
	t.Helper()
	dir := t.TempDir()
	sem := filepath.Join(dir, "semantic", agent)
	require.NoError(t, os.MkdirAll(sem, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "identity"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sem, "metadata.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	if index != nil {
		b, err := json.Marshal(index)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(sem, "index.json"), b, 0o644))
	}
	if npy != nil {
		require.NoError(t, os.WriteFile(filepath.Join(sem, "embeddings.npy"), npy, 0o644))
	}
	return dir
}

// npyFile encodes rows as a .npy file of dtype descr ('<f4', '>f8', ...),
// format version major, in Fortran order when fortran.
func npyFile(rows [][]float64, descr string, major byte, fortran bool) []byte {
	n, d := len(rows), len(rows[0])
	order := "False"
	if fortran {
		order = "True"
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%d, %d), }\n", descr, order, n, d)
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major == 1 {
		_ = binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	} else {
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	}
	b.WriteString(header)
	var bo binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		bo = binary.BigEndian
	}
	at := func(k int) float64 {
		if fortran {
			return rows[k%n][k/n]
		}
		return rows[k/d][k%d]
	}
	for k := range n * d {
		if descr[2] == '4' {
			_ = binary.Write(&b, bo, float32(at(k)))
		} else {
			_ = binary.Write(&b, bo, at(k))
		}
	}
	return b.Bytes()
}

func line(id, thought string, ts float64, count int, extra string) string {
	return fmt.Sprintf(`{"memory_id": %q, "agent_id": "scout", "thought": %q, "metadata": {%s}, "timestamp": %v, "access_count": %d, "last_accessed": %v}`,
		id, thought, extra, ts, count, ts+60)
}

func TestReadMemoriesFormats(t *testing.T) {
	rows := [][]float64{{3, 4, 0}, {0, 0, 2}}
	lines := []string{
		line("mem-a", "first", 1776040891.5, 1, ""),
		line("mem-b", "second", 1776040892, 0, `"important": true`),
	}
	index := map[string]int{"mem-a": 1, "mem-b": 0} // row i is not line i
	for _, c := range []struct {
		descr   string
		major   byte
		fortran bool
	}{{"<f4", 1, false}, {">f4", 2, false}, {"<f8", 3, false}, {"<f4", 1, true}, {">f8", 1, true}} {
		t.Run(fmt.Sprintf("%s v%d fortran=%v", c.descr, c.major, c.fortran), func(t *testing.T) {
			dir := writeSemantic(t, "scout", lines, index, npyFile(rows, c.descr, c.major, c.fortran))
			agents, _, err := hollow.ReadMemories(dir, hollow.Options{})
			require.NoError(t, err)
			require.Len(t, agents, 1)
			recs := agents[0].Records
			require.Len(t, recs, 2)
			assert.Equal(t, []float32{0, 0, 1}, recs[0].Vector, "mem-a has row 1, normalised")
			assert.Equal(t, []float32{0.6, 0.8, 0}, recs[1].Vector, "mem-b has row 0")
			assert.Equal(t, time.Date(2026, 4, 13, 0, 41, 31, 500000000, time.UTC), recs[0].Created)
			assert.True(t, recs[1].Important, `metadata "important" marks the memory important`)
			assert.Equal(t, 1.0, recs[1].Importance)
		})
	}
}

func TestReadMemoriesOddLines(t *testing.T) {
	lines := []string{
		line("mem-a", "kept", 1776040891, 2, ""),
		line("mem-b", "[DELETED]", 1776040892, 0, ""),
		`{not json`,
		line("mem-c", "kept", 1776040893, 1, ""), // repeats mem-a's text
		line("mem-d", "   ", 1776040894, 0, ""),
		line("mem-e", "out of range row", 1776040895, 0, ""),
		line("mem-a", "same id, other text", 1776040896, 0, ""),
		line("bad id!", "an id that is not one", 1776040897, 0, ""),
		`{"memory_id": "mem-f", "thought": "no timestamp", "timestamp": NaN}`,
	}
	index := map[string]int{"mem-c": 0, "mem-e": 7}
	dir := writeSemantic(t, "scout", lines, index, npyFile([][]float64{{1, 0}}, "<f4", 1, false))
	agents, _, err := hollow.ReadMemories(dir, hollow.Options{Now: func() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) }})
	require.NoError(t, err)
	s := agents[0].Summary
	assert.Equal(t, 9, s.Lines)
	assert.Equal(t, 1, s.Deleted)
	assert.Equal(t, 3, s.Skipped, "not JSON, a blank thought, a bad id")
	assert.Equal(t, 1, s.Repeated)
	assert.Equal(t, 4, s.Imported)
	assert.Equal(t, s.Lines, s.Imported+s.Repeated+s.Deleted+s.Skipped)
	assert.Equal(t, 1, s.Embedded, "the repeat's vector goes to the first memory of the text")
	warnings := strings.Join(s.Warnings, "\n")
	assert.Contains(t, warnings, "metadata.jsonl:3: skipped: not a JSON object")
	assert.Contains(t, warnings, "row 7 of mem-e is outside embeddings.npy (1 rows); imported pending")
	assert.Contains(t, warnings, "memory_id mem-a repeats an earlier line; imported as mem-a-2")
	assert.Contains(t, warnings, "metadata.jsonl:9: timestamp missing or not a number")
	byID := map[string]memory.Record{}
	for _, r := range agents[0].Records {
		byID[r.ID] = r
	}
	assert.Equal(t, 3, byID["mem-a"].AccessCount, "2, raised once by the repeat")
	assert.NotEmpty(t, byID["mem-a"].Vector)
	assert.Empty(t, byID["mem-e"].Vector, "pending")
	assert.Equal(t, "same id, other text", byID["mem-a-2"].Text, "nothing lost")
}

func TestReadMemoriesBadFiles(t *testing.T) {
	lines := []string{line("mem-a", "x", 1776040891, 0, "")}
	dir := writeSemantic(t, "scout", lines, map[string]int{"mem-a": 0}, []byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<i8'}"))
	_, _, err := hollow.ReadMemories(dir, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrMalformed)
	assert.Contains(t, err.Error(), "embeddings.npy")

	dir = writeSemantic(t, "scout", lines, nil, nil)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "semantic", "scout", "index.json"), []byte(`["not", "an", "object"]`), 0o644))
	_, _, err = hollow.ReadMemories(dir, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrMalformed)
	assert.Contains(t, err.Error(), "index.json")

	dir = writeSemantic(t, "scout", lines, map[string]int{"mem-a": 0}, nil)
	agents, _, err := hollow.ReadMemories(dir, hollow.Options{})
	require.NoError(t, err, "no embeddings.npy: everything pending")
	assert.Equal(t, 1, agents[0].Summary.Pending)
}

func TestImportMemoriesOnceAndAgain(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	sum, err := hollow.Import(ctx, sample, store, hollow.Options{})
	require.NoError(t, err)
	require.Len(t, sum.Memories, 1)
	assert.Equal(t, sum.Memories[0].Imported, sum.Memories[0].Written)
	c, err := store.CountMemories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, sum.Memories[0].Imported, c.Memories)
	assert.Equal(t, sum.Memories[0].Pending, c.Pending)

	_, err = hollow.Import(ctx, sample, store, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrExists)
	sum, err = hollow.Import(ctx, sample, store, hollow.Options{Replace: true})
	require.NoError(t, err)
	assert.Zero(t, sum.Memories[0].Written, "importing again changes no memory")
	again, err := store.CountMemories(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, c, again)
}

// stateOnly is a store that keeps no memories.
type stateOnly struct{ identity.Store }

func TestImportIntoAStoreWithoutMemories(t *testing.T) {
	sum, err := hollow.Import(context.Background(), sample, stateOnly{&memstore.Store{}}, hollow.Options{})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(sum.Warnings, "\n"), "semantic memory of 1 agents not imported")
}

func TestImportMemoriesSeparately(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	sum, err := hollow.Import(ctx, sample, store, hollow.Options{NoMemories: true})
	require.NoError(t, err)
	assert.Empty(t, sum.Memories, "NoMemories: the states only")
	c, err := store.CountMemories(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, c.Memories)

	agents, _, err := hollow.ReadMemories(sample, hollow.Options{})
	require.NoError(t, err)
	require.NoError(t, hollow.ImportMemories(ctx, store, agents, false))
	assert.Equal(t, agents[0].Summary.Imported, agents[0].Summary.Written)
	require.ErrorIs(t, hollow.ImportMemories(ctx, store, agents, false), hollow.ErrExists)
	agents[0].Summary.Written = 0
	require.NoError(t, hollow.ImportMemories(ctx, store, agents, true))
	assert.Zero(t, agents[0].Summary.Written, "nothing new")
}

// TestGzippedMetadata: an archived memory directory may keep
// metadata.jsonl gzipped, and a .gz that
// is not gzip is malformed, named.
func TestGzippedMetadata(t *testing.T) {
	line := `{"memory_id":"m1","agent_id":"scout","thought":"the logs rotate hourly","metadata":{},"timestamp":1776000000,"access_count":2,"last_accessed":1776000100}`
	dir := writeSemantic(t, "scout", []string{line}, nil, nil)
	sem := filepath.Join(dir, "semantic", "scout")
	plain, err := os.ReadFile(filepath.Join(sem, "metadata.jsonl"))
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(plain)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.Remove(filepath.Join(sem, "metadata.jsonl")))
	require.NoError(t, os.WriteFile(filepath.Join(sem, "metadata.jsonl.gz"), gz.Bytes(), 0o644))

	ams, _, err := hollow.ReadMemories(dir, hollow.Options{})
	require.NoError(t, err)
	require.Len(t, ams, 1)
	require.Len(t, ams[0].Records, 1)
	assert.Equal(t, "the logs rotate hourly", ams[0].Records[0].Text)

	require.NoError(t, os.WriteFile(filepath.Join(sem, "metadata.jsonl.gz"), []byte("not gzip"), 0o644))
	_, _, err = hollow.ReadMemories(dir, hollow.Options{})
	require.ErrorIs(t, err, hollow.ErrMalformed)
	assert.Contains(t, err.Error(), "metadata.jsonl.gz")
}
