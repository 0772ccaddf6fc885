package pgstore

import (
	"context"
	"strings"

	"github.com/existence-loop/sdk/memory"
)

// The store is a [memory.Searcher]: existence_memories.text_search is the
// text's tsvector under the 'english' configuration (schema version 5,
// a generated column with a GIN index), and a search ranks by
// ts_rank_cd (cover density; no extension needed).
var _ memory.Searcher = (*Store)(nil)

// SearchMemories implements [memory.Searcher]: the query's words without
// English stop words ([memory.QueryWords]), any of them (an OR tsquery
// under 'english'), ranked by ts_rank_cd with normalisation 1 (divided
// by 1 + the log of the text's length), then by id.
func (s *Store) SearchMemories(ctx context.Context, agentID, text string, limit int) ([]memory.Hit, error) {
	if err := memory.CheckSearch(agentID, limit); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	words := memory.QueryWords(text)
	if len(words) == 0 {
		return []memory.Hit{}, nil
	}
	query := strings.Join(words, " | ") // words are letters and digits only
	rows, err := s.pool.Query(ctx, `SELECT id, ts_rank_cd(text_search, q, 1) AS score
		FROM existence_memories, to_tsquery('english'::regconfig, $2) AS q
		WHERE agent_id = $1 AND text_search @@ q ORDER BY score DESC, id LIMIT $3`, agentID, query, limit)
	if err != nil {
		return nil, memErr(ctx, "searching", agentID, err)
	}
	defer rows.Close()
	out := []memory.Hit{}
	for rows.Next() {
		var (
			h     memory.Hit
			score float32
		)
		if err := rows.Scan(&h.ID, &score); err != nil {
			return nil, memErr(ctx, "searching", agentID, err)
		}
		h.Score = float64(score)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, memErr(ctx, "searching", agentID, err)
	}
	return out, nil
}

// nullText stores "" as NULL.
func nullText(v string) any {
	if v == "" {
		return nil
	}
	return v
}
