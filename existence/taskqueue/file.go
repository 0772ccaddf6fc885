package taskqueue

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

// File names inside the queue directory.
const (
	// FileName is the queue file: JSON, permission 0600.
	FileName = "tasks.json"
	// LockFileName is the advisory lock file taken around every update.
	LockFileName = "tasks.lock"
)

// MaxFileSize is the size limit of the queue file in bytes (8 MiB). A
// larger file is refused as corrupt. To stay below it, an update drops the
// oldest ended tasks first, and [Queue.Submit] refuses with [ErrFull] once
// pending and assigned tasks alone take more than 3 MiB (leaving room for
// them to be assigned and finished).
const MaxFileSize = 8 << 20

const maxLiveSize = 3 << 20

// Open opens the durable queue in directory dir, creating dir (0700) when
// missing. The tasks live in dir/tasks.json (0600); every update takes the
// cross-process advisory lock dir/tasks.lock, reads the file, changes it
// and writes it back atomically and durably (temp file, fsync, atomic
// rename, fsync of dir) before unlocking, so several processes and
// goroutines can share the queue without losing tasks. Open reads the file
// once to check it: a file that cannot be used gives a [*CorruptError]
// (matching [ErrCorrupt]) and is left untouched. A missing file is an empty
// queue.
func Open(dir string, opts Options) (*Queue, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty queue directory", ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("taskqueue: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("taskqueue: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("taskqueue: %s is not a directory", dir)
	}
	lockPath := filepath.Join(dir, LockFileName)
	if fi, err := os.Lstat(lockPath); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("taskqueue: lock file %s is not a regular file (%s)", lockPath, fi.Mode().Type())
	}
	s := &fileStore{
		dir:     dir,
		path:    filepath.Join(dir, FileName),
		fl:      flock.New(lockPath, flock.SetPermissions(0o600)),
		maxFile: MaxFileSize,
		maxLive: maxLiveSize,
	}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return newQueue(opts, s), nil
}

// fileStore keeps the document in dir/tasks.json.
type fileStore struct {
	dir, path string
	fl        *flock.Flock
	// maxFile and maxLive are MaxFileSize and maxLiveSize; tests lower
	// them.
	maxFile, maxLive int
}

// lock takes the cross-process lock, polling with capped, jittered
// exponential backoff so that waiting honours ctx.
func (s *fileStore) lock(ctx context.Context) (func(), error) {
	const maxDelay = 20 * time.Millisecond
	delay := 500 * time.Microsecond
	for {
		ok, err := s.fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("taskqueue: lock %s: %w", s.fl.Path(), err)
		}
		if ok {
			return s.unlock, nil
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

func (s *fileStore) unlock() {
	if err := s.fl.Unlock(); err != nil {
		slog.Error("taskqueue: unlock failed", "file", s.fl.Path(), "err", err)
	}
}

func (s *fileStore) load() (*document, error) {
	data, err := atomicfile.ReadFile(s.dir, FileName, int64(s.maxFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newDocument(), nil
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, &CorruptError{Path: s.path, Reason: fmt.Sprintf("larger than %d bytes", s.maxFile), Err: err}
	case errors.Is(err, atomicfile.ErrNotRegular):
		return nil, &CorruptError{Path: s.path, Reason: "not a regular file", Err: err}
	case err != nil:
		return nil, fmt.Errorf("taskqueue: read %s: %w", s.path, err)
	}
	return decode(data, s.path)
}

// save writes d, first dropping the oldest ended tasks as needed to stay
// within maxFile. With liveLimit (a submission) it refuses with ErrFull
// when the pending and assigned tasks alone exceed maxLive.
func (s *fileStore) save(d *document, liveLimit bool) error {
	data, err := encode(d)
	if err != nil {
		return fmt.Errorf("taskqueue: encode %s: %w", s.path, err)
	}
	if liveLimit && len(data) > s.maxLive {
		if n := d.liveSize(); n > s.maxLive {
			return fmt.Errorf("%w: pending and assigned tasks take %d bytes, limit %d", ErrFull, n, s.maxLive)
		}
	}
	for len(data) > s.maxFile {
		if !d.shrink(len(data) - s.maxFile) {
			return fmt.Errorf("%w: %s would take %d bytes, limit %d", ErrFull, s.path, len(data), s.maxFile)
		}
		if data, err = encode(d); err != nil {
			return fmt.Errorf("taskqueue: encode %s: %w", s.path, err)
		}
	}
	if err := atomicfile.WriteFile(s.dir, FileName, data, 0o600); err != nil {
		return fmt.Errorf("taskqueue: write %s: %w", s.path, err)
	}
	return nil
}
