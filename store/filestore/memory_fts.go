package filestore

import (
	"context"

	"github.com/existence-loop/sdk/memory"
)

// The store is a [memory.Searcher]: each agent's memory log has an
// in-process BM25 index of its texts ([memory.Index]), built from the
// log's index on the first search and kept up to date by this store's
// writes; a log another process changed is replayed and its index built
// again.
var _ memory.Searcher = (*Store)(nil)

// SearchMemories implements [memory.Searcher] with a [memory.Index].
func (f *Store) SearchMemories(ctx context.Context, agentID, text string, limit int) ([]memory.Hit, error) {
	if err := memory.CheckSearch(agentID, limit); err != nil {
		return nil, err
	}
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if l.lex == nil {
		x := memory.NewIndex()
		for id, e := range l.index {
			x.Add(id, e.rec.Text)
		}
		l.lex = x
	}
	hits := l.lex.Search(text, limit)
	if hits == nil {
		hits = []memory.Hit{}
	}
	return hits, nil
}

// sameKeys reports whether two indexes hold the same memory ids with the
// same texts: a replay that changed nothing the lexical index holds.
func sameKeys(a, b map[string]*memEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for id, e := range a {
		o, ok := b[id]
		if !ok || o.rec.Text != e.rec.Text {
			return false
		}
	}
	return true
}
