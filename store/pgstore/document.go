package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Document is one named document kept whole in the database (the
// existence_documents table, schema version 2), such as the requests to
// the human: it satisfies existence/requests.Backend without this package
// importing it, so that the requests live in the same database as the
// agents and their tasks. Get one with [Store.Document]; it is safe for
// concurrent use, also by several processes and hosts.
type Document struct {
	s    *Store
	name string
}

// Document returns the document called name (e.g. "requests"). Nothing is
// read or written until Load or Update.
func (s *Store) Document(name string) *Document { return &Document{s: s, name: name} }

// Name names the document in errors: "postgres://HOST:PORT/DATABASE#NAME"
// (never the user or password of the connection string).
func (d *Document) Name() string {
	c := d.s.pool.Config().ConnConfig
	return fmt.Sprintf("postgres://%s/%s#%s", net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), c.Database, d.name)
}

// Load returns the document's bytes, nil when it was never stored (an
// empty row, left by an Update that wrote nothing, reads as nil too).
// Errors: ctx's error, the database's.
func (d *Document) Load(ctx context.Context) ([]byte, error) {
	var data []byte
	err := d.s.pool.QueryRow(ctx, `SELECT data FROM existence_documents WHERE name = $1`, d.name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, d.err(ctx, err)
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// Update runs fn on the document's bytes (nil when never stored) in one
// transaction holding the document's row lock (SELECT … FOR UPDATE, after
// inserting an empty row when there is none, so that two first updates
// also exclude each other), and stores what fn returns when committing.
// When fn returns nil data or an error, the transaction is rolled back and
// nothing is written. Errors: fn's, ctx's error, the database's.
func (d *Document) Update(ctx context.Context, fn func(old []byte) ([]byte, error)) error {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return d.err(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `INSERT INTO existence_documents (name, data) VALUES ($1, '') ON CONFLICT (name) DO NOTHING`, d.name); err != nil {
		return d.err(ctx, err)
	}
	var old []byte
	if err := tx.QueryRow(ctx, `SELECT data FROM existence_documents WHERE name = $1 FOR UPDATE`, d.name).Scan(&old); err != nil {
		return d.err(ctx, err)
	}
	if len(old) == 0 {
		old = nil
	}
	data, err := fn(old)
	if err != nil || data == nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE existence_documents SET data = $2, updated_at = now() WHERE name = $1`, d.name, data); err != nil {
		return d.err(ctx, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.err(ctx, err)
	}
	return nil
}

func (d *Document) err(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("pgstore: document %s: %w", d.Name(), err)
}
