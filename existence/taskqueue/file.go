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
// once to check it: a file that cannot be used (invalid, too large, or a
// FIFO, socket, device or directory, refused at once) gives a
// [*CorruptError] (matching [ErrCorrupt]) naming the file, and is left
// untouched, unless Options.FreshOnCorrupt moves it aside (see
// [Quarantine]) and starts an empty queue. A missing file is an empty
// queue. A lock file that is not a regular file is refused at once with an
// error naming it. Temp files of interrupted writes (".tasks.json.tmp-*")
// are removed when the lock is free, and the removal is logged
// (Options.Logger, level Info).
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
	// Only a regular lock file is used: a FIFO, socket, device or
	// directory is refused at once (opened with O_NONBLOCK, checked with
	// fstat), never waited on (issue 10).
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("taskqueue: lock file %s is not a regular file (a symlink)", lockPath)
	}
	lf, _, err := atomicfile.OpenRegular(dir, LockFileName, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("taskqueue: lock file: %w", err)
	}
	lf.Close()
	s := &fileStore{
		dir:     dir,
		path:    filepath.Join(dir, FileName),
		fl:      flock.New(lockPath, flock.SetPermissions(0o600)),
		maxFile: MaxFileSize,
		maxLive: maxLiveSize,
	}
	q := newQueue(opts, s)
	log := q.opts.Logger
	// Under the lock no writer is alive: remove the temp files of
	// interrupted writes. A busy lock just postpones it.
	if ok, err := s.fl.TryLock(); err == nil && ok {
		removed, rerr := atomicfile.RemoveTemps(dir, FileName)
		s.unlock()
		if len(removed) > 0 {
			log.Info("taskqueue: removed temp files of interrupted writes", "dir", dir, "files", removed)
		}
		if rerr != nil {
			log.Warn("taskqueue: removing temp files of interrupted writes", "dir", dir, "err", rerr)
		}
	}
	_, err = s.load()
	if err != nil && errors.Is(err, ErrCorrupt) && opts.FreshOnCorrupt {
		moved, qerr := Quarantine(dir, q.opts.Now())
		if qerr != nil {
			return nil, fmt.Errorf("%w (and moving it aside failed: %v)", err, qerr)
		}
		log.Warn("taskqueue: corrupt queue file moved aside; starting with an empty queue", "file", s.path, "moved_to", moved, "reason", err)
		q.quarantined = moved
		_, err = s.load()
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Quarantine moves the queue file of dir aside, to
// "tasks.json.corrupt-{UTC time}" (for example
// "tasks.json.corrupt-20261121T222300Z"), adding "-2", "-3", ... when that
// name is taken, and returns the new path; the next [Open] starts with an
// empty queue. It moves whatever is there (file, directory, FIFO, symlink)
// and never deletes anything. Errors: an error matching [fs.ErrNotExist]
// when there is no queue file.
func Quarantine(dir string, now time.Time) (string, error) {
	path := filepath.Join(dir, FileName)
	if _, err := os.Lstat(path); err != nil {
		return "", fmt.Errorf("taskqueue: quarantine %s: %w", path, err)
	}
	base := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	newPath := base
	for n := 2; ; n++ {
		_, err := os.Lstat(newPath)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("taskqueue: quarantine %s: %w", path, err)
		}
		newPath = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(path, newPath); err != nil {
		return "", fmt.Errorf("taskqueue: quarantine %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return newPath, fmt.Errorf("taskqueue: quarantine %s: moved to %s but syncing the directory: %w", path, newPath, err)
	}
	return newPath, nil
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
		what := "not a regular file"
		if st, serr := os.Stat(s.path); serr == nil { // stat never blocks on a FIFO
			what = "a " + atomicfile.DescribeMode(st.Mode()) + ", not a regular file; refused at once"
		}
		return nil, &CorruptError{Path: s.path, Reason: what, Err: err}
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
