package requests

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
)

// File names inside the state directory.
const (
	// FileName is the requests file: JSON, permission 0600.
	FileName = "requests.json"
	// LockFileName is the advisory lock file taken around every update.
	LockFileName = "requests.lock"
)

// MaxFileSize is the size limit of the requests file in bytes (4 MiB); a
// larger file is refused as corrupt, and an update that would pass it is
// refused with [ErrFull].
const MaxFileSize = 4 << 20

// Open opens the durable queue in directory dir (creating it, 0700), usually
// the state directory that also holds the task queue. It reads the file
// once to check it: a file that cannot be used gives a [*CorruptError] and
// is left untouched. A missing file is an empty queue.
func Open(dir string, opts Options) (*Queue, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty directory", ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("requests: %s is not a directory", dir)
	}
	lockPath := filepath.Join(dir, LockFileName)
	if fi, err := os.Lstat(lockPath); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("requests: lock file %s is not a regular file (%s)", lockPath, fi.Mode().Type())
	}
	s := &fileStore{dir: dir, path: filepath.Join(dir, FileName), fl: flock.New(lockPath, flock.SetPermissions(0o600)), max: MaxFileSize}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return newQueue(opts, s), nil
}

type fileStore struct {
	dir, path string
	fl        *flock.Flock
	max       int // MaxFileSize; tests lower it
}

// lock takes the cross-process lock, polling with capped, jittered
// exponential backoff so that waiting honours ctx.
func (s *fileStore) lock(ctx context.Context) (func(), error) {
	const maxDelay = 20 * time.Millisecond
	delay := 500 * time.Microsecond
	for {
		ok, err := s.fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("requests: lock %s: %w", s.fl.Path(), err)
		}
		if ok {
			return func() {
				if err := s.fl.Unlock(); err != nil {
					slog.Error("requests: unlock failed", "file", s.fl.Path(), "err", err)
				}
			}, nil
		}
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, maxDelay)
	}
}

func (s *fileStore) load() (*document, error) {
	data, err := atomicfile.ReadFile(s.dir, FileName, int64(s.max))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newDocument(), nil
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, &CorruptError{Path: s.path, Reason: fmt.Sprintf("larger than %d bytes", s.max), Err: err}
	case errors.Is(err, atomicfile.ErrNotRegular):
		return nil, &CorruptError{Path: s.path, Reason: "not a regular file", Err: err}
	case err != nil:
		return nil, fmt.Errorf("requests: read %s: %w", s.path, err)
	}
	return decode(data, s.path)
}

func (s *fileStore) save(d *document) error {
	data, err := encode(d)
	if err != nil {
		return fmt.Errorf("requests: encode %s: %w", s.path, err)
	}
	if len(data) > s.max {
		return fmt.Errorf("%w: %s would take %d bytes, limit %d", ErrFull, s.path, len(data), s.max)
	}
	if err := atomicfile.WriteFile(s.dir, FileName, data, 0o600); err != nil {
		return fmt.Errorf("requests: write %s: %w", s.path, err)
	}
	return nil
}
