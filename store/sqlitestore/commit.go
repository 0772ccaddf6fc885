package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// saveReq is one Save waiting for a group commit.
type saveReq struct {
	ctx  context.Context
	enc  *encoded
	base *cache // what the store believes is stored (never nil)
	done chan saveRes
}

type saveRes struct {
	c   *cache
	err error
}

// writer is the group-commit loop: it takes the first waiting save, every
// other save already waiting (up to Options.MaxBatch), writes them in one
// transaction (each in its own savepoint, so that one failing save does
// not fail the others), commits (one fsync of the WAL), and only then
// answers each caller.
func (s *Store) writer() {
	defer s.done.Done()
	batch := make([]*saveReq, 0, s.opts.MaxBatch)
	for {
		var first *saveReq
		select {
		case first = <-s.reqs:
		case <-s.quit:
			// Answer the saves queued before Close.
			for {
				select {
				case r := <-s.reqs:
					s.commit([]*saveReq{r})
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.commit(batch)
	}
}

// commit writes batch in one transaction and answers every request.
func (s *Store) commit(batch []*saveReq) {
	ctx := context.Background()
	results := make([]saveRes, len(batch))
	fail := func(err error) {
		for i, r := range batch {
			if results[i].err == nil {
				results[i].err = err
			}
			r.done <- saveRes{err: results[i].err}
		}
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("sqlitestore: %s: begin: %w", s.path, err))
		return
	}
	st, err := s.prepare(ctx, tx)
	if err != nil {
		tx.Rollback()
		fail(err)
		return
	}
	written := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i].err = err // not written: nothing stored
			continue
		}
		if _, err := st.savepoint.ExecContext(ctx); err != nil {
			results[i].err = err
			continue
		}
		c, err := s.write(ctx, st, r)
		if err != nil {
			results[i].err = fmt.Errorf("sqlitestore: saving %s: %w", s.rowName(r.enc.id), err)
			if _, rerr := st.rollbackTo.ExecContext(ctx); rerr != nil {
				tx.Rollback()
				fail(rerr)
				return
			}
		} else {
			results[i].c = c
			written++
		}
		if _, err := st.release.ExecContext(ctx); err != nil {
			tx.Rollback()
			fail(err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("sqlitestore: %s: commit: %w", s.path, err))
		return
	}
	s.nCommits.Add(1)
	s.nSaves.Add(int64(written))
	for i, r := range batch {
		r.done <- results[i]
	}
}

// stmts are the statements of one write transaction.
type stmts struct {
	savepoint, rollbackTo, release        *sql.Stmt
	version, upsert                       *sql.Stmt
	delGoals, delDiscoveries, delMessages *sql.Stmt
	delGoal, delDiscovery, delMessage     *sql.Stmt
	putGoal, putDiscovery, putMessage     *sql.Stmt
}

// prepareAll prepares the write statements on the writer's one
// connection (at Open, before any transaction holds it).
func (s *Store) prepareAll(ctx context.Context) error {
	var perr error
	p := func(q string) *sql.Stmt {
		if perr != nil {
			return nil
		}
		st, err := s.wdb.PrepareContext(ctx, q)
		if err != nil {
			perr = fmt.Errorf("sqlitestore: preparing %q: %w", q, err)
		}
		return st
	}
	s.stmt = &stmts{
		savepoint:  p("SAVEPOINT save"),
		rollbackTo: p("ROLLBACK TO save"),
		release:    p("RELEASE save"),
		version:    p("SELECT version FROM agents WHERE id = ?"),
		upsert: p(`INSERT INTO agents (id, name, load, crisis_cycles, active_goal, worldview, narrative, identity, suffering, created_at, updated_at, version, last_presence, slots, extra)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, load = excluded.load, crisis_cycles = excluded.crisis_cycles,
				active_goal = excluded.active_goal, worldview = excluded.worldview, narrative = excluded.narrative,
				identity = excluded.identity, suffering = excluded.suffering, created_at = excluded.created_at,
				updated_at = excluded.updated_at, version = excluded.version, last_presence = excluded.last_presence,
				slots = excluded.slots, extra = excluded.extra`),
		delGoals:       p("DELETE FROM goals WHERE agent_id = ?"),
		delDiscoveries: p("DELETE FROM discoveries WHERE agent_id = ?"),
		delMessages:    p("DELETE FROM messages WHERE agent_id = ?"),
		delGoal:        p("DELETE FROM goals WHERE agent_id = ? AND seq = ?"),
		delDiscovery:   p("DELETE FROM discoveries WHERE agent_id = ? AND seq = ?"),
		delMessage:     p("DELETE FROM messages WHERE agent_id = ? AND box = ? AND seq = ?"),
		putGoal: p(`INSERT OR REPLACE INTO goals (agent_id, seq, goal_id, objective, status, started, ended, outcome, task_id, fallback, cause, broken_tools, artifacts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		putDiscovery: p("INSERT OR REPLACE INTO discoveries (agent_id, seq, text, source, at) VALUES (?, ?, ?, ?, ?)"),
		putMessage:   p("INSERT OR REPLACE INTO messages (agent_id, box, seq, sender, text, at) VALUES (?, ?, ?, ?, ?, ?)"),
	}
	return perr
}

// prepare returns the write statements bound to tx (they stay prepared
// on the writer's one connection).
func (s *Store) prepare(ctx context.Context, tx *sql.Tx) (*stmts, error) {
	w := s.stmt
	return &stmts{
		savepoint: tx.StmtContext(ctx, w.savepoint), rollbackTo: tx.StmtContext(ctx, w.rollbackTo), release: tx.StmtContext(ctx, w.release),
		version: tx.StmtContext(ctx, w.version), upsert: tx.StmtContext(ctx, w.upsert),
		delGoals: tx.StmtContext(ctx, w.delGoals), delDiscoveries: tx.StmtContext(ctx, w.delDiscoveries), delMessages: tx.StmtContext(ctx, w.delMessages),
		delGoal: tx.StmtContext(ctx, w.delGoal), delDiscovery: tx.StmtContext(ctx, w.delDiscovery), delMessage: tx.StmtContext(ctx, w.delMessage),
		putGoal: tx.StmtContext(ctx, w.putGoal), putDiscovery: tx.StmtContext(ctx, w.putDiscovery), putMessage: tx.StmtContext(ctx, w.putMessage),
	}, nil
}

// write writes one save inside the open transaction and returns the new
// cache of the agent.
func (s *Store) write(ctx context.Context, st *stmts, r *saveReq) (*cache, error) {
	e, id := r.enc, r.enc.id
	base := r.base
	var cur int64
	err := st.version.QueryRowContext(ctx, id).Scan(&cur)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if exists != base.exists || cur != base.version {
		// Another process wrote the agent since this store read it (or
		// the store never did): rewrite every child row.
		if exists {
			for _, d := range []*sql.Stmt{st.delGoals, st.delDiscoveries, st.delMessages} {
				if _, err := d.ExecContext(ctx, id); err != nil {
					return nil, err
				}
			}
		}
		base = &cache{}
	}
	row := e.row
	if _, err := st.upsert.ExecContext(ctx, id, row.name, row.load, row.crisis, row.activeGoal, row.worldview, row.narrative,
		row.identity, row.suffering, row.createdAt, row.updatedAt, cur+1, row.lastPresence, row.slots, row.extra); err != nil {
		return nil, err
	}
	c := &cache{exists: true, version: cur + 1}

	gp := diff(base.goals, e.goals, sameGoal)
	for _, seq := range gp.del {
		if _, err := st.delGoal.ExecContext(ctx, id, seq); err != nil {
			return nil, err
		}
	}
	for _, rows := range [][]seqd[identity.Goal]{gp.update, gp.insert} {
		for _, g := range rows {
			v := g.v
			if _, err := st.putGoal.ExecContext(ctx, id, g.seq, v.ID, v.Objective, string(v.Status), timeCol(v.Started), timeCol(v.Ended),
				v.Outcome, v.TaskID, v.Fallback, v.Cause, jsonList(v.BrokenTools), jsonList(v.Artifacts)); err != nil {
				return nil, err
			}
		}
	}
	c.goals = gp.result
	s.nRows.Add(int64(len(gp.del) + len(gp.update) + len(gp.insert)))

	dp := diff(base.discoveries, e.discoveries, sameDiscovery)
	for _, seq := range dp.del {
		if _, err := st.delDiscovery.ExecContext(ctx, id, seq); err != nil {
			return nil, err
		}
	}
	for _, rows := range [][]seqd[identity.Discovery]{dp.update, dp.insert} {
		for _, d := range rows {
			if _, err := st.putDiscovery.ExecContext(ctx, id, d.seq, d.v.Text, d.v.Source, timeCol(d.v.At)); err != nil {
				return nil, err
			}
		}
	}
	c.discoveries = dp.result
	s.nRows.Add(int64(len(dp.del) + len(dp.update) + len(dp.insert)))

	for _, box := range []string{"inbox", "host"} {
		old, cur := base.inbox, e.inbox
		if box == "host" {
			old, cur = base.host, e.host
		}
		mp := diff(old, cur, sameMessage)
		for _, seq := range mp.del {
			if _, err := st.delMessage.ExecContext(ctx, id, box, seq); err != nil {
				return nil, err
			}
		}
		for _, rows := range [][]seqd[identity.AgentMessage]{mp.update, mp.insert} {
			for _, m := range rows {
				if _, err := st.putMessage.ExecContext(ctx, id, box, m.seq, m.v.From, m.v.Text, timeCol(m.v.At)); err != nil {
					return nil, err
				}
			}
		}
		s.nRows.Add(int64(len(mp.del) + len(mp.update) + len(mp.insert)))
		if box == "host" {
			c.host = mp.result
		} else {
			c.inbox = mp.result
		}
	}
	return c, nil
}

// renewer extends the leases of the locks this store holds every
// LeaseTTL/3 until the store closes.
func (s *Store) renewer() {
	defer s.done.Done()
	t := time.NewTicker(s.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.mu.Lock()
		n := len(s.held)
		s.mu.Unlock()
		if n == 0 {
			continue
		}
		expires := s.opts.Now().Add(s.opts.LeaseTTL).UTC().Format(time.RFC3339Nano)
		if _, err := s.wdb.Exec("UPDATE locks SET expires = ? WHERE holder = ?", expires, s.holder); err != nil {
			s.log.Warn("sqlitestore: renewing lock leases", "db", s.path, "err", err)
		}
	}
}
