package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Read statements of [Store.Load] and [Store.List], prepared once per
// Store: sent as SQL text, SQLite parsed and planned them again on every
// Load.
const (
	qAgent = `SELECT name, worldview, narrative, crisis_cycles, identity, suffering, created_at, updated_at, version, last_presence, slots, extra
		FROM agents WHERE id = ?`
	qGoals = `SELECT seq, goal_id, objective, status, started, ended, outcome, task_id, fallback, cause, broken_tools, artifacts
		FROM goals WHERE agent_id = ? ORDER BY seq`
	qDiscoveries = `SELECT seq, text, source, at FROM discoveries WHERE agent_id = ? ORDER BY seq`
	qMessages    = `SELECT box, seq, sender, text, at FROM messages WHERE agent_id = ? ORDER BY box, seq`
	qList        = `SELECT id FROM agents ORDER BY id`
)

// readStmts are the read statements, prepared once per [Store] on its
// read pool: database/sql prepares a statement on each read connection
// the first time that connection runs it, and keeps it prepared there
// until the store closes.
type readStmts struct {
	agent, goals, discoveries, messages, list *sql.Stmt
}

// prepareReads prepares the read statements on db.
func prepareReads(ctx context.Context, db *sql.DB) (*readStmts, error) {
	r := &readStmts{}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{{&r.agent, qAgent}, {&r.goals, qGoals}, {&r.discoveries, qDiscoveries}, {&r.messages, qMessages}, {&r.list, qList}} {
		st, err := db.PrepareContext(ctx, p.q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("preparing %q: %w", p.q, err), r.close())
		}
		*p.dst = st
	}
	return r, nil
}

// close closes the statements prepared so far.
func (r *readStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{r.agent, r.goals, r.discoveries, r.messages, r.list} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// close closes the write statements.
func (w *stmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.savepoint, w.rollbackTo, w.release, w.version, w.upsert,
		w.delGoals, w.delDiscoveries, w.delMessages, w.delGoal, w.delDiscovery, w.delMessage,
		w.putGoal, w.putDiscovery, w.putMessage} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
