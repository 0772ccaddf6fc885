// Package atomicfile reads and writes small state documents safely: writes
// are atomic and durable (temp file in the same directory, fsync, atomic
// rename, fsync of the directory), and reads are confined to one directory
// with [os.Root], so symlinks that leave it are refused, and are capped in
// size.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// ErrTooLarge is returned by [ReadFile] for a file above its size limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned by [ReadFile] for a directory, device or other
// non-regular file where a document should be.
var ErrNotRegular = errors.New("not a regular file")

var tmpSeq atomic.Uint64

// WriteFile replaces dir/name with data atomically and durably: after a
// crash at any instant, dir/name holds either its previous content or data,
// never a mix. The file gets permission perm (use 0o600 for state). name
// must be a plain file name (no separators). A temp file left by a crash is
// named ".{name}.tmp-*" and is harmless.
func WriteFile(dir, name string, data []byte, perm fs.FileMode) (err error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("atomicfile: invalid file name %q", name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()

	tmp := "." + name + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tmpSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil && runtime.GOOS != "windows" { // umask may have narrowed or widened it
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// os.Root.Rename (Go 1.25) renames within dir; it replaces a symlink
	// at name rather than following it, so this cannot write outside dir.
	if err = root.Rename(tmp, name); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that a rename or create in it is durable.
// It is a no-op on Windows, where directories cannot be synced.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ReadFile reads dir/name, refusing with an error: a path that leaves dir,
// including through a symlink; a file that is not regular ([ErrNotRegular]);
// and a file larger than max bytes ([ErrTooLarge]). A missing file gives an
// error matching [fs.ErrNotExist].
func ReadFile(dir, name string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", filepath.Join(dir, name), ErrNotRegular, st.Mode().Type())
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, limit %d", filepath.Join(dir, name), ErrTooLarge, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max { // grew while reading
		return nil, fmt.Errorf("%s: %w: over %d bytes", filepath.Join(dir, name), ErrTooLarge, max)
	}
	return data, nil
}
