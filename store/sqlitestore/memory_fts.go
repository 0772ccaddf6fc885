package sqlitestore

import (
	"context"
	"strings"

	"github.com/existence-loop/sdk/memory"
)

// The store is a [memory.Searcher]: memories_fts is an FTS5 index of the
// memories' texts (schema version 6; Porter stemmer over unicode61
// tokens), and a search ranks by FTS5's bm25() (k1 = 1.2, b = 0.75), its
// statistics taken over every agent's memories in the file.
var _ memory.Searcher = (*Store)(nil)

// SearchMemories implements [memory.Searcher]: the query's words without
// English stop words ([memory.QueryWords]), any of them (OR), ranked by
// bm25(); the score is -bm25(), higher is better.
func (s *Store) SearchMemories(ctx context.Context, agentID, text string, limit int) ([]memory.Hit, error) {
	if err := memory.CheckSearch(agentID, limit); err != nil {
		return nil, err
	}
	if err := s.memStart(ctx, agentID); err != nil {
		return nil, err
	}
	words := memory.QueryWords(text)
	if len(words) == 0 {
		return []memory.Hit{}, nil
	}
	match := `"` + strings.Join(words, `" OR "`) + `"` // words are letters and digits only
	rows, err := s.rdb.QueryContext(ctx, `SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.agent_id = ? ORDER BY score DESC, m.id LIMIT ?`, match, agentID, limit)
	if err != nil {
		return nil, s.memErr(ctx, "searching", agentID, err)
	}
	defer rows.Close()
	out := []memory.Hit{}
	for rows.Next() {
		var h memory.Hit
		if err := rows.Scan(&h.ID, &h.Score); err != nil {
			return nil, s.memErr(ctx, "searching", agentID, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, s.memErr(ctx, "searching", agentID, err)
	}
	return out, nil
}

// nullString stores "" as NULL.
func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}
