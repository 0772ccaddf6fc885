package taskqueue

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/task"
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
// oldest ended tasks first, and [Queue.Submit] refuses with [task.ErrFull] once
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
// [*identity.CorruptError] (matching [identity.ErrCorrupt]) naming the file, and is left
// untouched, unless Options.FreshOnCorrupt moves it aside (see
// [Quarantine]) and starts an empty queue. A missing file is an empty
// queue. A lock file that is not a regular file is refused at once with an
// error naming it; a missing one is created by the first update, not by
// Open, so that a queue only read writes nothing (and opens in a directory
// it may not write; its updates then fail with the lock's error). Temp
// files of interrupted writes (".tasks.json.tmp-*") are removed when the
// lock is free, and the removal is logged (Options.Logger, level Info).
func Open(dir string, opts Options) (*Queue, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty queue directory", task.ErrInvalid)
	}
	if err := docfile.PrepareDir(dir, "taskqueue"); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(dir, LockFileName)
	// Only a regular lock file is used: a FIFO, socket, device or
	// directory is refused at once (by its mode, without opening it),
	// never waited on: a hostile file beside the queue cannot hang Open.
	// A missing lock file is left missing: the first update creates it,
	// so that a queue only read (existence serve, run -show) writes
	// nothing and works in a directory it may not write.
	if fi, err := os.Lstat(lockPath); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("taskqueue: lock file %s is not a regular file (a symlink)", lockPath)
		}
		return nil, fmt.Errorf("taskqueue: lock file: %s is a %s: %w", lockPath, atomicfile.DescribeMode(fi.Mode()), atomicfile.ErrNotRegular)
	}
	s := &fileStore{
		File: docfile.NewFile(docfile.Config[document, task.Task]{
			Dir: dir, Name: FileName, LockName: LockFileName, Prefix: "taskqueue", Format: format,
			DescribeIrregular: true,
		}),
		maxFile: MaxFileSize,
		maxLive: maxLiveSize,
	}
	q := newQueue(opts, s)
	log := q.opts.Logger
	// Under the lock no writer is alive: remove the temp files of
	// interrupted writes. A busy lock just postpones it; without any, no
	// lock is taken (nor its file created).
	if hasTemps(dir) {
		removeTemps(s, dir, log)
	}
	_, err := s.Load()
	if err != nil && errors.Is(err, identity.ErrCorrupt) && opts.FreshOnCorrupt {
		moved, qerr := Quarantine(dir, q.opts.Now())
		if qerr != nil {
			return nil, fmt.Errorf("%w (and moving it aside failed: %v)", err, qerr)
		}
		log.Warn("taskqueue: corrupt queue file moved aside; starting with an empty queue", "file", s.Path(), "moved_to", moved, "reason", err)
		q.quarantined = moved
		_, err = s.Load()
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
	return docfile.Quarantine(dir, FileName, "taskqueue", now)
}

// fileStore keeps the document in dir/tasks.json; the embedded File
// gives Lock.
type fileStore struct {
	*docfile.File[document, task.Task]
	// maxFile and maxLive are MaxFileSize and maxLiveSize; tests lower
	// them.
	maxFile, maxLive int
}

func (s *fileStore) Load() (*document, error) { return s.Read(s.maxFile) }

// Save writes d, first dropping the oldest ended tasks as needed to stay
// within maxFile. With liveLimit (a submission) it refuses with task.ErrFull
// when the pending and assigned tasks alone exceed maxLive.
func (s *fileStore) Save(d *document, liveLimit bool) error {
	data, err := s.Encode(d)
	if err != nil {
		return err
	}
	if liveLimit && len(data) > s.maxLive {
		if n := d.liveSize(); n > s.maxLive {
			return fmt.Errorf("%w: pending and assigned tasks take %d bytes, limit %d", task.ErrFull, n, s.maxLive)
		}
	}
	for len(data) > s.maxFile {
		if !d.shrink(len(data) - s.maxFile) {
			return fmt.Errorf("%w: %s would take %d bytes, limit %d", task.ErrFull, s.Path(), len(data), s.maxFile)
		}
		if data, err = s.Encode(d); err != nil {
			return err
		}
	}
	return s.Write(data)
}

// hasTemps reports whether dir holds a temp file of an interrupted write
// of the queue file (".tasks.json.tmp-*"); an unreadable dir holds none
// that Open could remove.
func hasTemps(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	prefix := atomicfile.TempPrefix(FileName)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			return true
		}
	}
	return false
}

// removeTemps removes the temp files of interrupted writes under the
// lock, when it is free, logging what it removed or why it could not.
func removeTemps(s *fileStore, dir string, log *slog.Logger) {
	ok, err := s.TryLock()
	if err != nil || !ok {
		return // busy: a writer may be alive; or not writable: nothing to remove
	}
	removed, rerr := atomicfile.RemoveTemps(dir, FileName)
	s.Unlock()
	if len(removed) > 0 {
		log.Info("taskqueue: removed temp files of interrupted writes", "dir", dir, "files", removed)
	}
	if rerr != nil {
		log.Warn("taskqueue: removing temp files of interrupted writes", "dir", dir, "err", rerr)
	}
}
