package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/existence-loop/sdk/llm/middleware"
)

// Query is what [Memory.Recall] looks for.
type Query struct {
	// Text is the query, embedded with the configured embedder (bounded
	// by Config.EmbedTimeout). It is ignored when Vector is set.
	Text string
	// Vector is a query vector to use instead of embedding Text, in
	// Space (it is normalised here; it need not be). Its space must be
	// the agent's, or the recall is refused with a [*SpaceError].
	Vector []float32
	// Space is Vector's embedding space: its model and dimensions. An
	// empty Model means the agent's model (the dimensions are Vector's
	// length).
	Space Space
	// K is how many memories to return at most; 0 means [DefaultK] (3).
	K int
	// MinRelevance is the least cosine similarity (-1–1) a memory must
	// have with the query to be a candidate; 0 means
	// [DefaultMinRelevance] (0.35), [NoThreshold] keeps every memory.
	MinRelevance float64
	// RelevanceOnly ranks by cosine similarity alone, highest first, ties
	// oldest first: exactly the original's order, and the score is the
	// cosine.
	RelevanceOnly bool
	// Weights, when not nil, replace Config.Weights for this recall.
	Weights *Weights
	// Kinds, when not empty, keeps only memories of these kinds.
	Kinds []Kind
	// Superseded includes memories a newer one stands for
	// ([Record].SupersededBy): the history of a fact. A recall leaves
	// them out by default, so that near-duplicates and outdated values
	// never fill the top K.
	Superseded bool
	// Peek leaves the memories' last access and access count as they
	// are (a recall normally updates both) and reports no event: for
	// dashboards, previews and inspection.
	Peek bool
}

// Result is one recalled memory and the parts of its score.
type Result struct {
	// Memory is the memory, with its access updated by this recall
	// (unless Peek); without its vector (Model and Dimensions say it has
	// one).
	Memory Record `json:"memory"`
	// Score is the weighted sum of the normalised parts (Norm): the
	// ranking. With RelevanceOnly it is the cosine itself.
	Score float64 `json:"score"`
	// Relevance is the cosine similarity with the query, -1–1; 0 when
	// the query or the memory has no vector.
	Relevance float64 `json:"relevance"`
	// Lexical is the store's lexical score of the memory for the query's
	// words ([Hit].Score: BM25, or ts_rank_cd in PostgreSQL); 0 when its
	// words do not match or the store cannot search.
	Lexical float64 `json:"lexical"`
	// Fused is the relevance that was normalised into Norm.Relevance, 0–1:
	// the cosine and lexical parts fused as [Memory.Recall] says; 0 when
	// the recall had neither (ranked by recency and importance alone, or
	// by cosine alone: then Norm.Relevance comes from Relevance).
	Fused float64 `json:"fused"`
	// Recency is Config.DecayPerHour to the power of the hours between the
	// memory's last access before this recall and now, 0–1.
	Recency float64 `json:"recency"`
	// Importance is the memory's importance, 0–1.
	Importance float64 `json:"importance"`
	// Norm are the three parts min-max normalised over the recall's
	// candidates (0–1; 0.5 each when all candidates have the same value),
	// as weighed into Score.
	Norm Weights `json:"norm"`
}

// Recalled is what a recall found: the results and how they were ranked.
type Recalled struct {
	// Results are the memories, best first.
	Results []Result
	// Candidates is how many memories were scored: those in the agent's
	// space with a cosine of at least MinRelevance and those whose words
	// match (all of the agent's memories, of the kinds asked, when
	// neither is there).
	Candidates int
	// Compared is how many memories the query was compared with: every
	// memory in the agent's space (or, for a fallback, of the kinds
	// asked), whether or not it reached MinRelevance.
	Compared int
	// Lexical is how many of the candidates were found by their words.
	Lexical int
	// Fallback reports a recall whose query could not be embedded: it
	// ranked by the query's words when they matched (Lexical > 0), else
	// by recency and importance alone; Err says why (nil when there is
	// no embedder).
	Fallback bool
	Err      error
	// Space is the space the query was compared in; zero for a fallback.
	Space Space
}

// Recall returns the agent's memories that matter most for q: exact
// cosine similarity against every memory in the agent's space (no
// approximate index), candidates above q.MinRelevance (0.35 by default),
// and, when the store is a [Searcher] and q has a Text, the best
// [DefaultLexicalLimit] memories by q's words; ranked by score =
// w_rel·relevance + w_rec·recency + w_imp·importance, each part min-max
// normalised over the candidates (Generative Agents), relevance being
// (cosine part + lexical part) / 2, or the lexical part alone for a
// query or memory without a vector (see [Result]); or by cosine alone
// with RelevanceOnly (no words). Superseded memories are left out unless
// q.Superseded. A failed search is reported as an [EventError] and the
// recall goes on without words. Ties go to the older memory. The
// returned memories' last access becomes now and their access count
// grows by one, in the cache and the store (unless q.Peek); a failed
// store write is reported as an [EventError], not returned.
//
// When q has no Vector and the query cannot be embedded (no embedder; the
// embedder is down, busy or slower than Config.EmbedTimeout, or failed
// earlier and the backfill has not succeeded since), the recall ranks
// the memories whose words match by words, recency and importance, or,
// when none matches, by recency and importance over all of the agent's
// memories; an [EventRecallFallback] says so and Recalled.Fallback is
// set. With RelevanceOnly there is no fallback: the error is returned.
//
// Errors: [ErrInvalid] for a bad agent id, query or weights; a
// [*SpaceError] (matching [ErrSpace]) for a query vector, or an
// embedder, of another model or dimensions than the agent's memories,
// naming both; the store's errors when the agent is loaded; ctx's error.
func (m *Memory) Recall(ctx context.Context, agentID string, q Query) (Recalled, error) {
	if err := ValidateAgentID(agentID); err != nil {
		return Recalled{}, err
	}
	if q.K < 0 {
		return Recalled{}, fmt.Errorf("%w: K %d is negative", ErrInvalid, q.K)
	}
	if q.K == 0 {
		q.K = DefaultK
	}
	switch {
	case q.MinRelevance == 0:
		q.MinRelevance = DefaultMinRelevance
	case math.IsNaN(q.MinRelevance) || q.MinRelevance < -1 || q.MinRelevance > 1:
		return Recalled{}, fmt.Errorf("%w: MinRelevance %v is outside -1–1", ErrInvalid, q.MinRelevance)
	}
	w := m.cfg.Weights
	if q.Weights != nil {
		w = *q.Weights
		if w.Relevance < 0 || w.Recency < 0 || w.Importance < 0 || math.IsNaN(w.Relevance+w.Recency+w.Importance) {
			return Recalled{}, fmt.Errorf("%w: weights %+v must not be negative", ErrInvalid, w)
		}
	}
	for _, k := range q.Kinds {
		if !k.Valid() {
			return Recalled{}, fmt.Errorf("%w: kind %q is not one of %v", ErrInvalid, k, Kinds())
		}
	}
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return Recalled{}, err
	}
	m.counters.recalls.Add(1)

	// The query's vector, in the query's space.
	var (
		vec      []float32
		qspace   Space
		fallback error
		cause    string
	)
	switch {
	case len(q.Vector) > 0:
		v, err := Normalize(q.Vector)
		if err != nil {
			return Recalled{}, fmt.Errorf("memory: query vector: %w", err)
		}
		vec, qspace = v, Space{Model: q.Space.Model, Dimensions: len(v)}
		if q.Space.Dimensions != 0 && q.Space.Dimensions != len(v) {
			return Recalled{}, fmt.Errorf("%w: the query vector has %d values but its space says %d dimensions", ErrInvalid, len(v), q.Space.Dimensions)
		}
	case m.cfg.Embedder == nil:
		cause = "no_embedder"
	case m.bf.failing():
		cause, fallback = "backoff", errBackoff
	default:
		if q.Text == "" {
			return Recalled{}, fmt.Errorf("%w: a query needs a text or a vector", ErrInvalid)
		}
		v, err := m.embedOne(ctx, q.Text)
		switch {
		case err == nil:
			vec, qspace = v, Space{Model: m.cfg.Embedder.Model(), Dimensions: len(v)}
		case ctx.Err() != nil:
			return Recalled{}, fmt.Errorf("memory: recall for %s: %w", agentID, ctx.Err())
		default:
			cause, fallback = middleware.Classify(err), err
		}
	}
	if vec == nil && q.RelevanceOnly {
		if fallback == nil {
			fallback = errors.New("no embedder to embed the query")
		}
		return Recalled{}, fmt.Errorf("memory: a relevance-only recall for %s needs the query's vector: %w", agentID, fallback)
	}

	// The query's words, asked of the store before the agent is locked.
	hits, lexErr := m.searchLexical(ctx, agentID, q)
	if lexErr != nil && ctx.Err() != nil {
		return Recalled{}, fmt.Errorf("memory: recall for %s: %w", agentID, ctx.Err())
	}

	now := m.now()
	a.mu.Lock()
	if vec != nil {
		if qspace.Model == "" {
			qspace.Model = a.space.Model
		}
		if !a.space.IsZero() && qspace != a.space {
			a.mu.Unlock()
			return Recalled{}, &SpaceError{AgentID: agentID, Memories: a.space, Query: qspace}
		}
	}
	var res Recalled
	if lx := lexicalOf(a, hits, q); len(lx.share) > 0 {
		res = m.rankHybrid(a, vec, lx, q, w, now, kindFilter(q))
	} else {
		res = m.rankLocked(a, vec, q, w, now)
	}
	res.Space = qspace
	if vec == nil {
		res.Fallback, res.Err, res.Space = true, fallback, Space{}
	}
	var touched []Record
	if !q.Peek {
		for i := range res.Results {
			e := a.recs[res.Results[i].Memory.ID]
			e.rec.LastAccess = maxTime(e.rec.LastAccess, now)
			e.rec.AccessCount++
			a.syncRow(e)
			res.Results[i].Memory = e.rec
			touched = append(touched, e.rec)
		}
	}
	a.mu.Unlock()

	var events []Event
	if lexErr != nil {
		events = append(events, Event{Kind: EventError, AgentID: agentID, Text: "searching memories by their words", Err: lexErr, Time: now})
	}
	if res.Fallback {
		m.counters.fallbacks.Add(1)
		events = append(events, Event{Kind: EventRecallFallback, AgentID: agentID, Text: trimText(q.Text), Cause: cause, Err: fallback, Time: now})
	}
	if len(touched) > 0 {
		if err := m.cfg.Store.UpdateMemories(ctx, agentID, touched); err != nil {
			events = append(events, Event{Kind: EventError, AgentID: agentID, Text: "saving the access of recalled memories", Err: err, Time: now})
		}
	}
	ids := make([]string, len(res.Results))
	for i, r := range res.Results {
		ids[i] = r.Memory.ID
	}
	events = append(events, Event{Kind: EventRecalled, AgentID: agentID, Text: trimText(q.Text), IDs: ids, Count: len(ids), Time: now})
	if !q.Peek {
		m.emit(events...)
	}
	return res, nil
}

// candidate is a memory being scored.
type candidate struct {
	e          *entry
	rel, rec   float64
	imp        float64
	lex, fused float64
	score      float64
	norm       Weights
}

// rankLocked scores the agent's memories against vec (nil: a fallback by
// recency and importance) and returns the best q.K. a.mu is held.
func (m *Memory) rankLocked(a *agent, vec []float32, q Query, w Weights, now time.Time) Recalled {
	if vec != nil {
		return m.rankRows(a, vec, q, w, now)
	}
	kindOK := kindFilter(q)
	decay := math.Log(m.cfg.DecayPerHour)
	var cands []candidate
	for _, e := range a.recs {
		if kindOK(e.rec.Kind) && (q.Superseded || !e.rec.Superseded()) {
			hours := max(now.Sub(e.rec.LastAccess).Hours(), 0)
			cands = append(cands, candidate{e: e, rec: math.Exp(decay * hours), imp: e.rec.Importance})
		}
	}
	out := Recalled{Candidates: len(cands), Compared: len(cands)}
	if len(cands) == 0 {
		return out
	}
	rlo, rhi := bounds(cands, func(c *candidate) float64 { return c.rec })
	ilo, ihi := bounds(cands, func(c *candidate) float64 { return c.imp })
	for i := range cands {
		c := &cands[i]
		c.norm = Weights{Recency: norm(c.rec, rlo, rhi), Importance: norm(c.imp, ilo, ihi)}
		c.score = w.Recency*c.norm.Recency + w.Importance*c.norm.Importance
	}
	top := make([]candidate, 0, q.K+1)
	for i := range cands {
		top = pushTop(top, cands[i], q.K)
	}
	out.Results = results(top)
	return out
}

// rankRows is rankLocked with a query vector: the cosines of every row
// (the parallel scan), then the parts of the candidates from the row
// arrays, then the best q.K. It reads the entries of the results only.
func (m *Memory) rankRows(a *agent, vec []float32, q Query, w Weights, now time.Time) Recalled {
	rows := len(a.rows)
	sims := a.cosines(vec)

	var kinds [8]bool
	for _, k := range q.Kinds {
		kinds[kindIndex(k)] = true
	}
	anyKind := len(q.Kinds) == 0
	thr := threshold32(q.MinRelevance)
	cand := a.cand[:0]
	kind := a.rowKind[:rows]
	for i, s := range sims {
		k := kind[i]
		if k&supersededBit != 0 {
			if !q.Superseded {
				continue
			}
			k &^= supersededBit
		}
		if s >= thr && float64(s) >= q.MinRelevance && (anyKind || kinds[k]) {
			cand = append(cand, int32(i))
		}
	}
	a.cand = cand
	out := Recalled{Candidates: len(cand), Compared: rows}
	if len(cand) == 0 {
		return out
	}

	nowUS := now.UnixMicro()
	decayPerMicro := math.Log(m.cfg.DecayPerHour) / float64(time.Hour/time.Microsecond)
	access, imp := a.rowAccess[:rows], a.rowImp[:rows]
	recency := func(i int32) float64 {
		return math.Exp(decayPerMicro * float64(max(nowUS-access[i], 0)))
	}
	top := make([]candidate, 0, q.K+1)
	if q.RelevanceOnly {
		for _, i := range cand {
			rel := float64(sims[i])
			if len(top) == q.K && rel < top[q.K-1].score {
				continue
			}
			c := candidate{e: a.rows[i], rel: rel, rec: recency(i), imp: imp[i], score: rel, norm: Weights{Relevance: rel}}
			top = pushTop(top, c, q.K)
		}
		out.Results = results(top)
		return out
	}

	// min and max of each part over the candidates (Generative Agents'
	// min-max normalisation), then the scores.
	relLo, relHi := math.Inf(1), math.Inf(-1)
	impLo, impHi := math.Inf(1), math.Inf(-1)
	accLo, accHi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, i := range cand {
		r := float64(sims[i])
		relLo, relHi = min(relLo, r), max(relHi, r)
		impLo, impHi = min(impLo, imp[i]), max(impHi, imp[i])
		accLo, accHi = min(accLo, access[i]), max(accHi, access[i])
	}
	// Recency is monotonic in the last access: its bounds are those of
	// the oldest and the newest access.
	recLo := math.Exp(decayPerMicro * float64(max(nowUS-accLo, 0)))
	recHi := math.Exp(decayPerMicro * float64(max(nowUS-accHi, 0)))
	for _, i := range cand {
		rel, rec, im := float64(sims[i]), recency(i), imp[i]
		n := Weights{Relevance: norm(rel, relLo, relHi), Recency: norm(rec, recLo, recHi), Importance: norm(im, impLo, impHi)}
		score := w.Relevance*n.Relevance + w.Recency*n.Recency + w.Importance*n.Importance
		if len(top) == q.K && score < top[q.K-1].score {
			continue
		}
		top = pushTop(top, candidate{e: a.rows[i], rel: rel, rec: rec, imp: im, score: score, norm: n}, q.K)
	}
	out.Results = results(top)
	return out
}

// cosines scans the agent's matrix against vec into the recall's
// scratch: the cosine of every row. a.mu is held.
func (a *agent) cosines(vec []float32) []float32 {
	rows := len(a.rows)
	if cap(a.sims) < rows {
		a.sims = make([]float32, rows)
		a.cand = make([]int32, 0, rows)
	}
	sims := a.sims[:rows]
	scan(a.mat, vec, sims)
	return sims
}

// threshold32 is minRel as a float32 at or below it: float32 rounding must
// not drop a cosine at the threshold.
func threshold32(minRel float64) float32 {
	thr := float32(minRel)
	if float64(thr) > minRel {
		thr = math.Nextafter32(thr, float32(math.Inf(-1)))
	}
	return thr
}

// norm is v min-max normalised to lo–hi: (v − lo) / (hi − lo), or 0.5
// when all candidates have the same value (Generative Agents' rule).
func norm(v, lo, hi float64) float64 {
	if hi-lo == 0 {
		return 0.5
	}
	return (v - lo) / (hi - lo)
}

// bounds returns the least and greatest part of the candidates.
func bounds(cands []candidate, part func(*candidate) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range cands {
		v := part(&cands[i])
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// better orders candidates: by score, then fused relevance, then
// cosine, highest first, then the older memory (Created, then ID) first.
func better(a, b *candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.fused, a.fused); c != 0 {
		return c
	}
	if c := cmp.Compare(b.rel, a.rel); c != 0 {
		return c
	}
	return CompareRecords(&a.e.rec, &b.e.rec)
}

// pushTop inserts c into top, the best candidates so far in order, and
// keeps at most k.
func pushTop(top []candidate, c candidate, k int) []candidate {
	if len(top) == k && better(&c, &top[k-1]) >= 0 {
		return top
	}
	pos, _ := slices.BinarySearchFunc(top, &c, func(x candidate, y *candidate) int { return better(&x, y) })
	top = slices.Insert(top, pos, c)
	if len(top) > k {
		top = top[:k]
	}
	return top
}

// results turns the best candidates into results.
func results(top []candidate) []Result {
	out := make([]Result, len(top))
	for i, c := range top {
		out[i] = Result{Memory: c.e.rec, Score: c.score, Relevance: c.rel, Recency: c.rec, Importance: c.imp, Lexical: c.lex, Fused: c.fused, Norm: c.norm}
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
