package storespec

import (
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

var (
	_ identity.Document = (*filestore.Document)(nil)
	_ identity.Document = (*sqlitestore.Document)(nil)
	_ identity.Document = (*pgstore.Document)(nil)
)

// SharedSlots returns the shared board of slots kept where store keeps
// shared documents (the document [identity.SharedSlotsDocument]): the
// file slots.shared.json of a directory store, the documents table of a
// SQLite or PostgreSQL store opened by [Open], so that every process using
// the store sees one board. ok is false, and nil is returned, for any
// other store (an in-memory or dry-run store): the caller then keeps a
// board in memory (identity.NewMemoryDocument).
func SharedSlots(store identity.Store, opts identity.BoardOptions) (b *identity.SharedBoard, ok bool) {
	var doc identity.Document
	switch s := store.(type) {
	case *filestore.Store:
		doc = s.Document(identity.SharedSlotsDocument)
	case *sqlitestore.Store:
		doc = s.Document(identity.SharedSlotsDocument)
	case *pgstore.Store:
		doc = s.Document(identity.SharedSlotsDocument)
	default:
		return nil, false
	}
	return identity.NewSharedBoard(doc, opts), true
}
