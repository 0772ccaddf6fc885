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
	"strings"
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

	tmp := TempPrefix(name) + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tmpSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
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
	if err = Datasync(f); err != nil {
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
// including through a symlink; a file that is not regular ([ErrNotRegular]:
// a FIFO, socket, device or directory, refused at once, never waited on);
// and a file larger than max bytes ([ErrTooLarge]). A missing file gives an
// error matching [fs.ErrNotExist].
func ReadFile(dir, name string, max int64) ([]byte, error) {
	f, st, err := OpenRegular(dir, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, limit %d", filepath.Join(dir, name), ErrTooLarge, st.Size(), max)
	}
	data := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > max { // grew while reading
			return nil, fmt.Errorf("%s: %w: over %d bytes", filepath.Join(dir, name), ErrTooLarge, max)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// OpenRegular opens dir/name inside dir (through [os.Root], so symlinks
// that leave dir are refused) with flag and perm, adding O_NONBLOCK so that
// opening a FIFO or a device never blocks, and checks the open file with
// fstat: anything but a regular file is closed and refused at once with an
// error matching [ErrNotRegular] that names the path and its type ("named
// pipe", "socket", "device", "directory"). It returns the file and its
// fstat. There is no window between the check and the use: the file
// checked is the file returned.
func OpenRegular(dir, name string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, flag|oNonblock, perm)
	if err != nil {
		// A socket cannot be opened (ENXIO), nor a directory for writing
		// (EISDIR): name the type rather than the errno.
		if st, serr := root.Stat(name); serr == nil && !st.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("%s is a %s: %w", filepath.Join(dir, name), DescribeMode(st.Mode()), ErrNotRegular)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a %s: %w", filepath.Join(dir, name), DescribeMode(st.Mode()), ErrNotRegular)
	}
	return f, st, nil
}

// DescribeMode names the type of a file mode: "directory", "symlink",
// "named pipe", "socket", "device", "regular file" or "special file".
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsRegular():
		return "regular file"
	default:
		return "special file"
	}
}

// TempPrefix returns the prefix of the temp files [WriteFile] creates for
// name: ".{name}.tmp-".
func TempPrefix(name string) string { return "." + name + ".tmp-" }

// RemoveTemps removes the temp files that interrupted [WriteFile] calls
// left for dir/name (".{name}.tmp-*"), fsyncs dir when it removed any, and
// returns the names it removed. Call it only when no writer of name can be
// alive, for example right after taking the lock of name's owner. Only
// regular files are removed; errors name the file.
func RemoveTemps(dir, name string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := TempPrefix(name)
	var removed []string
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	if len(removed) > 0 {
		errs = append(errs, SyncDir(dir))
	}
	return removed, errors.Join(errs...)
}
