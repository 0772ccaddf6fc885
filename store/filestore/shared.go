package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/internal/docfile"
)

// Document is one named document kept whole in the state directory, next
// to the agents' documents: the file "{name}.shared.json" (permission
// 0600), guarded by the advisory lock file "{name}.shared.lock", such as
// the shared board of slots (identity.SharedBoard, the document "slots").
// Its file name holds a dot, so [Store.List] never takes it for an agent.
// It is an [identity.Document]; get one with [Store.Document]. It is safe
// for concurrent use, also by several processes.
type Document struct {
	s         *Store
	name      string
	file      string // "{name}.shared.json"
	lock      *flock.Flock
	mu        sync.Mutex // serialises Update within the process
	nameError error
}

var _ identity.Document = (*Document)(nil)

// Document returns the document called name, which must be a valid agent
// id (see identity.ValidateID), e.g. "slots"; an invalid name makes every
// Load and Update fail with [identity.ErrInvalidID]. Nothing is read or
// written until Load or Update.
func (f *Store) Document(name string) *Document {
	d := &Document{s: f, name: name, file: name + ".shared.json", nameError: identity.ValidateID(name)}
	d.lock = flock.New(filepath.Join(f.dir, name+".shared.lock"), flock.SetPermissions(0o600))
	return d
}

// Name names the document in errors: its path.
func (d *Document) Name() string { return filepath.Join(d.s.dir, d.file) }

// Load returns the document's bytes, nil when the file does not exist.
// Errors: [identity.ErrInvalidID]; an error matching
// [identity.ErrTooLarge] above Options.MaxBytes; a [*identity.CorruptError]
// when the file is not a regular file or is a symlink leaving the
// directory; ctx's and I/O errors.
func (d *Document) Load(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.nameError != nil {
		return nil, d.nameError
	}
	return d.read()
}

func (d *Document) read() ([]byte, error) {
	data, err := atomicfile.ReadFile(d.s.dir, d.file, d.s.maxBytes)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s is over %d bytes (Options.MaxBytes)", identity.ErrTooLarge, d.Name(), d.s.maxBytes)
	case errors.Is(err, atomicfile.ErrNotRegular):
		return nil, &identity.CorruptError{Kind: "shared document", Path: d.Name(), Reason: "not a regular file; refused at once", Err: err}
	default:
		return nil, fmt.Errorf("identity: reading %s: %w", d.Name(), err)
	}
}

// Update runs fn on the document's bytes (nil when the file does not
// exist) while holding the document's lock file, which excludes every
// other Update in any process, and replaces the file with what fn returns,
// atomically and durably (temp file, fsync, rename, fsync of the
// directory). When fn returns nil data or an error, nothing is written.
// Waiting for the lock honours ctx. Errors: fn's; those of Load; an error
// matching [identity.ErrTooLarge] when fn's data is over Options.MaxBytes;
// ctx's and I/O errors.
func (d *Document) Update(ctx context.Context, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.nameError != nil {
		return d.nameError
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.lockFile(ctx); err != nil {
		return err
	}
	defer func() {
		if err := d.lock.Unlock(); err != nil {
			d.s.log.Error("identity: unlocking a shared document failed", "file", d.lock.Path(), "err", err)
		}
	}()
	old, err := d.read()
	if err != nil {
		return err
	}
	data, err := fn(old)
	if err != nil || data == nil {
		return err
	}
	if int64(len(data)) > d.s.maxBytes {
		return fmt.Errorf("%w: %s would be %d bytes, limit %d (Options.MaxBytes); not written", identity.ErrTooLarge, d.Name(), len(data), d.s.maxBytes)
	}
	if err := atomicfile.WriteFile(d.s.dir, d.file, data, 0o600); err != nil {
		return fmt.Errorf("identity: writing %s: %w", d.Name(), err)
	}
	return nil
}

// lockFile takes the lock file, waiting as every locked document does
// ([docfile.WaitLock]) so that waiting honours ctx.
func (d *Document) lockFile(ctx context.Context) error {
	return docfile.WaitLock(ctx, func() (bool, error) {
		ok, err := d.lock.TryLock()
		if err != nil {
			return false, fmt.Errorf("identity: locking %s: %w", d.lock.Path(), err)
		}
		return ok, nil
	})
}
