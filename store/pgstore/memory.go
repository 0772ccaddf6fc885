package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// The store is also a [memory.Store], without the pgvector extension:
// the agents' long-term memories are rows of existence_memories (schema
// version 3), one per memory, unique by agent and the SHA-256 of the text
// (the text itself is compared too); vectors are little-endian float32
// bytea ([memory.EncodeVector]), NULL while pending, and times
// timestamptz (microseconds). Recall needs no index in the database: the
// process that holds an agent's lease is its only writer, and the
// memory.Memory there caches the agent's vectors and scans them itself.
// Memory writes are not fenced by the lease's epoch (a process that lost
// an agent's lease should drop its memory cache, as the existence runner
// does); states are.
var (
	_ memory.Store      = (*Store)(nil)
	_ memory.BatchAdder = (*Store)(nil)
)

// memorySelect reads a memory row, in [scanMemory]'s order.
const memorySelect = `SELECT id, text, kind, importance, important, created, last_access, access_count, model, dimensions, vector, fact, superseded_by FROM existence_memories `

// scanMemory reads one existence_memories row.
func scanMemory(agentID string, row pgx.Row) (memory.Record, error) {
	var (
		r     memory.Record
		kind  string
		model *string
		dims  *int32
		vec   []byte
		fact  *string
		sup   *string
	)
	if err := row.Scan(&r.ID, &r.Text, &kind, &r.Importance, &r.Important, &r.Created, &r.LastAccess, &r.AccessCount, &model, &dims, &vec, &fact, &sup); err != nil {
		return r, err
	}
	if fact != nil {
		r.Fact = *fact
	}
	if sup != nil {
		r.SupersededBy = *sup
	}
	r.AgentID, r.Kind = agentID, memory.Kind(kind)
	r.Created, r.LastAccess = r.Created.UTC(), r.LastAccess.UTC()
	if model != nil {
		r.Model = *model
	}
	if dims != nil {
		r.Dimensions = int(*dims)
	}
	v, err := memory.DecodeVector(vec)
	if err != nil {
		return r, &identity.CorruptError{Kind: "memory row", Path: fmt.Sprintf("existence_memories[%s/%s]", agentID, r.ID), Reason: err.Error(), Err: err}
	}
	r.Vector = v
	return r, nil
}

// vectorArgs gives the model, dimensions and vector columns of r: NULLs
// while it is pending.
func vectorArgs(r *memory.Record) (any, any, any) {
	if r.Pending() {
		return nil, nil, nil
	}
	return r.Model, r.Dimensions, memory.EncodeVector(r.Vector)
}

func textSum(text string) []byte {
	s := sha256.Sum256([]byte(text))
	return s[:]
}

// memErr wraps a database error of a memory operation.
func memErr(ctx context.Context, op, agentID string, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("pgstore: %s memories of %s: %w", op, agentID, err)
}

// AddMemory implements [memory.Store]: a duplicate check and the write in
// one transaction; a concurrent store of the same text is seen by the
// unique index and merged.
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

// AddMemories implements [memory.BatchAdder]: every record as
// [Store.AddMemory] stores it, all in one transaction, one commit (a
// refused record stores none).
func (s *Store) AddMemories(ctx context.Context, recs []memory.Record) ([]memory.Added, error) {
	if err := memory.ValidateBatch(recs); err != nil {
		return nil, err
	}
	return s.addMemories(ctx, recs)
}

// addMemories stores recs, which are valid, in one transaction.
func (s *Store) addMemories(ctx context.Context, recs []memory.Record) ([]memory.Added, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return []memory.Added{}, nil
	}
	out := make([]memory.Added, len(recs))
	agent := recs[0].AgentID
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for i := range recs {
			agent = recs[i].AgentID
			got, dup, err := addOne(ctx, tx, recs[i])
			if err != nil {
				return err
			}
			out[i] = memory.Added{Stored: got, Dup: dup}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, memory.ErrInvalid) {
			return nil, err
		}
		return nil, memErr(ctx, "storing", agent, err)
	}
	return out, nil
}

// addOne stores r, which is valid, in tx: merged into the agent's memory
// of the same text, or inserted.
func addOne(ctx context.Context, tx pgx.Tx, r memory.Record) (memory.Record, bool, error) {
	r = r.Clone()
	r.Created, r.LastAccess = r.Created.UTC(), r.LastAccess.UTC()
	sum := textSum(r.Text)
	for range 2 { // a concurrent insert of the text: merge into it
		old, err := scanMemory(r.AgentID, tx.QueryRow(ctx, memorySelect+`WHERE agent_id = $1 AND text_sha256 = $2 AND text = $3 FOR UPDATE`, r.AgentID, sum, r.Text))
		switch {
		case err == nil:
			m := memory.Merge(old, r)
			model, dims, vec := vectorArgs(&m)
			if _, err := tx.Exec(ctx, `UPDATE existence_memories SET importance = $3, important = $4, last_access = $5, access_count = $6,
				model = $7, dimensions = $8, vector = $9, fact = $10 WHERE agent_id = $1 AND id = $2`,
				r.AgentID, m.ID, m.Importance, m.Important, m.LastAccess, m.AccessCount, model, dims, vec, nullText(m.Fact)); err != nil {
				return memory.Record{}, false, err
			}
			return m, true, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return memory.Record{}, false, err
		}
		model, dims, vec := vectorArgs(&r)
		tag, err := tx.Exec(ctx, `INSERT INTO existence_memories (agent_id, id, text, text_sha256, kind, importance, important,
			created, last_access, access_count, model, dimensions, vector, fact, superseded_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT DO NOTHING`,
			r.AgentID, r.ID, r.Text, sum, string(r.Kind), r.Importance, r.Important, r.Created, r.LastAccess, r.AccessCount, model, dims, vec,
			nullText(r.Fact), nullText(r.SupersededBy))
		if err != nil {
			return memory.Record{}, false, err
		}
		if tag.RowsAffected() == 1 {
			return r, false, nil
		}
		var sameText bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM existence_memories WHERE agent_id = $1 AND text_sha256 = $2 AND text = $3)`,
			r.AgentID, sum, r.Text).Scan(&sameText); err != nil {
			return memory.Record{}, false, err
		}
		if !sameText {
			return memory.Record{}, false, fmt.Errorf("%w: agent %s already has a memory %s with another text", memory.ErrInvalid, r.AgentID, r.ID)
		}
	}
	return memory.Record{}, false, errors.New("the text was inserted and deleted concurrently; try again")
}

// UpdateMemories implements [memory.Store]: one batch in one transaction.
func (s *Store) UpdateMemories(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckUpdate(agentID, &recs[i]); err != nil {
			return err
		}
	}
	return s.memBatch(ctx, "updating", agentID, func(b *pgx.Batch) {
		for _, r := range recs {
			b.Queue(`UPDATE existence_memories SET kind = $3, importance = $4, important = $5, last_access = $6, access_count = $7, superseded_by = $8
				WHERE agent_id = $1 AND id = $2`, agentID, r.ID, string(r.Kind), r.Importance, r.Important, r.LastAccess.UTC(), r.AccessCount, nullText(r.SupersededBy))
		}
	})
}

// SetVectors implements [memory.Store]: one batch in one transaction.
func (s *Store) SetVectors(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckVector(agentID, &recs[i]); err != nil {
			return err
		}
	}
	return s.memBatch(ctx, "embedding", agentID, func(b *pgx.Batch) {
		for i := range recs {
			model, dims, vec := vectorArgs(&recs[i])
			b.Queue(`UPDATE existence_memories SET model = $3, dimensions = $4, vector = $5 WHERE agent_id = $1 AND id = $2`,
				agentID, recs[i].ID, model, dims, vec)
		}
	})
}

// memBatch sends the statements fill queues in one transaction.
func (s *Store) memBatch(ctx context.Context, op, agentID string, fill func(b *pgx.Batch)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return err
	}
	b := &pgx.Batch{}
	fill(b)
	if b.Len() == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return memErr(ctx, op, agentID, err)
	}
	return nil
}

// DeleteMemories implements [memory.Store].
func (s *Store) DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM existence_memories WHERE agent_id = $1 AND id = ANY($2)`, agentID, ids)
	if err != nil {
		return 0, memErr(ctx, "deleting", agentID, err)
	}
	return int(tag.RowsAffected()), nil
}

// Memories implements [memory.Store].
func (s *Store) Memories(ctx context.Context, agentID string) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, memorySelect+`WHERE agent_id = $1 ORDER BY created, id`, agentID)
	if err != nil {
		return nil, memErr(ctx, "reading", agentID, err)
	}
	defer rows.Close()
	out := []memory.Record{}
	for rows.Next() {
		r, err := scanMemory(agentID, rows)
		if err != nil {
			if errors.Is(err, identity.ErrCorrupt) {
				return nil, err
			}
			return nil, memErr(ctx, "reading", agentID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, memErr(ctx, "reading", agentID, err)
	}
	return out, nil
}

// CountMemories implements [memory.Store]: counted by the database.
func (s *Store) CountMemories(ctx context.Context, agentID string) (memory.Counts, error) {
	if err := ctx.Err(); err != nil {
		return memory.Counts{}, err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return memory.Counts{}, err
	}
	rows, err := s.pool.Query(ctx, `SELECT model, dimensions, count(*) FROM existence_memories WHERE agent_id = $1 GROUP BY model, dimensions`, agentID)
	if err != nil {
		return memory.Counts{}, memErr(ctx, "counting", agentID, err)
	}
	defer rows.Close()
	var c memory.Counts
	for rows.Next() {
		var (
			model *string
			dims  *int32
			n     int
		)
		if err := rows.Scan(&model, &dims, &n); err != nil {
			return memory.Counts{}, memErr(ctx, "counting", agentID, err)
		}
		c.Memories += n
		if model == nil {
			c.Pending += n
			continue
		}
		sp := memory.Space{Model: *model}
		if dims != nil {
			sp.Dimensions = int(*dims)
		}
		c.Spaces = append(c.Spaces, memory.SpaceCount{Space: sp, Count: n})
	}
	if err := rows.Err(); err != nil {
		return memory.Counts{}, memErr(ctx, "counting", agentID, err)
	}
	memory.SortSpaces(c.Spaces)
	return c, nil
}
