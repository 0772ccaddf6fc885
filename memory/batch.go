package memory

import (
	"context"
	"fmt"
)

// BatchAdder is a [Store] that stores many memories in one write: one
// transaction (one commit, one fsync) for the SQL stores, one lock for
// the in-process store. A bulk load such as memory/memeval's uses it
// through [AddMemories]; store/sqlitestore, store/pgstore, store/memstore
// and [MemoryStore] implement it, and store/storetest.RunMemory checks
// it (through [AddMemories]) for every store.
type BatchAdder interface {
	// AddMemories stores recs, in order, as if by [Store.AddMemory] on
	// each: a record whose text its agent already has (stored before,
	// or earlier in recs) is merged into that memory ([Merge]). It
	// returns, per record, the memory as stored and whether it was such
	// a duplicate. Every record is validated before anything is stored:
	// an invalid one refuses the call with [ErrInvalid] (naming its
	// index) and nothing changes. A record taking a known id with
	// another text is refused with [ErrInvalid] too; the SQL stores then
	// store none of recs (one transaction), the in-process store keeps
	// those before it. Records may belong to different agents.
	AddMemories(ctx context.Context, recs []Record) ([]Added, error)
}

// Added is what [BatchAdder.AddMemories] did with one record.
type Added struct {
	// Stored is the memory as stored: the record, or the memory of the
	// same text it was merged into.
	Stored Record
	// Dup says the record's text was known and it was merged.
	Dup bool
}

// AddMemories stores recs in s: in one [BatchAdder.AddMemories] when s
// implements [BatchAdder], else by [Store.AddMemory] one by one (after
// validating them all, so that an invalid record still stores nothing).
// Errors: as [BatchAdder.AddMemories]; in the one-by-one case, the
// records before a refused one stay stored.
func AddMemories(ctx context.Context, s Store, recs []Record) ([]Added, error) {
	if b, ok := s.(BatchAdder); ok {
		return b.AddMemories(ctx, recs)
	}
	if err := ValidateBatch(recs); err != nil {
		return nil, err
	}
	out := make([]Added, len(recs))
	for i := range recs {
		got, dup, err := s.AddMemory(ctx, recs[i])
		if err != nil {
			return nil, err
		}
		out[i] = Added{Stored: got, Dup: dup}
	}
	return out, nil
}

// ValidateBatch validates every record of a batch ([Record.Validate]);
// the error names the first invalid record's index and wraps
// [ErrInvalid].
func ValidateBatch(recs []Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return fmt.Errorf("record %d of %d: %w", i, len(recs), err)
		}
	}
	return nil
}
