package docfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/internal/backoff"
)

// Config describes a [File].
type Config[D, T any] struct {
	// Dir is the state directory; Name the document's file name in it
	// ("tasks.json") and LockName the advisory lock file's ("tasks.lock").
	Dir, Name, LockName string
	// Prefix starts error and log messages ("taskqueue").
	Prefix string
	// Format is the document's file format.
	Format *Format[D, T]
	// DescribeIrregular makes the reason for a document that is not a
	// regular file name what it is ("a FIFO, not a regular file; refused
	// at once") instead of just "not a regular file".
	DescribeIrregular bool
}

// File is a document kept in Dir/Name (permission 0600) and guarded by the
// cross-process advisory lock Dir/LockName. It holds no file open between
// calls. Create it with [NewFile].
type File[D, T any] struct {
	cfg  Config[D, T]
	path string
	fl   *flock.Flock
}

// NewFile returns the File cfg describes; it touches nothing on disk
// (see [PrepareDir]).
func NewFile[D, T any](cfg Config[D, T]) *File[D, T] {
	return &File[D, T]{
		cfg:  cfg,
		path: filepath.Join(cfg.Dir, cfg.Name),
		fl:   flock.New(filepath.Join(cfg.Dir, cfg.LockName), flock.SetPermissions(0o600)),
	}
}

// Path returns Dir/Name.
func (f *File[D, T]) Path() string { return f.path }

// Lock takes the cross-process lock, polling with capped (20 ms), jittered
// exponential backoff so that waiting honours ctx, and returns
// [File.Unlock]. Errors: ctx's error; "{Prefix}: lock {path}: ..." when
// the lock file cannot be locked.
func (f *File[D, T]) Lock(ctx context.Context) (func(), error) {
	if err := WaitLock(ctx, f.TryLock); err != nil {
		return nil, err
	}
	return f.Unlock, nil
}

// WaitLock waits for a cross-process lock: it calls tryLock (such as
// flock.Flock.TryLock) until it reports the lock taken, sleeping between
// tries with exponential backoff (internal/backoff) from 0.5 ms to 20 ms,
// jittered ±50 % so that waiters spread out, and honouring ctx. It is the
// one lock wait of the SDK's locked documents ([File] and the file store's
// shared documents). Errors: ctx's; tryLock's, as they are.
func WaitLock(ctx context.Context, tryLock func() (bool, error)) error {
	var delay time.Duration
	for {
		ok, err := tryLock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		delay = backoff.Next(delay, 500*time.Microsecond, 20*time.Millisecond)
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// TryLock takes the cross-process lock if it is free and reports whether
// it did. Errors: "{Prefix}: lock {path}: ...".
func (f *File[D, T]) TryLock() (bool, error) {
	ok, err := f.fl.TryLock()
	if err != nil {
		return false, fmt.Errorf("%s: lock %s: %w", f.cfg.Prefix, f.fl.Path(), err)
	}
	return ok, nil
}

// Unlock releases the cross-process lock; a failure is logged (slog.Error),
// as there is nobody to return it to.
func (f *File[D, T]) Unlock() {
	if err := f.fl.Unlock(); err != nil {
		slog.Error(f.cfg.Prefix+": unlock failed", "file", f.fl.Path(), "err", err)
	}
}

// Read loads the document, refusing a file larger than max bytes. A
// missing file is an empty document ([Format.New]). Errors: the Format's
// corrupt error for a file that is too large, not a regular file (refused
// at once, never waited on) or fails [Format.Decode]; "{Prefix}: read
// {path}: ..." for other read errors.
func (f *File[D, T]) Read(max int) (*D, error) {
	data, err := atomicfile.ReadFile(f.cfg.Dir, f.cfg.Name, int64(max))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f.cfg.Format.New(), nil
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, f.cfg.Format.Corrupt(f.path, fmt.Sprintf("larger than %d bytes", max), err)
	case errors.Is(err, atomicfile.ErrNotRegular):
		what := "not a regular file"
		if f.cfg.DescribeIrregular {
			if st, serr := os.Stat(f.path); serr == nil { // stat never blocks on a FIFO
				what = "a " + atomicfile.DescribeMode(st.Mode()) + ", not a regular file; refused at once"
			}
		}
		return nil, f.cfg.Format.Corrupt(f.path, what, err)
	case err != nil:
		return nil, fmt.Errorf("%s: read %s: %w", f.cfg.Prefix, f.path, err)
	}
	return f.cfg.Format.Decode(data, f.path)
}

// Encode returns the file content for d ([Format.Encode]). Errors:
// "{Prefix}: encode {path}: ...".
func (f *File[D, T]) Encode(d *D) ([]byte, error) {
	data, err := f.cfg.Format.Encode(d)
	if err != nil {
		return nil, fmt.Errorf("%s: encode %s: %w", f.cfg.Prefix, f.path, err)
	}
	return data, nil
}

// Write replaces the file with data atomically and durably
// ([atomicfile.WriteFile], permission 0600). Errors: "{Prefix}: write
// {path}: ...".
func (f *File[D, T]) Write(data []byte) error {
	if err := atomicfile.WriteFile(f.cfg.Dir, f.cfg.Name, data, 0o600); err != nil {
		return fmt.Errorf("%s: write %s: %w", f.cfg.Prefix, f.path, err)
	}
	return nil
}

// PrepareDir creates the state directory dir (0700) when missing and
// checks that it is a directory. Errors start with "{prefix}: ".
func PrepareDir(dir, prefix string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", prefix, dir)
	}
	return nil
}

// Quarantine moves dir/name aside, to "{name}.corrupt-{UTC time}" (for
// example "tasks.json.corrupt-20261121T222300Z"), adding "-2", "-3", ...
// when that name is taken, syncs dir and returns the new path. It moves
// whatever is there (file, directory, FIFO, symlink) and never deletes
// anything. Errors start with "{prefix}: quarantine {path}: "; one
// matching [fs.ErrNotExist] when there is nothing at dir/name.
func Quarantine(dir, name, prefix string, now time.Time) (string, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Lstat(path); err != nil {
		return "", fmt.Errorf("%s: quarantine %s: %w", prefix, path, err)
	}
	base := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	newPath := base
	for n := 2; ; n++ {
		_, err := os.Lstat(newPath)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: quarantine %s: %w", prefix, path, err)
		}
		newPath = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(path, newPath); err != nil {
		return "", fmt.Errorf("%s: quarantine %s: %w", prefix, path, err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return newPath, fmt.Errorf("%s: quarantine %s: moved to %s but syncing the directory: %w", prefix, path, newPath, err)
	}
	return newPath, nil
}
