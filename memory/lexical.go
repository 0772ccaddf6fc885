package memory

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Hit is one memory found by its words: [Searcher.SearchMemories]'s
// answer.
type Hit struct {
	// ID is the memory's id.
	ID string `json:"id"`
	// Score is its lexical relevance to the query, greater than 0,
	// higher is better; the scale is the store's (BM25 in the file,
	// in-process and SQLite stores, ts_rank_cd in PostgreSQL), so only
	// the order and the ratios within one answer mean anything.
	Score float64 `json:"score"`
}

// Searcher finds an agent's memories by their words: lexical relevance,
// which needs no embedder. Every store of the SDK implements it beside
// [Store] (SQLite's FTS5 with bm25(), PostgreSQL's tsvector with
// ts_rank_cd, an in-process [Index] in the file and in-process stores);
// store/storetest.RunMemory checks it. [Memory.Recall] uses it when
// the store implements it.
type Searcher interface {
	// SearchMemories returns at most limit (≥ 1) memories of agentID that
	// share a term with text, the most relevant first (ties by id). Terms
	// are words of letters and digits, case folded, English stop words
	// dropped and stemmed ([Terms]; PostgreSQL's 'english' configuration
	// does the same with its own lists). A text with no terms finds
	// nothing. Errors: [ErrInvalid] for a bad agent id or limit; the
	// store's.
	SearchMemories(ctx context.Context, agentID, text string, limit int) ([]Hit, error)
}

// Terms returns the search terms of text, in order, repeats kept: the
// runs of letters and digits, lower-cased, without English stop words
// (the Snowball list: "the", "and", "what", "did" …), each reduced to
// its Snowball (Porter2) English stem ("deploys", "deployed" →
// "deploy"). What the in-process [Index] indexes and every store's
// query asks for.
func Terms(text string) []string {
	var out []string
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.ToLower(w)
		if english.IsStopWord(w) {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

// BM25's parameters, as Lucene and SQLite's FTS5 use them: k1 is the
// term frequency's saturation, b how much a long text is penalised.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Index is an in-process BM25 index of texts by id: what the file store
// and [MemoryStore] search with. Adding and removing one text costs its
// terms; a search reads the postings of the query's terms only. BM25 with
// k1 = 1.2, b = 0.75 and Lucene's idf, ln(1 + (N − n + 0.5)/(n + 0.5)),
// over [Terms]. The zero value is ready to use; an Index is safe for
// concurrent use.
type Index struct {
	mu    sync.RWMutex
	slot  map[string]int32 // id → slot
	ids   []string         // slot → id; "" for a free slot
	terms [][]string       // slot → distinct terms
	lens  []int32          // slot → number of terms
	free  []int32
	post  map[string][]posting
	total int64 // the sum of lens
	n     int   // texts indexed
	// scratch holds *[]float64 score arrays, zero between searches.
	scratch sync.Pool
}

type posting struct {
	slot int32
	tf   int32
}

// NewIndex returns an empty Index.
func NewIndex() *Index { return &Index{} }

// Len returns how many texts are indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Add indexes text under id, replacing what id had.
func (x *Index) Add(id, text string) {
	terms := Terms(text)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	if x.slot == nil {
		x.slot, x.post = map[string]int32{}, map[string][]posting{}
	}
	var s int32
	if n := len(x.free); n > 0 {
		s, x.free = x.free[n-1], x.free[:n-1]
	} else {
		s = int32(len(x.ids))
		x.ids, x.terms, x.lens = append(x.ids, ""), append(x.terms, nil), append(x.lens, 0)
	}
	tf := map[string]int32{}
	for _, t := range terms {
		tf[t]++
	}
	distinct := make([]string, 0, len(tf))
	for t, n := range tf {
		distinct = append(distinct, t)
		x.post[t] = append(x.post[t], posting{slot: s, tf: n})
	}
	x.slot[id], x.ids[s], x.terms[s], x.lens[s] = s, id, distinct, int32(len(terms))
	x.total += int64(len(terms))
	x.n++
}

// Remove takes id out of the index; an unknown id is no error.
func (x *Index) Remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
}

func (x *Index) removeLocked(id string) {
	s, ok := x.slot[id]
	if !ok {
		return
	}
	for _, t := range x.terms[s] {
		p := x.post[t]
		i := slices.IndexFunc(p, func(q posting) bool { return q.slot == s })
		if i >= 0 {
			p[i] = p[len(p)-1]
			p = p[:len(p)-1]
		}
		if len(p) == 0 {
			delete(x.post, t)
		} else {
			x.post[t] = p
		}
	}
	x.total -= int64(x.lens[s])
	x.n--
	delete(x.slot, id)
	x.ids[s], x.terms[s], x.lens[s] = "", nil, 0
	x.free = append(x.free, s)
}

// Search returns at most limit ids whose texts share a term with text,
// by BM25, best first, ties by id. Repeated query terms count once.
func (x *Index) Search(text string, limit int) []Hit {
	if limit <= 0 {
		return nil
	}
	q := Terms(text)
	slices.Sort(q)
	q = slices.Compact(q)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.n == 0 || len(q) == 0 {
		return nil
	}
	avg := float64(x.total) / float64(x.n)
	if avg == 0 {
		avg = 1
	}
	sp, _ := x.scratch.Get().(*[]float64)
	if sp == nil || cap(*sp) < len(x.ids) {
		sp = new(make([]float64, len(x.ids)))
	}
	scores := (*sp)[:len(x.ids)]
	var touched []int32
	for _, t := range q {
		p := x.post[t]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := math.Log(1 + (float64(x.n)-df+0.5)/(df+0.5))
		for _, e := range p {
			tf := float64(e.tf)
			if scores[e.slot] == 0 {
				touched = append(touched, e.slot)
			}
			scores[e.slot] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(x.lens[e.slot])/avg))
		}
	}
	// The best limit by a min-heap on score (the worst kept on top).
	worse := func(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID) }
	h := make([]Hit, 0, min(limit, len(touched)))
	for _, s := range touched {
		c := Hit{ID: x.ids[s], Score: scores[s]}
		if len(h) < limit {
			h = append(h, c)
			for i := len(h) - 1; i > 0; { // up
				p := (i - 1) / 2
				if !worse(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if !worse(h[0], c) {
			continue
		}
		h[0] = c
		for i := 0; ; { // down
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && worse(h[l], h[m]) {
				m = l
			}
			if r < len(h) && worse(h[r], h[m]) {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, s := range touched {
		scores[s] = 0
	}
	x.scratch.Put(sp)
	SortHits(h)
	return h
}

// SortHits orders hits as [Searcher.SearchMemories] returns them: by
// score, highest first, then by id.
func SortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// CheckSearch validates a search's agent id and limit, as stores must.
// Errors wrap [ErrInvalid].
func CheckSearch(agentID string, limit int) error {
	if err := ValidateAgentID(agentID); err != nil {
		return err
	}
	if limit < 1 {
		return fmt.Errorf("%w: search limit %d is below 1", ErrInvalid, limit)
	}
	return nil
}

// QueryWords returns the words of text a store with its own stemmer
// searches for: the runs of letters and digits, lower-cased, without
// English stop words and repeats, in order, unstemmed (SQLite's FTS5
// and PostgreSQL stem them as they stem the texts). Each is letters and
// digits only, safe to quote in a query language.
func QueryWords(text string) []string {
	var out []string
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.ToLower(w)
		if !english.IsStopWord(w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
