package requests

import (
	"context"
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/identity"
)

// Backend keeps the requests document (the bytes of requests.json: the same
// JSON format, schema version and size limit) in a store instead of a
// state directory, so that the requests live in the same store as the
// tasks, in one database: it is the store's locked document,
// [identity.Document]. store/sqlitestore and store/pgstore (and
// store/filestore) provide one with their Document method; this package
// imports none of them.
type Backend = identity.Document

// OpenBackend opens the queue kept by b. It reads the document once to
// check it: a document that cannot be used gives a [*identity.CorruptError] (its
// Path is b.Name()) and is left untouched, as with [Open]. No document is
// an empty queue. Errors: [ErrInvalid] for a nil b, [identity.ErrCorrupt], ctx's
// error, b's.
func OpenBackend(ctx context.Context, b Backend, opts Options) (*Queue, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil backend", ErrInvalid)
	}
	q := newQueue(opts, nil)
	q.backend = b
	if _, err := q.loadBackend(ctx); err != nil {
		return nil, err
	}
	return q, nil
}

// decodeBackend decodes data read from q.backend, with [Open]'s rules.
func (q *Queue) decodeBackend(data []byte) (*document, error) {
	if len(data) == 0 {
		return format.New(), nil
	}
	if len(data) > MaxFileSize {
		return nil, &identity.CorruptError{Kind: "requests file", Path: q.backend.Name(), Reason: fmt.Sprintf("larger than %d bytes", MaxFileSize)}
	}
	return decode(data, q.backend.Name())
}

// loadBackend returns the current document of q.backend.
func (q *Queue) loadBackend(ctx context.Context) (*document, error) {
	data, err := q.backend.Load(ctx)
	if err != nil {
		return nil, err
	}
	return q.decodeBackend(data)
}

// updateBackend is [Queue.update] for a queue kept by q.backend: the
// in-process lock, then the backend's write transaction.
func (q *Queue) updateBackend(ctx context.Context, fn func(d *document) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case q.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-q.sem }()
	return q.backend.Update(ctx, func(old []byte) ([]byte, error) {
		d, err := q.decodeBackend(old)
		if err != nil {
			return nil, err
		}
		changed, err := fn(d)
		if err != nil || !changed {
			return nil, err
		}
		data, err := encode(d)
		if err != nil {
			return nil, err
		}
		if len(data) > MaxFileSize {
			return nil, fmt.Errorf("%w: %s would take %d bytes, limit %d", ErrFull, q.backend.Name(), len(data), MaxFileSize)
		}
		if len(data) == 0 {
			return nil, errors.New("requests: empty document")
		}
		return data, nil
	})
}
