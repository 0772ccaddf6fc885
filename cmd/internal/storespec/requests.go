package storespec

import (
	"context"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// RequestsDocument is the name of the requests document in a database
// store (a sqlite: or postgres:// spec).
const RequestsDocument = "requests"

var (
	_ requests.Backend = (*sqlitestore.Document)(nil)
	_ requests.Backend = (*pgstore.Document)(nil)
)

// OpenRequests opens the queue of requests to the human kept in the same
// database as store's tasks: the documents table of a SQLite or
// PostgreSQL store opened by [Open]. ok is false, and nothing is opened,
// for any other store (a directory store keeps requests.json itself: use
// requests.Open on the directory). Errors: those of requests.OpenBackend.
func OpenRequests(ctx context.Context, store identity.Store, opts requests.Options) (q *requests.Queue, ok bool, err error) {
	var b requests.Backend
	switch s := store.(type) {
	case *sqlitestore.Store:
		b = s.Document(RequestsDocument)
	case *pgstore.Store:
		b = s.Document(RequestsDocument)
	default:
		return nil, false, nil
	}
	q, err = requests.OpenBackend(ctx, b, opts)
	return q, true, err
}
