package memory

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// mergeLocked consolidates e, a memory that has just got its vector,
// with its nearest current memory of the same kind when their cosine is
// at least Config.MergeAt: the newer of the two (by Created, then ID)
// stands for both, with the larger importance and either's important
// mark, and the older is marked superseded by it ([Record].SupersededBy)
// rather than deleted. It returns the memory that stands and the
// events, or false when nothing was consolidated. a.mu is held. A failed
// store write is reported as an [EventError] and leaves both memories as
// they were.
func (m *Memory) mergeLocked(ctx context.Context, a *agent, e *entry) (Record, []Event, bool) {
	if m.cfg.MergeAt > 1 || e.row < 0 || len(a.rows) < 2 || e.rec.Superseded() {
		return Record{}, nil, false
	}
	sims := make([]float32, len(a.rows))
	scan(a.mat, a.vector(e), sims)
	best, bestSim := -1, float32(0)
	for i, s := range sims {
		o := a.rows[i]
		if o == e || o.rec.Kind != e.rec.Kind || o.rec.Superseded() || float64(s) < m.cfg.MergeAt {
			continue
		}
		if best < 0 || s > bestSim || (s == bestSim && CompareRecords(&o.rec, &a.rows[best].rec) < 0) {
			best, bestSim = i, s
		}
	}
	if best < 0 {
		return Record{}, nil, false
	}
	keep, gone := e, a.rows[best]
	if CompareRecords(&keep.rec, &gone.rec) < 0 {
		keep, gone = gone, keep
	}
	k, g := keep.rec, gone.rec
	k.Importance = max(k.Importance, g.Importance)
	k.Important = k.Important || g.Important
	g.SupersededBy = k.ID
	if err := m.cfg.Store.UpdateMemories(ctx, a.id, []Record{k, g}); err != nil {
		return Record{}, []Event{{Kind: EventError, AgentID: a.id, Text: "superseding a near-duplicate memory", Err: err, Time: m.now()}}, false
	}
	keep.rec, gone.rec = k, g
	a.syncRow(keep)
	a.syncRow(gone)
	m.counters.merged.Add(1)
	out := a.record(keep)
	out.Vector = nil
	return k, []Event{{Kind: EventMerged, AgentID: a.id, Text: g.Text, Record: &out, IDs: []string{g.ID}, Count: 1,
		Cause: fmt.Sprintf("cosine %.3f", bestSim), Time: m.now()}}, true
}

// factLocked makes the newest memory (by Created, then ID) among the
// agent's memories stating fact the one that stands for it: every other
// one is marked superseded by it. latest, when not empty, is the id of the
// memory just stored: it wins a tie on Created (two statements within a
// microsecond, or under a virtual clock), which random ids would
// otherwise decide. It returns the events. a.mu is held.
func (m *Memory) factLocked(ctx context.Context, a *agent, fact, latest string) []Event {
	if fact == "" {
		return nil
	}
	var same []*entry
	for _, e := range a.recs {
		if e.rec.Fact == fact {
			same = append(same, e)
		}
	}
	if len(same) < 2 {
		return nil
	}
	slices.SortFunc(same, func(x, y *entry) int {
		if x.rec.Created.Equal(y.rec.Created) && latest != "" && (x.rec.ID == latest || y.rec.ID == latest) {
			if x.rec.ID == latest {
				return -1
			}
			return 1
		}
		return CompareRecords(&y.rec, &x.rec)
	})
	newest := same[0]
	var changed []Record
	var ids []string
	for _, e := range same {
		want := newest.rec.ID
		if e == newest {
			want = ""
		}
		if e.rec.SupersededBy != want {
			r := e.rec
			r.SupersededBy = want
			changed = append(changed, r)
			if want != "" {
				ids = append(ids, r.ID)
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if err := m.cfg.Store.UpdateMemories(ctx, a.id, changed); err != nil {
		return []Event{{Kind: EventError, AgentID: a.id, Text: "superseding older values of fact " + fact, Err: err, Time: m.now()}}
	}
	for _, r := range changed {
		e := a.recs[r.ID]
		e.rec.SupersededBy = r.SupersededBy
		a.syncRow(e)
	}
	if len(ids) == 0 {
		return nil
	}
	out := a.record(newest)
	out.Vector = nil
	return []Event{{Kind: EventSuperseded, AgentID: a.id, Text: newest.rec.Text, Record: &out, IDs: ids, Count: len(ids), Cause: "fact " + fact, Time: m.now()}}
}

// evictLocked evicts the lowest-value memories past the cap: superseded
// memories first, then by value = w_rec·recency + w_imp·importance (raw,
// 0–1 each), lowest first, ties to the least recently accessed, then the
// oldest. Important memories are never evicted. a.mu is held.
func (m *Memory) evictLocked(ctx context.Context, a *agent) []Event {
	over := len(a.recs) - m.cfg.Cap
	if m.cfg.Cap < 0 || over <= 0 {
		return nil
	}
	now := m.now()
	decay := math.Log(m.cfg.DecayPerHour)
	type valued struct {
		e *entry
		v float64
	}
	var cands []valued
	for _, e := range a.recs {
		if e.rec.Important {
			continue
		}
		rec := math.Exp(decay * max(now.Sub(e.rec.LastAccess).Hours(), 0))
		v := m.cfg.Weights.Recency*rec + m.cfg.Weights.Importance*e.rec.Importance
		if e.rec.Superseded() {
			v -= 1e9 // superseded memories go first
		}
		cands = append(cands, valued{e, v})
	}
	slices.SortFunc(cands, func(x, y valued) int {
		if c := cmp.Compare(x.v, y.v); c != 0 {
			return c
		}
		if c := x.e.rec.LastAccess.Compare(y.e.rec.LastAccess); c != 0 {
			return c
		}
		return CompareRecords(&x.e.rec, &y.e.rec)
	})
	n := min(over, len(cands))
	var events []Event
	if n < over {
		events = append(events, Event{Kind: EventError, AgentID: a.id, Time: now,
			Err: fmt.Errorf("memory: %s holds %d memories, over its cap of %d, and %d of them are important: they are kept", a.id, len(a.recs), m.cfg.Cap, len(a.recs)-len(cands))})
	}
	if n == 0 {
		return events
	}
	ids := make([]string, n)
	for i := range n {
		ids[i] = cands[i].e.rec.ID
	}
	if _, err := m.cfg.Store.DeleteMemories(ctx, a.id, ids); err != nil {
		return append(events, Event{Kind: EventError, AgentID: a.id, Text: "evicting memories over the cap", Err: err, Time: now})
	}
	for i := range n {
		a.remove(cands[i].e)
	}
	m.counters.evicted.Add(int64(n))
	return append(events, Event{Kind: EventEvicted, AgentID: a.id, IDs: ids, Count: n, Time: now})
}

// Consolidate consolidates every pair of near-duplicates among the
// agent's current memories (cosine ≥ Config.MergeAt, same kind), oldest
// first, as a store of a new vector does: the older is marked superseded
// by the newer. It returns how many memories were superseded
// ([EventMerged] for each). It compares every memory with the ones after
// it: quadratic in the agent's memories (about 15 s for 10,000 on two
// cores), meant for maintenance, not for every step. Errors: a bad agent
// id; the store's, wrapped.
func (m *Memory) Consolidate(ctx context.Context, agentID string) (int, error) {
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return 0, err
	}
	merged := 0
	for {
		if err := ctx.Err(); err != nil {
			return merged, err
		}
		a.mu.Lock()
		order := slices.Clone(a.rows)
		slices.SortFunc(order, func(x, y *entry) int { return CompareRecords(&x.rec, &y.rec) })
		var events []Event
		done := true
		for _, e := range order {
			if e.row < 0 || a.recs[e.rec.ID] != e {
				continue // merged away in this pass
			}
			if _, ev, ok := m.mergeLocked(ctx, a, e); ok {
				merged++
				events = append(events, ev...)
				done = false
			} else if len(ev) > 0 {
				a.mu.Unlock()
				m.emit(ev...)
				return merged, fmt.Errorf("memory: consolidating %s: %w", agentID, ev[0].Err)
			}
		}
		a.mu.Unlock()
		m.emit(events...)
		if done {
			return merged, nil
		}
	}
}
