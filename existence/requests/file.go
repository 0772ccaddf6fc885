package requests

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/existence-loop/sdk/internal/docfile"
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
// once to check it: a file that cannot be used gives a [*identity.CorruptError] and
// is left untouched. A missing file is an empty queue.
func Open(dir string, opts Options) (*Queue, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty directory", ErrInvalid)
	}
	if err := docfile.PrepareDir(dir, "requests"); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(dir, LockFileName)
	if fi, err := os.Lstat(lockPath); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("requests: lock file %s is not a regular file (%s)", lockPath, fi.Mode().Type())
	}
	s := &fileStore{
		File: docfile.NewFile(docfile.Config[document, Request]{
			Dir: dir, Name: FileName, LockName: LockFileName, Prefix: "requests", Format: format,
		}),
		max: MaxFileSize,
	}
	if _, err := s.Load(); err != nil {
		return nil, err
	}
	return newQueue(opts, s), nil
}

// fileStore keeps the document in dir/requests.json; the embedded File
// gives Lock.
type fileStore struct {
	*docfile.File[document, Request]
	max int // MaxFileSize; tests lower it
}

func (s *fileStore) Load() (*document, error) { return s.Read(s.max) }

func (s *fileStore) Save(d *document) error {
	data, err := s.Encode(d)
	if err != nil {
		return err
	}
	if len(data) > s.max {
		return fmt.Errorf("%w: %s would take %d bytes, limit %d", ErrFull, s.Path(), len(data), s.max)
	}
	return s.Write(data)
}
