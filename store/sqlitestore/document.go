package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Document is one named document kept whole in a [Store]'s database (the
// documents table, schema version 3), such as the requests to the human:
// it satisfies existence/requests.Backend without this package importing
// it, so that the requests live in the same database as the agents and
// their tasks. Get one with [Store.Document]; it is safe for concurrent
// use, also by several processes.
type Document struct {
	s    *Store
	name string
}

// Document returns the document called name (e.g. "requests"). Nothing is
// read or written until Load or Update.
func (s *Store) Document(name string) *Document { return &Document{s: s, name: name} }

// Name names the document in errors: "sqlite:PATH#NAME".
func (d *Document) Name() string { return "sqlite:" + d.s.path + "#" + d.name }

// Load returns the document's bytes, nil when it was never stored.
// Errors: [ErrClosed], ctx's error, the database's.
func (d *Document) Load(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.s.isClosed() {
		return nil, ErrClosed
	}
	var data []byte
	err := d.s.rdb.QueryRowContext(ctx, "SELECT data FROM documents WHERE name = ?", d.name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, d.err(ctx, err)
	}
	return data, nil
}

// Update runs fn on the document's bytes (nil when never stored) in one
// immediate write transaction, which excludes every other writer of the
// database in any process, and stores what fn returns before committing
// (synchronous=FULL: durable when Update returns). When fn returns nil
// data or an error, nothing is written. Errors: fn's, [ErrClosed], ctx's
// error, the database's.
func (d *Document) Update(ctx context.Context, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.s.isClosed() {
		return ErrClosed
	}
	tx, err := d.s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return d.err(ctx, err)
	}
	defer tx.Rollback()
	var old []byte
	err = tx.QueryRowContext(ctx, "SELECT data FROM documents WHERE name = ?", d.name).Scan(&old)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return d.err(ctx, err)
	}
	data, err := fn(old)
	if err != nil || data == nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO documents (name, data, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
		d.name, data, d.s.opts.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return d.err(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return d.err(ctx, err)
	}
	return nil
}

func (d *Document) err(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("sqlitestore: document %s: %w", d.Name(), err)
}
