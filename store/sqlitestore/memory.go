package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// The store is also a [memory.Store]: the agents' long-term memories are
// rows of the memories table (schema version 4), one per memory, unique
// by (agent_id, text); times are integer microseconds since the Unix
// epoch (UTC), vectors little-endian float32 BLOBs ([memory.EncodeVector]),
// NULL while pending. Every write is one immediate transaction on the
// writer connection (synchronous=FULL: durable when it returns); reads go
// to the read connections.
var (
	_ memory.Store      = (*Store)(nil)
	_ memory.BatchAdder = (*Store)(nil)
)

// memoryColumns are the columns of a memories row, in scan order.
const memoryColumns = `id, text, kind, importance, important, created, last_access, access_count, model, dimensions, vector, fact, superseded_by`

// micros converts a time to the stored microseconds, and back.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// scanMemory reads one memories row.
func (s *Store) scanMemory(agentID string, sc interface{ Scan(...any) error }) (memory.Record, error) {
	var (
		r               memory.Record
		important       bool
		created, access int64
		model           sql.NullString
		dims            sql.NullInt64
		vec             []byte
		fact, sup       sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.Text, &r.Kind, &r.Importance, &important, &created, &access, &r.AccessCount, &model, &dims, &vec, &fact, &sup); err != nil {
		return r, err
	}
	r.Fact, r.SupersededBy = fact.String, sup.String
	r.AgentID, r.Important = agentID, important
	r.Created, r.LastAccess = fromMicros(created), fromMicros(access)
	r.Model, r.Dimensions = model.String, int(dims.Int64)
	v, err := memory.DecodeVector(vec)
	if err != nil {
		return r, &identity.CorruptError{Kind: "memory row", Path: fmt.Sprintf("%s memories[%s/%s]", s.path, agentID, r.ID), Reason: err.Error(), Err: err}
	}
	r.Vector = v
	return r, nil
}

// nullVector gives the model, dimensions and vector columns of r: NULLs
// while it is pending.
func nullVector(r *memory.Record) (any, any, any) {
	if r.Pending() {
		return nil, nil, nil
	}
	return r.Model, r.Dimensions, memory.EncodeVector(r.Vector)
}

// memErr wraps a database error of a memory operation.
func (s *Store) memErr(ctx context.Context, op, agentID string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("sqlitestore: %s memories of %s in %s: %w", op, agentID, s.path, err)
}

// memStart checks ctx, agentID and the store.
func (s *Store) memStart(ctx context.Context, agentID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	return nil
}

// AddMemory implements [memory.Store]: the duplicate check and the write
// in one transaction.
func (s *Store) AddMemory(ctx context.Context, r memory.Record) (memory.Record, bool, error) {
	if err := r.Validate(); err != nil {
		return memory.Record{}, false, err
	}
	got, err := s.addMemories(ctx, []memory.Record{r})
	if err != nil {
		return memory.Record{}, false, err
	}
	return got[0].Stored, got[0].Dup, nil
}

// AddMemories implements [memory.BatchAdder]: every record in one
// immediate transaction, one commit (a refused record stores none).
func (s *Store) AddMemories(ctx context.Context, recs []memory.Record) ([]memory.Added, error) {
	if err := memory.ValidateBatch(recs); err != nil {
		return nil, err
	}
	return s.addMemories(ctx, recs)
}

// addMemories stores recs, which are valid, in one transaction.
func (s *Store) addMemories(ctx context.Context, recs []memory.Record) ([]memory.Added, error) {
	if len(recs) == 0 {
		return []memory.Added{}, ctx.Err()
	}
	for i := range recs {
		if err := s.memStart(ctx, recs[i].AgentID); err != nil {
			return nil, err
		}
	}
	agent := recs[0].AgentID
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.memErr(ctx, "storing", agent, err)
	}
	defer tx.Rollback()
	out := make([]memory.Added, len(recs))
	for i := range recs {
		got, dup, err := s.addOne(ctx, tx, recs[i])
		if err != nil {
			if errors.Is(err, memory.ErrInvalid) {
				return nil, err
			}
			return nil, s.memErr(ctx, "storing", recs[i].AgentID, err)
		}
		out[i] = memory.Added{Stored: got, Dup: dup}
	}
	if err := tx.Commit(); err != nil {
		return nil, s.memErr(ctx, "storing", agent, err)
	}
	return out, nil
}

// addOne stores r, which is valid, in tx: merged into the agent's memory
// of the same text, or inserted.
func (s *Store) addOne(ctx context.Context, tx *sql.Tx, r memory.Record) (memory.Record, bool, error) {
	r = r.Clone()
	r.Created, r.LastAccess = r.Created.UTC(), r.LastAccess.UTC()
	old, err := s.scanMemory(r.AgentID, tx.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE agent_id = ? AND text = ?`, r.AgentID, r.Text))
	switch {
	case err == nil:
		m := memory.Merge(old, r)
		model, dims, vec := nullVector(&m)
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET importance = ?, important = ?, last_access = ?, access_count = ?, model = ?, dimensions = ?, vector = ?, fact = ?
			WHERE agent_id = ? AND id = ?`, m.Importance, m.Important, micros(m.LastAccess), m.AccessCount, model, dims, vec, nullString(m.Fact), r.AgentID, m.ID); err != nil {
			return memory.Record{}, false, err
		}
		return m, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return memory.Record{}, false, err
	}
	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE agent_id = ? AND id = ?`, r.AgentID, r.ID).Scan(&taken); err != nil {
		return memory.Record{}, false, err
	}
	if taken > 0 {
		return memory.Record{}, false, fmt.Errorf("%w: agent %s already has a memory %s with another text", memory.ErrInvalid, r.AgentID, r.ID)
	}
	model, dims, vec := nullVector(&r)
	if _, err := tx.ExecContext(ctx, `INSERT INTO memories (agent_id, `+memoryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.AgentID, r.ID, r.Text, string(r.Kind), r.Importance, r.Important, micros(r.Created), micros(r.LastAccess), r.AccessCount, model, dims, vec,
		nullString(r.Fact), nullString(r.SupersededBy)); err != nil {
		return memory.Record{}, false, err
	}
	return r, false, nil
}

// UpdateMemories implements [memory.Store]: one transaction.
func (s *Store) UpdateMemories(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckUpdate(agentID, &recs[i]); err != nil {
			return err
		}
	}
	return s.memWrite(ctx, "updating", agentID, func(tx *sql.Tx) error {
		for _, r := range recs {
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET kind = ?, importance = ?, important = ?, last_access = ?, access_count = ?, superseded_by = ?
				WHERE agent_id = ? AND id = ?`, string(r.Kind), r.Importance, r.Important, micros(r.LastAccess), r.AccessCount, nullString(r.SupersededBy), agentID, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetVectors implements [memory.Store]: one transaction.
func (s *Store) SetVectors(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckVector(agentID, &recs[i]); err != nil {
			return err
		}
	}
	return s.memWrite(ctx, "embedding", agentID, func(tx *sql.Tx) error {
		for i := range recs {
			model, dims, vec := nullVector(&recs[i])
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET model = ?, dimensions = ?, vector = ? WHERE agent_id = ? AND id = ?`,
				model, dims, vec, agentID, recs[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteMemories implements [memory.Store]: one transaction.
func (s *Store) DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error) {
	n := 0
	err := s.memWrite(ctx, "deleting", agentID, func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE agent_id = ? AND id = ?`, agentID, id)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// memWrite runs fn in one write transaction.
func (s *Store) memWrite(ctx context.Context, op, agentID string, fn func(tx *sql.Tx) error) error {
	if err := s.memStart(ctx, agentID); err != nil {
		return err
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return s.memErr(ctx, op, agentID, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return s.memErr(ctx, op, agentID, err)
	}
	if err := tx.Commit(); err != nil {
		return s.memErr(ctx, op, agentID, err)
	}
	return nil
}

// Memories implements [memory.Store].
func (s *Store) Memories(ctx context.Context, agentID string) ([]memory.Record, error) {
	if err := s.memStart(ctx, agentID); err != nil {
		return nil, err
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE agent_id = ? ORDER BY created, id`, agentID)
	if err != nil {
		return nil, s.memErr(ctx, "reading", agentID, err)
	}
	defer rows.Close()
	out := []memory.Record{}
	for rows.Next() {
		r, err := s.scanMemory(agentID, rows)
		if err != nil {
			if errors.Is(err, identity.ErrCorrupt) {
				return nil, err
			}
			return nil, s.memErr(ctx, "reading", agentID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.memErr(ctx, "reading", agentID, err)
	}
	return out, nil
}

// CountMemories implements [memory.Store]: counted by the database.
func (s *Store) CountMemories(ctx context.Context, agentID string) (memory.Counts, error) {
	if err := s.memStart(ctx, agentID); err != nil {
		return memory.Counts{}, err
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT model, dimensions, count(*) FROM memories WHERE agent_id = ? GROUP BY model, dimensions`, agentID)
	if err != nil {
		return memory.Counts{}, s.memErr(ctx, "counting", agentID, err)
	}
	defer rows.Close()
	var c memory.Counts
	for rows.Next() {
		var (
			model sql.NullString
			dims  sql.NullInt64
			n     int
		)
		if err := rows.Scan(&model, &dims, &n); err != nil {
			return memory.Counts{}, s.memErr(ctx, "counting", agentID, err)
		}
		c.Memories += n
		if !model.Valid {
			c.Pending += n
			continue
		}
		c.Spaces = append(c.Spaces, memory.SpaceCount{Space: memory.Space{Model: model.String, Dimensions: int(dims.Int64)}, Count: n})
	}
	if err := rows.Err(); err != nil {
		return memory.Counts{}, s.memErr(ctx, "counting", agentID, err)
	}
	memory.SortSpaces(c.Spaces)
	return c, nil
}
