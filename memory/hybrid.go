package memory

import (
	"context"
	"math"
	"slices"
	"time"
)

// DefaultLexicalLimit is how many memories a recall asks the store's
// [Searcher] for at least: the lexical candidates. A recall asks for
// 20·K when that is more.
const DefaultLexicalLimit = 200

// lexical is the lexical side of one recall: the store's hits, by entry,
// as a share of the best hit's score (0–1].
type lexical struct {
	share map[*entry]float64
	raw   map[*entry]float64
	n     int // hits the store returned
}

// searchLexical asks the store for q's words. It returns nil when the
// store cannot search, the query has no text, or nothing matched; a
// store error is returned for the caller to report.
func (m *Memory) searchLexical(ctx context.Context, agentID string, q Query) ([]Hit, error) {
	s, ok := m.cfg.Store.(Searcher)
	if !ok || q.Text == "" || q.RelevanceOnly {
		return nil, nil
	}
	return s.SearchMemories(ctx, agentID, q.Text, max(DefaultLexicalLimit, 20*q.K))
}

// lexicalOf maps hits to the agent's cached entries of the kinds asked
// (a.mu held). Hits the cache does not hold (forgotten meanwhile) are
// dropped.
func lexicalOf(a *agent, hits []Hit, q Query) lexical {
	kindOK := kindFilter(q)
	lx := lexical{n: len(hits)}
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	if best <= 0 {
		return lx
	}
	lx.share, lx.raw = make(map[*entry]float64, len(hits)), make(map[*entry]float64, len(hits))
	for _, h := range hits {
		e := a.recs[h.ID]
		if e == nil || h.Score <= 0 || !kindOK(e.rec.Kind) || (e.rec.Superseded() && !q.Superseded) {
			continue
		}
		lx.share[e], lx.raw[e] = h.Score/best, h.Score
	}
	return lx
}

// rankHybrid ranks the union of the vector candidates (a cosine of at
// least q.MinRelevance; none when vec is nil) and the lexical hits. Each
// gets a fused relevance, 0–1:
//
//   - (cosine part + lexical part) / 2 for a memory with a vector in the
//     agent's space when the query has a vector too;
//   - the lexical part alone when the query or the memory has no vector,
//
// where the cosine part is the cosine min-max normalised over the vector
// candidates (0 below the threshold) and the lexical part the memory's
// lexical score as a share of the best hit's (0 when its words do not
// match). The fused relevance, the recency and the importance are then
// min-max normalised over the candidates and weighed as in every recall.
// a.mu is held.
func (m *Memory) rankHybrid(a *agent, vec []float32, lx lexical, q Query, w Weights, now time.Time, kindOK func(Kind) bool) Recalled {
	cos := map[*entry]float64{}
	if vec != nil && len(a.rows) > 0 {
		sims := a.cosines(vec)
		thr := threshold32(q.MinRelevance)
		for i, s := range sims {
			if s < thr || float64(s) < q.MinRelevance {
				continue
			}
			if e := a.rows[i]; kindOK(e.rec.Kind) && (q.Superseded || !e.rec.Superseded()) {
				cos[e] = float64(s)
			}
		}
		for e := range lx.share { // found by words below the threshold: a cosine part of 0
			if e.row >= 0 {
				cos[e] = float64(sims[e.row])
			}
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cos {
		if c >= q.MinRelevance {
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	seen := make(map[*entry]bool, len(cos)+len(lx.share))
	var cands []candidate
	decay := math.Log(m.cfg.DecayPerHour)
	add := func(e *entry) {
		if seen[e] {
			return
		}
		seen[e] = true
		c := candidate{e: e, imp: e.rec.Importance, lex: lx.raw[e]}
		c.rec = math.Exp(decay * max(now.Sub(e.rec.LastAccess).Hours(), 0))
		share := lx.share[e]
		if cv, ok := cos[e]; ok && vec != nil {
			c.rel = cv
			part := 0.0
			if cv >= q.MinRelevance {
				part = norm(cv, lo, hi)
			}
			c.fused = (part + share) / 2
		} else {
			c.fused = share
		}
		cands = append(cands, c)
	}
	for e, cv := range cos {
		if cv >= q.MinRelevance {
			add(e)
		}
	}
	for e := range lx.share {
		add(e)
	}
	out := Recalled{Candidates: len(cands), Lexical: len(lx.share), Compared: len(a.rows)}
	if vec == nil { // a fallback: compared with the memories of the kinds asked, as rankLocked
		out.Compared = 0
		for _, e := range a.recs {
			if kindOK(e.rec.Kind) && (q.Superseded || !e.rec.Superseded()) {
				out.Compared++
			}
		}
	}
	if len(cands) == 0 {
		return out
	}
	flo, fhi := bounds(cands, func(c *candidate) float64 { return c.fused })
	rlo, rhi := bounds(cands, func(c *candidate) float64 { return c.rec })
	ilo, ihi := bounds(cands, func(c *candidate) float64 { return c.imp })
	top := make([]candidate, 0, q.K+1)
	for i := range cands {
		c := &cands[i]
		c.norm = Weights{Relevance: norm(c.fused, flo, fhi), Recency: norm(c.rec, rlo, rhi), Importance: norm(c.imp, ilo, ihi)}
		c.score = w.Relevance*c.norm.Relevance + w.Recency*c.norm.Recency + w.Importance*c.norm.Importance
		top = pushTop(top, *c, q.K)
	}
	out.Results = results(top)
	return out
}

// kindFilter returns whether a kind is asked for by q.
func kindFilter(q Query) func(Kind) bool {
	return func(k Kind) bool { return len(q.Kinds) == 0 || slices.Contains(q.Kinds, k) }
}
