package memeval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/internal/strictjson"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/memory"
)

// Memory is one memory of a dataset.
type Memory struct {
	// Agent is the agent whose memory it is (memory.ValidateAgentID).
	Agent string
	// ID is the memory's id (memory.ValidateID), what queries name as
	// gold.
	ID string
	// Text is what is remembered.
	Text string
	// Time is when it was stored: its creation and last access.
	Time time.Time
	// Importance is 0–1; 0 means memory.DefaultImportance of an
	// observation (0.5).
	Importance float64
}

// Query is one question of a dataset.
type Query struct {
	// Agent is the agent asked; Text the question.
	Agent, Text string
	// Gold are the ids of the memories that answer it (at least one).
	Gold []string
	// Category groups queries in the report; empty for none.
	Category string
	// Line is the query's line in the dataset (1-based).
	Line int
}

// Dataset is a loaded dataset.
type Dataset struct {
	Memories []Memory
	Queries  []Query
}

// MaxLineBytes is the longest dataset line read, in bytes (without its
// line break): a memory's text is at most memory.MaxTextChars code
// points, so a longer line is no dataset line.
const MaxLineBytes = 1 << 20

// line is one dataset line as JSON.
type line struct {
	Kind       string   `json:"kind"`
	Agent      string   `json:"agent"`
	ID         string   `json:"id"`
	Text       string   `json:"text"`
	Time       string   `json:"time"`
	Importance *float64 `json:"importance"`
	Gold       []string `json:"gold"`
	Category   string   `json:"category"`
}

// Load reads a dataset, keeping every memory and query ([Scan] keeps the
// queries only). Lines are checked one by one, by the SDK's strict JSON
// rules (internal/strictjson: a key named twice is an error, never last
// one wins; an unknown key, a value of the wrong type or invalid UTF-8 is
// an error). Errors name the line (1-based): a line above [MaxLineBytes],
// bytes that are not UTF-8, bad JSON, an unknown or missing kind, a bad
// agent or memory id, a memory id given twice for one agent, a time that
// is not RFC 3339, an importance outside 0–1, a blank text, a query
// without gold ids or whose gold ids are no memory of its agent; and a
// dataset without queries.
func Load(r io.Reader) (*Dataset, error) {
	ds := &Dataset{}
	q, err := Scan(r, func(m Memory) error {
		ds.Memories = append(ds.Memories, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ds.Queries = q.Queries
	return ds, nil
}

// Scan reads a dataset as [Load] does, with the same checks and errors,
// but holds no memory: it calls each (when non-nil) with every memory, in
// the order of the file, as it reads it, and returns a Dataset with the
// queries only. Its memory use is a set of 16-byte digests of the
// memories' agents and ids (for duplicates and gold ids) plus the
// queries, whatever the file's length. An error from each stops the scan
// and is returned with the line's number.
func Scan(r io.Reader, each func(Memory) error) (*Dataset, error) {
	sc := scanner{known: map[key]struct{}{}, keepQueries: true}
	if err := sc.run(r, each); err != nil {
		return nil, err
	}
	if len(sc.queries) == 0 {
		return nil, errors.New("memeval: the dataset has no queries")
	}
	return &Dataset{Queries: sc.queries}, nil
}

// key is the digest of a memory's agent and id: a compact set member for
// millions of memories.
type key [16]byte

func keyOf(agent, id string) key {
	h := sha256.New()
	h.Write([]byte(agent))
	h.Write([]byte{0})
	h.Write([]byte(id))
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// scanner reads dataset lines and checks them.
type scanner struct {
	known       map[key]struct{}
	keepQueries bool
	queries     []Query
	interned    map[string]string // agents and categories, shared by the queries
}

func (sc *scanner) intern(s string) string {
	if v, ok := sc.interned[s]; ok {
		return v
	}
	if sc.interned == nil {
		sc.interned = map[string]string{}
	}
	sc.interned[s] = s
	return s
}

// run reads r line by line; see [Load] for the checks.
func (sc *scanner) run(r io.Reader, each func(Memory) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		raw, err := readLine(br, &buf)
		if errors.Is(err, errLineTooLong) {
			return fmt.Errorf("memeval: line %d: longer than %d bytes: not a dataset line", n, MaxLineBytes)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("memeval: line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := sc.line(n, raw, each); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	for _, q := range sc.queries {
		for _, g := range q.Gold {
			if _, ok := sc.known[keyOf(q.Agent, g)]; !ok {
				return fmt.Errorf("memeval: line %d: gold %q is no memory of %s", q.Line, g, q.Agent)
			}
		}
	}
	return nil
}

// errLineTooLong is readLine's error for a line above MaxLineBytes.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line of br without its line break, in *buf
// (reused), or errLineTooLong as soon as it passes MaxLineBytes (the
// rest is not read). io.EOF comes with the last line.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if len(*buf)+len(chunk) > MaxLineBytes+1 { // + the line break
			return nil, errLineTooLong
		}
		*buf = append(*buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix((*buf)[:len(*buf)-1], []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if len(*buf) > MaxLineBytes {
				return nil, errLineTooLong
			}
			return *buf, err
		}
	}
}

// line checks and takes one non-blank line, number n.
func (sc *scanner) line(n int, raw []byte, each func(Memory) error) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("memeval: line %d: %s", n, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(raw) {
		i := 0
		for i < len(raw) {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return bad("byte %d is not UTF-8", i+1)
	}
	var l line
	if err := strictjson.Unmarshal(raw, &l, jsonv2.RejectUnknownMembers(true)); err != nil {
		return bad("%v", err)
	}
	switch l.Kind {
	case "memory", "query":
	case "":
		return bad(`no "kind": want "memory" or "query"`)
	default:
		return bad(`kind %q: want "memory" or "query"`, l.Kind)
	}
	if err := memory.ValidateAgentID(l.Agent); err != nil {
		return bad("%v", err)
	}
	if err := memory.ValidateText(l.Text); err != nil {
		return bad("%v", err)
	}
	if l.Kind == "query" {
		if l.ID != "" || l.Time != "" || l.Importance != nil {
			return bad(`a query takes no "id", "time" or "importance"`)
		}
		if len(l.Gold) == 0 {
			return bad("a query needs gold memory ids")
		}
		if sc.keepQueries {
			sc.queries = append(sc.queries, Query{Agent: sc.intern(l.Agent), Text: l.Text, Gold: slices.Clip(l.Gold),
				Category: sc.intern(l.Category), Line: n})
		}
		return nil
	}
	if len(l.Gold) > 0 || l.Category != "" {
		return bad(`a memory takes no "gold" or "category"`)
	}
	if err := memory.ValidateID(l.ID); err != nil {
		return bad("%v", err)
	}
	k := keyOf(l.Agent, l.ID)
	if _, dup := sc.known[k]; dup {
		return bad("memory %s of %s is given twice", l.ID, l.Agent)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return bad("time %q is not RFC 3339", l.Time)
	}
	m := Memory{Agent: l.Agent, ID: l.ID, Text: l.Text, Time: t.UTC().Truncate(time.Microsecond)}
	if l.Importance != nil {
		if math.IsNaN(*l.Importance) || *l.Importance < 0 || *l.Importance > 1 {
			return bad("importance %v is outside 0–1", *l.Importance)
		}
		m.Importance = *l.Importance
	}
	sc.known[k] = struct{}{}
	if each != nil {
		if err := each(m); err != nil {
			return fmt.Errorf("memeval: line %d: %w", n, err)
		}
	}
	return nil
}

// Options configure a [Run].
type Options struct {
	// Store receives the memories; it must hold none of the dataset's
	// agents. Required.
	Store memory.Store
	// Embedder embeds the memories and the queries; nil runs lexical
	// only (every recall ranks by the query's words).
	Embedder llm.Embedder
	// K is how many memories a recall returns (≥ 1); 0 means 10.
	K int
	// Weights of the recall's score; nil means relevance alone
	// ({1, 0, 0}): the benchmark measures retrieval, and the dataset's
	// times would otherwise favour its latest memories. The recall's
	// clock stands at the newest memory's time.
	Weights *memory.Weights
	// BatchSize is how many memories one store write holds
	// ([memory.AddMemories]: one transaction in the SQL stores); 0 means
	// [DefaultBatchSize], 1 stores them one by one.
	BatchSize int
}

// DefaultBatchSize is how many memories one store write of a [Run] holds
// by default: large enough that a SQL store's commit (an fsync) is paid
// once per thousand memories, small enough that a batch is a few hundred
// kilobytes.
const DefaultBatchSize = 1000

// Metrics are the figures of a set of queries, 0–1 each.
type Metrics struct {
	// Queries is how many were asked.
	Queries int `json:"queries"`
	// RecallAny1, RecallAny5 and RecallAnyK: the share of queries with a
	// gold memory among the first 1, 5 and K results.
	RecallAny1 float64 `json:"recall_any@1"`
	RecallAny5 float64 `json:"recall_any@5"`
	RecallAnyK float64 `json:"recall_any@k"`
	// RecallAllK: the share of queries with every gold memory among the
	// first K.
	RecallAllK float64 `json:"recall_all@k"`
	// MRR is the mean over the queries of 1 / the rank of the first gold
	// memory (0 when none is among the first K).
	MRR float64 `json:"mrr"`
}

// Report is what a [Run] measured.
type Report struct {
	// Memories and Agents count what was stored; Embedded how many
	// memories got a vector.
	Memories int `json:"memories"`
	Agents   int `json:"agents"`
	Embedded int `json:"embedded"`
	// K is the recall depth; LexicalOnly says no embedder was used.
	K           int  `json:"k"`
	LexicalOnly bool `json:"lexical_only"`
	// All are the figures over every query; Categories per category
	// (queries without one are in All only).
	All        Metrics            `json:"all"`
	Categories map[string]Metrics `json:"categories,omitempty"`
	// Seconds is how long the recalls took, in seconds, and
	// RecallMillis the mean per recall, in milliseconds.
	Seconds      float64 `json:"seconds"`
	RecallMillis float64 `json:"recall_ms"`
}

// Run stores ds in o.Store, embeds it unless there is no embedder,
// recalls for every query and measures. A memory whose text another
// memory of its agent already has is stored once; gold ids name it
// through the one stored. Near-duplicates are not consolidated. The
// memories are stored o.BatchSize at a time ([memory.AddMemories]), and
// recalled one agent at a time, so that beside the store the process
// holds one agent's memories at most.
// Errors: a store that already holds a dataset agent's memories; the
// store's and the embedder's; ctx's.
func Run(ctx context.Context, ds *Dataset, o Options) (*Report, error) {
	var sum summary
	for _, m := range ds.Memories {
		sum.add(m)
	}
	return run(ctx, ds.Queries, sum, o, func(store func(Memory) error) error {
		for _, m := range ds.Memories {
			if err := store(m); err != nil {
				return fmt.Errorf("memeval: %w", err)
			}
		}
		return nil
	})
}

// RunFrom is [Run] for a dataset that r holds, read twice so that the
// process never holds its memories (only the store does): a [Scan] checks
// every line and keeps the queries, then, from r's start, each memory is
// stored as it is read. Nothing is stored when the first reading finds
// an error. Errors: [Scan]'s, naming the line; r's; [Run]'s; and a
// dataset that changed between the two readings.
func RunFrom(ctx context.Context, r io.ReadSeeker, o Options) (*Report, error) {
	var sum summary
	h := sha256.New()
	ds, err := Scan(io.TeeReader(r, h), func(m Memory) error { sum.add(m); return nil })
	if err != nil {
		return nil, err
	}
	first := h.Sum(nil)
	return run(ctx, ds.Queries, sum, o, func(store func(Memory) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("memeval: reading the dataset again: %w", err)
		}
		h.Reset()
		sc := scanner{known: map[key]struct{}{}} // the queries are kept already
		if err := sc.run(io.TeeReader(r, h), store); err != nil {
			return err
		}
		if !bytes.Equal(h.Sum(nil), first) {
			return errors.New("memeval: the dataset changed while it was read")
		}
		return nil
	})
}

// summary is what run needs to know of the memories before storing them.
type summary struct {
	count  int
	newest time.Time
	agents map[string]bool
}

func (s *summary) add(m Memory) {
	if s.agents == nil {
		s.agents = map[string]bool{}
	}
	s.count++
	s.agents[m.Agent] = true
	if m.Time.After(s.newest) {
		s.newest = m.Time
	}
}

// run is Run over queries and the memories that memories passes to its
// argument, in order, which sum describes.
func run(ctx context.Context, queries []Query, sum summary, o Options, memories func(store func(Memory) error) error) (*Report, error) {
	if o.Store == nil {
		return nil, errors.New("memeval: Options.Store is required")
	}
	if o.K < 0 {
		return nil, fmt.Errorf("memeval: K %d is negative", o.K)
	}
	if o.BatchSize < 0 {
		return nil, fmt.Errorf("memeval: BatchSize %d is negative", o.BatchSize)
	}
	if o.K == 0 {
		o.K = 10
	}
	w := memory.Weights{Relevance: 1}
	if o.Weights != nil {
		w = *o.Weights
	}
	newest, agents := sum.newest, sum.agents
	for _, a := range slices.Sorted(maps.Keys(agents)) {
		c, err := o.Store.CountMemories(ctx, a)
		if err != nil {
			return nil, err
		}
		if c.Memories > 0 {
			return nil, fmt.Errorf("memeval: the store already holds %d memories of %s; evaluate in a fresh store", c.Memories, a)
		}
	}
	batch := o.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	// alias maps a memory the store merged into another of the same
	// text to the one stored; the others keep their ids.
	alias := map[key]string{}
	pending := make([]memory.Record, 0, batch)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		got, err := memory.AddMemories(ctx, o.Store, pending)
		if err != nil {
			return fmt.Errorf("storing %d memories, %s of %s to %s of %s: %w", len(pending),
				pending[0].ID, pending[0].AgentID, pending[len(pending)-1].ID, pending[len(pending)-1].AgentID, err)
		}
		for i, g := range got {
			if g.Stored.ID != pending[i].ID {
				alias[keyOf(pending[i].AgentID, pending[i].ID)] = g.Stored.ID
			}
		}
		pending = pending[:0]
		return nil
	}
	err := memories(func(m Memory) error {
		imp := m.Importance
		if imp == 0 {
			imp = memory.DefaultImportance(memory.KindObservation)
		}
		pending = append(pending, memory.Record{ID: m.ID, AgentID: m.Agent, Text: m.Text, Kind: memory.KindObservation,
			Importance: imp, Created: m.Time, LastAccess: m.Time})
		if len(pending) == batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	rep := &Report{Memories: sum.count, Agents: len(agents), K: o.K, LexicalOnly: o.Embedder == nil}

	// One agent at a time: a [memory.Memory] caches every memory of the
	// agents it recalls for, so the process holds one agent's memories,
	// not the dataset's.
	byAgent := map[string][]Query{}
	for _, q := range queries {
		byAgent[q.Agent] = append(byAgent[q.Agent], q)
	}
	type sums struct{ n, any1, any5, anyK, allK, rr float64 }
	all := sums{}
	cats := map[string]*sums{}
	var took time.Duration
	order := map[string]bool{}
	maps.Copy(order, agents)
	for a := range byAgent {
		order[a] = true
	}
	for _, a := range slices.Sorted(maps.Keys(order)) {
		if (o.Embedder == nil || !agents[a]) && len(byAgent[a]) == 0 {
			continue
		}
		mem, err := memory.New(memory.Config{Store: o.Store, Embedder: o.Embedder, Clock: clock.NewVirtual(newest), NoBackfill: true, Cap: -1, MergeAt: 2})
		if err != nil {
			return nil, err
		}
		if o.Embedder != nil && agents[a] {
			n, err := mem.Reembed(ctx, a)
			if err != nil {
				mem.Close()
				return nil, fmt.Errorf("memeval: embedding the memories of %s: %w", a, err)
			}
			rep.Embedded += n
		}
		start := time.Now()
		for _, q := range byAgent[a] {
			got, err := mem.Recall(ctx, q.Agent, memory.Query{Text: q.Text, K: o.K, Weights: &w, MinRelevance: memory.NoThreshold, Peek: true})
			if err != nil {
				mem.Close()
				return nil, fmt.Errorf("memeval: line %d: recall: %w", q.Line, err)
			}
			gold := map[string]bool{}
			for _, g := range q.Gold {
				if id, ok := alias[keyOf(q.Agent, g)]; ok {
					g = id
				}
				gold[g] = true
			}
			first, found := 0, 0
			for i, r := range got.Results {
				if gold[r.Memory.ID] {
					found++
					if first == 0 {
						first = i + 1
					}
				}
			}
			s := sums{n: 1}
			if first > 0 {
				s.anyK, s.rr = 1, 1/float64(first)
				if first <= 1 {
					s.any1 = 1
				}
				if first <= 5 {
					s.any5 = 1
				}
			}
			if found == len(gold) {
				s.allK = 1
			}
			add := func(t *sums) {
				t.n, t.any1, t.any5, t.anyK, t.allK, t.rr = t.n+s.n, t.any1+s.any1, t.any5+s.any5, t.anyK+s.anyK, t.allK+s.allK, t.rr+s.rr
			}
			add(&all)
			if q.Category != "" {
				if cats[q.Category] == nil {
					cats[q.Category] = &sums{}
				}
				add(cats[q.Category])
			}
		}
		took += time.Since(start)
		mem.Close()
	}
	rep.Seconds = took.Seconds()
	rep.RecallMillis = rep.Seconds * 1000 / float64(len(queries))
	metrics := func(s sums) Metrics {
		return Metrics{Queries: int(s.n), RecallAny1: s.any1 / s.n, RecallAny5: s.any5 / s.n, RecallAnyK: s.anyK / s.n, RecallAllK: s.allK / s.n, MRR: s.rr / s.n}
	}
	rep.All = metrics(all)
	if len(cats) > 0 {
		rep.Categories = map[string]Metrics{}
		for c, s := range cats {
			rep.Categories[c] = metrics(*s)
		}
	}
	return rep, nil
}

// Text writes the report for people: one line overall, one per
// category, the figures to three decimals.
func (r *Report) Text(w io.Writer) error {
	mode := "hybrid"
	if r.LexicalOnly {
		mode = "lexical only"
	}
	if _, err := fmt.Fprintf(w, "%d memories of %d agents (%d embedded), k %d, %s, %.2f ms per recall\n", r.Memories, r.Agents, r.Embedded, r.K, mode, r.RecallMillis); err != nil {
		return err
	}
	row := func(name string, m Metrics) error {
		_, err := fmt.Fprintf(w, "%-16s queries %5d  recall_any@1 %.3f  @5 %.3f  @%d %.3f  recall_all@%d %.3f  mrr %.3f\n",
			name, m.Queries, m.RecallAny1, m.RecallAny5, r.K, m.RecallAnyK, r.K, m.RecallAllK, m.MRR)
		return err
	}
	if err := row("all", r.All); err != nil {
		return err
	}
	for _, c := range slices.Sorted(maps.Keys(r.Categories)) {
		if err := row(c, r.Categories[c]); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes the report with the figures named by their depth,
// as `existence memory eval -json` prints them:
//
//	{"memories":23,"agents":2,"embedded":0,"k":10,"lexical_only":true,
//	 "all":{"queries":20,"recall_any@1":0.6,"recall_any@5":0.85,"recall_any@10":0.9,"recall_all@10":0.8,"mrr":0.7},
//	 "categories":{"temporal":{…}},"seconds":0.01,"recall_ms":0.5}
func (r *Report) MarshalJSON() ([]byte, error) {
	named := func(m Metrics) map[string]any {
		return map[string]any{
			"queries": m.Queries, "recall_any@1": m.RecallAny1, "recall_any@5": m.RecallAny5,
			fmt.Sprintf("recall_any@%d", r.K): m.RecallAnyK, fmt.Sprintf("recall_all@%d", r.K): m.RecallAllK, "mrr": m.MRR,
		}
	}
	out := map[string]any{
		"memories": r.Memories, "agents": r.Agents, "embedded": r.Embedded, "k": r.K, "lexical_only": r.LexicalOnly,
		"all": named(r.All), "seconds": r.Seconds, "recall_ms": r.RecallMillis,
	}
	if len(r.Categories) > 0 {
		cats := map[string]any{}
		for c, m := range r.Categories {
			cats[c] = named(m)
		}
		out["categories"] = cats
	}
	return json.Marshal(out)
}
