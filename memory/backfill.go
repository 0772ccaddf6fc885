package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/internal/backoff"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// backfill runs the background embedding of pending memories: one attempt
// at a time, on the clock's timers, with exponential backoff after a
// failure.
type backfill struct {
	mu      sync.Mutex
	stop    func() bool // the scheduled attempt's timer; nil when none
	due     time.Time
	gen     int // the scheduled timer's generation
	running bool
	again   bool // a schedule came in while an attempt ran
	backoff time.Duration
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func (b *backfill) init() { b.ctx, b.cancel = context.WithCancel(context.Background()) }

// schedule asks for an attempt after d (at once for 0), unless one is
// already due as soon or the backfill is off.
func (b *backfill) schedule(m *Memory, d time.Duration) {
	if m.cfg.NoBackfill || m.cfg.Embedder == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if b.running {
		if d == 0 {
			b.again = true // the running attempt goes on with it
			return
		}
	}
	due := m.cfg.Clock.Now().Add(d)
	if b.stop != nil {
		if !due.Before(b.due) {
			return
		}
		b.stop()
		b.stop = nil
	}
	b.gen++
	gen := b.gen
	b.due = due
	b.wg.Add(1)
	stop := m.cfg.Clock.AfterFunc(d, func() {
		defer b.wg.Done()
		b.mu.Lock()
		if b.gen == gen {
			b.stop = nil
		}
		if b.closed || b.running {
			b.mu.Unlock()
			return
		}
		b.running, b.again = true, false
		b.mu.Unlock()
		m.attempt()
	})
	b.stop = func() bool {
		if stop() {
			b.wg.Done() // the call will never come
			return true
		}
		return false
	}
}

// attempt embeds every pending memory of the cached agents, then either
// schedules the next attempt after the backoff (a failure), goes on with
// memories that became pending meanwhile, or resets the backoff.
func (m *Memory) attempt() {
	b := &m.bf
	var (
		failed error
		agent  string
	)
	for _, a := range m.loaded() {
		if _, err := m.Backfill(b.ctx, a.id); err != nil {
			failed, agent = err, a.id // the embedder or the store: every agent would wait on it
			break
		}
	}
	b.mu.Lock()
	b.running = false
	again := b.again
	b.again = false
	if b.closed {
		b.mu.Unlock()
		return
	}
	var wait time.Duration
	if failed != nil {
		b.backoff = backoff.Next(b.backoff, m.cfg.MinBackoff, m.cfg.MaxBackoff)
		wait = b.backoff
		if se, ok := errors.AsType[llm.StatusError](failed); ok && se.RetryAfter > wait {
			wait = min(se.RetryAfter, m.cfg.MaxBackoff)
		}
	} else {
		b.backoff = 0
	}
	b.mu.Unlock()
	switch {
	case failed != nil:
		m.counters.backfillFailures.Add(1)
		b.schedule(m, wait)
		cause := middleware.Classify(failed)
		if errors.Is(failed, ErrSpace) {
			cause = "space"
		}
		m.emit(Event{Kind: EventBackfillFailed, AgentID: agent, Cause: cause, Err: failed, Retry: wait, Time: m.now()})
	case again:
		b.schedule(m, 0)
	}
}

// close stops the timer and waits for an attempt in progress.
func (b *backfill) close() {
	b.mu.Lock()
	b.closed = true
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

// succeeded closes the circuit breaker: the embedder answered.
func (b *backfill) succeeded() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backoff = 0
}

// failing reports whether the embedder failed and the backfill has not
// succeeded since: stores and recalls then skip the embedder (a circuit
// breaker), so that a down or slow embedder costs one timeout, not one
// per memory.
func (b *backfill) failing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.backoff > 0
}

// wait is how long a new pending memory waits for the backfill after the
// embedder failed: the current backoff, at least Config.MinBackoff. The
// failure counts as the first of a backoff.
func (b *backfill) wait(m *Memory) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backoff = max(b.backoff, m.cfg.MinBackoff)
	return b.backoff
}

// Backfill embeds the agent's pending memories now, in batches of
// Config.Batch, and returns how many it embedded ([EventEmbedded] per
// batch). Memories in another space than the agent's (left by an
// interrupted reembed) are embedded again. It does nothing when there is
// no embedder, and for an agent whose space is not the embedder's
// ([Memory.Reembed] moves it). A batch the embedder fails stops it: the
// error (llm's classes, wrapped) is returned with the count so far; the
// background backfill reports it as an [EventBackfillFailed] and tries
// again after its backoff. A new vector may merge into a near-duplicate
// ([EventMerged]).
func (m *Memory) Backfill(ctx context.Context, agentID string) (int, error) {
	emb := m.cfg.Embedder
	if emb == nil {
		return 0, nil
	}
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		a.mu.Lock()
		if !a.space.IsZero() && a.space.Model != emb.Model() {
			a.mu.Unlock()
			return total, nil // another space: a reembed's job
		}
		var batch []*entry
		for _, e := range a.recs {
			if e.row < 0 {
				batch = append(batch, e)
			}
		}
		slices.SortFunc(batch, func(x, y *entry) int { return CompareRecords(&x.rec, &y.rec) })
		batch = batch[:min(len(batch), m.cfg.Batch)]
		texts := make([]string, len(batch))
		for i, e := range batch {
			texts[i] = e.rec.Text
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return total, nil
		}

		vecs, err := m.embedBatch(ctx, texts)
		now := m.now()
		if err != nil {
			if ctx.Err() != nil {
				return total, ctx.Err()
			}
			return total, fmt.Errorf("memory: backfill of %s: %w", agentID, err)
		}
		m.bf.succeeded()

		a.mu.Lock()
		space := Space{Model: emb.Model(), Dimensions: len(vecs[0])}
		if !a.space.IsZero() && a.space != space {
			a.mu.Unlock()
			return total, &SpaceError{AgentID: agentID, Memories: a.space, Query: space}
		}
		var set []Record
		var fresh []*entry
		for i, e := range batch {
			if a.recs[e.rec.ID] != e || e.row >= 0 {
				continue // forgotten, or embedded meanwhile
			}
			set = append(set, Record{ID: e.rec.ID, Model: space.Model, Dimensions: space.Dimensions, Vector: vecs[i]})
			fresh = append(fresh, e)
		}
		if err := m.cfg.Store.SetVectors(ctx, agentID, set); err != nil {
			a.mu.Unlock()
			return total, fmt.Errorf("memory: backfill of %s: saving vectors: %w", agentID, err)
		}
		var events []Event
		for i, e := range fresh {
			a.setVector(e, space, set[i].Vector)
		}
		for _, e := range fresh {
			if a.recs[e.rec.ID] == e && e.row >= 0 {
				if _, ev, ok := m.mergeLocked(ctx, a, e); ok || len(ev) > 0 {
					events = append(events, ev...)
				}
			}
		}
		a.mu.Unlock()
		total += len(fresh)
		m.counters.embedded.Add(int64(len(fresh)))
		m.emit(append([]Event{{Kind: EventEmbedded, AgentID: agentID, Count: len(fresh), Space: space, Time: now}}, events...)...)
	}
}

// embedBatch embeds texts within Config.EmbedTimeout and normalises the
// vectors, which must all have one length.
func (m *Memory) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.EmbedTimeout)
	defer cancel()
	emb := m.cfg.Embedder
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if _, err := llm.CheckEmbeddings("memory", emb.Model(), vecs, len(texts), 0); err != nil {
		return nil, err
	}
	for i, v := range vecs {
		if vecs[i], err = Normalize(v); err != nil {
			return nil, fmt.Errorf("memory: embedding %d of %s: %w", i, emb.Model(), err)
		}
	}
	return vecs, nil
}

// Reembed moves the agent's memories to the configured embedder's space:
// every memory is embedded again (in batches of Config.Batch), and only
// when all succeeded are the vectors written, in one SetVectors call, and
// the agent's space switched ([EventReembedded]). A failure changes
// nothing. It returns how many memories were embedded. The agent's
// near-duplicates are not merged here: [Memory.Consolidate] does that.
// Errors: no embedder; the embedder's (llm's classes, wrapped); the
// store's.
func (m *Memory) Reembed(ctx context.Context, agentID string) (int, error) {
	emb := m.cfg.Embedder
	if emb == nil {
		return 0, errors.New("memory: reembed needs an embedder")
	}
	a, err := m.agent(ctx, agentID)
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	entries := make([]*entry, 0, len(a.recs))
	for _, e := range a.recs {
		entries = append(entries, e)
	}
	a.mu.Unlock()
	slices.SortFunc(entries, func(x, y *entry) int { return CompareRecords(&x.rec, &y.rec) })
	vecs := make([][]float32, 0, len(entries))
	for _, b := range llm.Batches(len(entries), m.cfg.Batch) {
		texts := make([]string, 0, b[1]-b[0])
		for _, e := range entries[b[0]:b[1]] {
			texts = append(texts, e.rec.Text)
		}
		v, err := m.embedBatch(ctx, texts)
		if err != nil {
			return 0, fmt.Errorf("memory: reembed of %s with %s: %w", agentID, emb.Model(), err)
		}
		if len(vecs) > 0 && len(v[0]) != len(vecs[0]) {
			return 0, fmt.Errorf("memory: reembed of %s: %s changed dimensions from %d to %d", agentID, emb.Model(), len(vecs[0]), len(v[0]))
		}
		vecs = append(vecs, v...)
	}
	if len(entries) == 0 {
		return 0, nil
	}
	space := Space{Model: emb.Model(), Dimensions: len(vecs[0])}
	a.mu.Lock()
	var set []Record
	for i, e := range entries {
		if a.recs[e.rec.ID] == e {
			set = append(set, Record{ID: e.rec.ID, Model: space.Model, Dimensions: space.Dimensions, Vector: vecs[i]})
		}
	}
	if err := m.cfg.Store.SetVectors(ctx, agentID, set); err != nil {
		a.mu.Unlock()
		return 0, fmt.Errorf("memory: reembed of %s: saving vectors: %w", agentID, err)
	}
	recs := make([]Record, 0, len(a.recs))
	byID := make(map[string][]float32, len(set))
	for _, r := range set {
		byID[r.ID] = r.Vector
	}
	for _, e := range a.recs {
		r := e.rec
		if v, ok := byID[r.ID]; ok {
			r.Model, r.Dimensions, r.Vector = space.Model, space.Dimensions, v
		} else {
			r = a.record(e) // stored meanwhile: as it is
		}
		recs = append(recs, r)
	}
	a.load(recs, space)
	a.mu.Unlock()
	m.counters.embedded.Add(int64(len(set)))
	m.emit(Event{Kind: EventReembedded, AgentID: agentID, Count: len(set), Space: space, Time: m.now()})
	return len(set), nil
}
