package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/existence-loop/sdk/identity"
)

// gatherer collects the requests of many goroutines for one flushing
// goroutine, which hands them to flush in batches of up to maxBatch: the
// group commit. A request that finds the queue empty and the previous
// batch alone is flushed at once (no wait at low load); under load (the
// previous batch held more than one request, or several are queued) the
// flusher waits until maxWait after the oldest queued request arrived, or
// until maxBatch are queued, so that a batch gathers more.
type gatherer[R any] struct {
	maxBatch int
	maxWait  time.Duration
	flush    func([]R)

	mu     sync.Mutex
	queue  []queued[R]
	busy   bool // the previous batch held more than one request
	closed bool
	wake   chan struct{} // a request arrived, or the gatherer closes
	full   chan struct{} // maxBatch requests are queued
	done   chan struct{} // the flusher returned
}

type queued[R any] struct {
	r  R
	at time.Time
}

func newGatherer[R any](maxBatch int, maxWait time.Duration, flush func([]R)) *gatherer[R] {
	g := &gatherer[R]{maxBatch: maxBatch, maxWait: maxWait, flush: flush,
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1), done: make(chan struct{})}
	go g.run()
	return g
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// add queues r and reports whether it was queued (false once closed).
func (g *gatherer[R]) add(r R) bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.queue = append(g.queue, queued[R]{r: r, at: time.Now()})
	n := len(g.queue)
	g.mu.Unlock()
	signal(g.wake)
	if n >= g.maxBatch {
		signal(g.full)
	}
	return true
}

// len returns the number of requests queued (not yet taken by a flush).
func (g *gatherer[R]) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// close flushes what is queued and stops the flusher; later adds fail.
func (g *gatherer[R]) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	signal(g.wake)
	signal(g.full)
	<-g.done
}

func (g *gatherer[R]) run() {
	defer close(g.done)
	for {
		<-g.wake
		for {
			g.mu.Lock()
			if len(g.queue) == 0 {
				closed := g.closed
				g.mu.Unlock()
				if closed {
					return
				}
				break
			}
			if g.maxWait > 0 && !g.closed && len(g.queue) < g.maxBatch && (g.busy || len(g.queue) > 1) {
				deadline := g.queue[0].at.Add(g.maxWait)
				g.mu.Unlock()
				select {
				case <-g.full: // a stale signal: the length is checked again below
				default:
				}
				if d := time.Until(deadline); d > 0 && g.len() < g.maxBatch {
					t := time.NewTimer(d)
					select {
					case <-t.C:
					case <-g.full:
					}
					t.Stop()
				}
				g.mu.Lock()
			}
			n := min(len(g.queue), g.maxBatch)
			batch := make([]R, n)
			for i := range batch {
				batch[i] = g.queue[i].r
			}
			rest := copy(g.queue, g.queue[n:])
			clear(g.queue[rest:])
			g.queue = g.queue[:rest]
			g.busy = n > 1
			g.mu.Unlock()
			g.flush(batch)
		}
	}
}

// batchContext returns the context of a statement run for many callers:
// it ends when every caller's context has ended (so that one caller giving
// up does not cancel the others' writes), or when cancel is called.
func batchContext(ctxs []context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	var live atomic.Int64
	live.Store(int64(len(ctxs)))
	stops := make([]func() bool, 0, len(ctxs))
	for _, c := range ctxs {
		stops = append(stops, context.AfterFunc(c, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// retryable reports whether err is a deadlock or serialization failure,
// after which the whole statement was rolled back and may run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// saveReq is one Save waiting for a group commit.
type saveReq struct {
	ctx     context.Context
	id      string
	epoch   int64 // the fence: the lease epoch held, or -1 for none
	doc     []byte
	sum     []byte // sha256 of doc
	updated time.Time
	ack     []int64 // messages the state now holds, acknowledged with it
	done    chan saveRes
}

// saveRes is what the group commit found for one save.
type saveRes struct {
	wrote   bool // written
	corrupt bool // refused: the stored document fails its checksum
	err     error
}

// saveBatchSQL writes many states, each only if its fence holds, and
// acknowledges the messages each written state now holds, in one
// statement (one transaction). Per agent the rules are those of a single
// save (see [Store.Save]): $2 holds each writer's lease epoch, or -1 for a
// writer that holds no lease (allowed only while nobody holds a live one).
// The lease rows are locked FOR SHARE, in agent id order (as the renewals
// lock them, so that the two cannot deadlock), so a takeover waits for the
// write and the new owner loads it. A row per agent answers whether its
// state was written and, when it was not, whether the stored document
// fails its checksum. The agent ids of one batch are distinct.
const saveBatchSQL = `
WITH req AS (
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[], $4::bytea[], $5::timestamptz[])
		AS r(agent_id, want, doc, sum, updated_at)
), fence AS (
	SELECT l.agent_id, l.epoch FROM existence_leases l JOIN req r ON r.agent_id = l.agent_id
	WHERE CASE WHEN r.want >= 0
		THEN l.epoch = r.want AND l.owner IS NOT NULL AND l.expires_at > now()
		ELSE l.owner IS NULL OR l.expires_at <= now() END
	ORDER BY l.agent_id
	FOR SHARE OF l
), up AS (
	INSERT INTO existence_states AS s (agent_id, doc, doc_version, doc_sha256, epoch, updated_at)
	SELECT r.agent_id, r.doc, $6, r.sum, f.epoch, r.updated_at FROM req r JOIN fence f ON f.agent_id = r.agent_id
	ORDER BY r.agent_id
	ON CONFLICT (agent_id) DO UPDATE
	SET doc = EXCLUDED.doc, doc_version = EXCLUDED.doc_version, doc_sha256 = EXCLUDED.doc_sha256,
	    epoch = EXCLUDED.epoch, updated_at = EXCLUDED.updated_at
	WHERE s.epoch <= EXCLUDED.epoch AND sha256(s.doc) = s.doc_sha256
	RETURNING s.agent_id
), ack AS (
	UPDATE existence_messages m SET acked_at = now(), acked_epoch = f.epoch
	FROM unnest($7::text[], $8::bigint[]) AS a(agent_id, id)
	JOIN fence f ON f.agent_id = a.agent_id
	WHERE m.id = a.id AND m.agent_id = a.agent_id AND m.acked_at IS NULL
	  AND a.agent_id IN (SELECT agent_id FROM up)
	RETURNING 1
)
SELECT r.agent_id, u.agent_id IS NOT NULL,
	u.agent_id IS NULL AND coalesce((SELECT sha256(s.doc) <> s.doc_sha256 FROM existence_states s WHERE s.agent_id = r.agent_id), false)
FROM req r LEFT JOIN up u ON u.agent_id = r.agent_id`

// flushSaves writes a batch of saves taken from the queue: those whose
// context has ended are answered with its error (nothing written); two
// saves of one agent go to successive statements, in the order they came.
func (s *Store) flushSaves(batch []*saveReq) {
	var live []*saveReq
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- saveRes{err: err}
			continue
		}
		live = append(live, r)
	}
	for len(live) > 0 {
		seen := make(map[string]bool, len(live))
		var round, later []*saveReq
		for _, r := range live {
			if seen[r.id] {
				later = append(later, r)
				continue
			}
			seen[r.id] = true
			round = append(round, r)
		}
		s.writeSaves(round)
		live = later
	}
}

// writeSaves writes saves of distinct agents in one statement and answers
// each caller. A deadlock or serialization failure (the statement was
// rolled back) is retried twice.
func (s *Store) writeSaves(reqs []*saveReq) {
	n := len(reqs)
	ids, epochs, docs, sums, updated := make([]string, n), make([]int64, n), make([][]byte, n), make([][]byte, n), make([]time.Time, n)
	var ackAgents []string
	var ackIDs []int64
	ctxs := make([]context.Context, n)
	for i, r := range reqs {
		ids[i], epochs[i], docs[i], sums[i], updated[i], ctxs[i] = r.id, r.epoch, r.doc, r.sum, r.updated, r.ctx
		for _, m := range r.ack {
			ackAgents, ackIDs = append(ackAgents, r.id), append(ackIDs, m)
		}
	}
	ctx, cancel := batchContext(ctxs)
	defer cancel()
	type row struct{ wrote, corrupt bool }
	got := make(map[string]row, n)
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		clear(got)
		var rows pgx.Rows
		rows, err = s.pool.Query(ctx, saveBatchSQL, ids, epochs, docs, sums, updated, identity.SchemaVersion, ackAgents, ackIDs)
		if err == nil {
			var id string
			var r row
			_, err = pgx.ForEachRow(rows, []any{&id, &r.wrote, &r.corrupt}, func() error {
				got[id] = r
				return nil
			})
		}
		if !retryable(err) {
			break
		}
	}
	s.count.batch(n)
	if err != nil {
		s.count.savesFailed.Add(int64(n))
		for _, r := range reqs {
			r.done <- saveRes{err: fmt.Errorf("pgstore: save %s: %w", r.id, err)}
		}
		return
	}
	for _, r := range reqs {
		res := got[r.id]
		switch {
		case res.wrote:
			s.count.saves.Add(1)
		case res.corrupt:
			s.count.savesFailed.Add(1)
		default:
			s.count.savesFenced.Add(1)
		}
		r.done <- saveRes{wrote: res.wrote, corrupt: res.corrupt}
	}
}

// probeReq is one [Queue.Next] waiting for a shared probe.
type probeReq struct {
	ctx   context.Context
	id    string
	epoch int64
	done  chan probeRes
}

type probeRes struct {
	idle bool // the fence holds and there is nothing to claim
	err  error
}

// probeSQL tells, for many agents at once, which have nothing to claim
// from the task queue while their fence holds: no task assigned to them,
// no pending task for them or for any agent, and no assigned task overdue
// (which Next would fail first). It reads only; an agent it does not find
// idle goes through Next's claiming transaction, which decides. Its last
// column says whether the queue holds no open task at all.
const probeSQL = `
WITH req AS (
	SELECT * FROM unnest($1::text[], $2::bigint[]) AS r(agent_id, want)
), open AS MATERIALIZED (
	SELECT status, agent, assigned_to, assigned FROM existence_tasks WHERE status IN ('pending', 'assigned')
), busy AS (
	SELECT EXISTS (SELECT 1 FROM open WHERE status = 'pending' AND agent = '')
	    OR EXISTS (SELECT 1 FROM open WHERE status = 'assigned' AND assigned <= now() - make_interval(secs => $3)) AS all
)
SELECT r.agent_id, NOT b.all
	AND EXISTS (SELECT 1 FROM existence_leases l WHERE l.agent_id = r.agent_id AND CASE WHEN r.want >= 0
		THEN l.epoch = r.want AND l.owner IS NOT NULL AND l.expires_at > now()
		ELSE l.owner IS NULL OR l.expires_at <= now() END)
	AND r.agent_id NOT IN (SELECT CASE WHEN status = 'assigned' THEN assigned_to ELSE agent END FROM open),
	NOT EXISTS (SELECT 1 FROM open)
FROM req r, busy b`

// flushProbes runs one probe for a batch of Next calls and answers each.
func (s *Store) flushProbes(batch []*probeReq) {
	var live []*probeReq
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- probeRes{err: err}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	ids, epochs, ctxs := make([]string, len(live)), make([]int64, len(live)), make([]context.Context, len(live))
	for i, r := range live {
		ids[i], epochs[i], ctxs[i] = r.id, r.epoch, r.ctx
	}
	ctx, cancel := batchContext(ctxs)
	defer cancel()
	idle := make(map[string]bool, len(live))
	gen, sent := s.emptyQueue.generation(), s.opts.Now()
	empty := false
	rows, err := s.pool.Query(ctx, probeSQL, ids, epochs, s.opts.TaskTimeout.Seconds())
	if err == nil {
		var id string
		var ok bool
		_, err = pgx.ForEachRow(rows, []any{&id, &ok, &empty}, func() error {
			idle[id] = idle[id] || ok
			return nil
		})
	}
	if err == nil && empty {
		s.emptyQueue.found(gen, sent.Add(emptyQueueWindow))
	}
	s.count.probeBatches.Add(1)
	for _, r := range live {
		if err != nil {
			r.done <- probeRes{err: fmt.Errorf("pgstore: next: %w", err)}
			continue
		}
		r.done <- probeRes{idle: idle[r.id]}
	}
}

// probe reports whether agentID, fenced at epoch, has nothing to claim
// from the task queue, through a probe shared with the other Next calls
// waiting (or alone, with Options.MaxBatch 1).
func (s *Store) probe(ctx context.Context, agentID string, epoch int64) (bool, error) {
	if s.emptyQueue.holds(s.opts.Now()) {
		s.count.taskQueueEmpty.Add(1)
		return true, nil
	}
	r := &probeReq{ctx: ctx, id: agentID, epoch: epoch, done: make(chan probeRes, 1)}
	if s.probes == nil {
		s.flushProbes([]*probeReq{r})
	} else if !s.probes.add(r) {
		return false, ErrClosed
	}
	res := <-r.done
	if res.err == nil && res.idle {
		s.count.taskProbes.Add(1)
	}
	return res.idle, res.err
}

// emptyQueueWindow is how long a probe's finding that the task queue holds
// no open task at all answers the Next calls of this Store without a
// statement: a task another process submits meanwhile is claimed at most
// this much later (at the agent's next cycle); one submitted, claimed or
// finished through this Store ends the window at once.
const emptyQueueWindow = 100 * time.Millisecond

// emptyCache remembers until when the task queue is known to hold no open
// task. Every change of the queue made through the Store moves its
// generation on, so that a probe sent before the change cannot vouch for
// the queue after it.
type emptyCache struct {
	mu    sync.Mutex
	gen   uint64
	until time.Time
}

// holds reports whether the queue is known empty at now.
func (c *emptyCache) holds(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Before(c.until)
}

// generation returns the generation a probe about to be sent belongs to.
func (c *emptyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// found records that a probe of generation gen found the queue empty,
// valid until until, unless the queue changed since the probe was sent.
func (c *emptyCache) found(gen uint64, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen && until.After(c.until) {
		c.until = until
	}
}

// changed forgets what is known: the queue changed through this Store.
func (c *emptyCache) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.until = time.Time{}
}
