package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/atomicfile"
)

// Default limits; see [Limits].
const (
	DefaultMaxReadBytes   = 256 << 10
	DefaultMaxWriteBytes  = 256 << 10
	DefaultQuota          = 64 << 20
	DefaultMaxListEntries = 500
	DefaultMaxFiles       = 10000
)

// Path limits: a path component may be at most 255 bytes (the common file
// system limit) and a whole path at most 1024 bytes.
const (
	maxNameBytes = 255
	maxPathBytes = 1024
)

// Errors of workspace operations. Each is wrapped with the path and the
// reason; match them with [errors.Is]. A missing file matches
// [fs.ErrNotExist].
var (
	// ErrPath: the path is refused: empty, absolute, with a ".."
	// component, a backslash, a NUL byte or another control character,
	// not UTF-8, too long, or leading outside the workspace through a
	// symlink.
	ErrPath = errors.New("invalid path")
	// ErrTooLarge: a file is above Limits.MaxReadBytes, or a write would
	// make one above Limits.MaxWriteBytes.
	ErrTooLarge = errors.New("file too large")
	// ErrQuota: a write would take the workspace above Limits.Quota
	// bytes or Limits.MaxFiles files.
	ErrQuota = errors.New("workspace quota exceeded")
	// ErrNotRegular: the path names something that is neither a regular
	// file nor a directory (a named pipe, a socket, a device). It is
	// refused before it is opened, so a FIFO cannot block the workspace.
	ErrNotRegular = errors.New("not a regular file or directory")
	// ErrHardLink: a regular file has more than one hard link. A hard
	// link made before the workspace was opened may share its content
	// with a file outside the workspace, which os.Root cannot see, so
	// such files are neither read nor written.
	ErrHardLink = errors.New("file has more than one hard link")
	// ErrNotText: a file read as text is not valid UTF-8.
	ErrNotText = errors.New("not a UTF-8 text file")
	// ErrIsDir: a file operation named a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir: list_files named a file.
	ErrNotDir = errors.New("not a directory")
	// ErrNotEmpty: delete named a directory that is not empty.
	ErrNotEmpty = errors.New("directory not empty")
	// ErrClosed: the workspace was closed.
	ErrClosed = errors.New("workspace closed")
)

// Limits bound what a workspace holds and what one operation moves. Zero
// or negative fields take the defaults; sizes are in bytes.
type Limits struct {
	// MaxReadBytes is the largest file Read returns (default 256 KiB).
	MaxReadBytes int64
	// MaxWriteBytes is the largest file Write or Append may produce
	// (default 256 KiB).
	MaxWriteBytes int64
	// Quota is the total size of the regular files in the workspace
	// (default 64 MiB), checked before every write and append against a
	// running count (see [Workspace.Usage]).
	Quota int64
	// MaxFiles is the most regular files the workspace may hold (default
	// 10,000), checked like Quota when a write creates a file.
	MaxFiles int
	// MaxListEntries is the most entries List returns (default 500).
	MaxListEntries int
}

func (l Limits) withDefaults() Limits {
	if l.MaxReadBytes <= 0 {
		l.MaxReadBytes = DefaultMaxReadBytes
	}
	if l.MaxWriteBytes <= 0 {
		l.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if l.Quota <= 0 {
		l.Quota = DefaultQuota
	}
	if l.MaxListEntries <= 0 {
		l.MaxListEntries = DefaultMaxListEntries
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// Entry is one item of a directory listing.
type Entry struct {
	// Name is the entry's name within the listed directory.
	Name string `json:"name"`
	// Path is the entry's slash-separated path from the workspace root.
	Path string `json:"path"`
	// Dir is true for a directory.
	Dir bool `json:"dir,omitempty"`
	// Symlink is true for a symbolic link (which is not followed).
	Symlink bool `json:"symlink,omitempty"`
	// Size is the size in bytes of a regular file (0 otherwise).
	Size int64 `json:"size"`
}

// Workspace is one directory in which agents read and write files. Every
// operation goes through an [os.Root], so no path can leave the directory,
// even through a symlink; see [Open] for the path rules and the guarantees.
// A Workspace is safe for concurrent use by the goroutines of one process:
// changes to one path are serialised (so appends lose nothing), and the
// quota is checked against a running count kept under a short lock that is
// never held across a blocking open or read. Changes made to the directory
// by other processes are not counted until the workspace is opened again.
type Workspace struct {
	dir    string
	limits Limits
	escape error // the os.Root "path escapes" error, for errors.Is

	// mu guards the fields below. It is held only for bookkeeping, never
	// across file-system calls that can block.
	mu    sync.Mutex
	root  *os.Root
	bytes int64                // running size of the regular files
	files int                  // running count of the regular files
	paths map[string]*pathLock // per-path locks of writes and deletes
}

// pathLock serialises the changes to one path; refs counts its users.
type pathLock struct {
	mu   sync.Mutex
	refs int
}

// Open opens the workspace in dir, creating the directory (mode 0700) if it
// does not exist. Limits with zero fields take the defaults.
//
// Paths given to the workspace are slash-separated and relative to dir, like
// "notes/today.md". Refused with an error wrapping [ErrPath]: an empty path;
// NUL bytes and other control characters; invalid UTF-8; backslashes
// (Windows-style separators); absolute paths ("/etc/passwd",
// "//host/share", "C:\x", "C:/x"); any ".." component, even one that would
// stay inside; a component over 255 bytes or a path over 1024 bytes; and
// paths that lead outside dir through a symlink, intermediate directories
// included. Symlinks that stay inside dir are followed for reads and
// listings; writes, appends and deletes refuse to go through a symlinked
// directory, and writes refuse a symlink as the target. "." and "" after
// cleaning name the root, which only List accepts.
//
// What the sandbox guarantees, and how:
//
//   - No path leaves dir: every operation goes through an [os.Root]
//     (which resolves each component itself, relative to the directory's
//     file descriptor), which refuses ".." and
//     symlinks that lead outside, even when they change during the call.
//     Writes create a temp file and rename it with [os.Root.Rename], so
//     the rename cannot be redirected either.
//   - os.Root does not see hard links: a hard link made inside dir to a
//     file outside (before the workspace was opened, by someone with
//     access to both) shares that file's content. Regular files with a
//     link count above 1 are therefore refused for reads, writes and
//     appends ([ErrHardLink]); deleting one removes only its name.
//   - os.Root does not stop at named pipes, sockets or devices: opening a
//     FIFO blocks until a writer appears. The workspace checks the type
//     first and refuses anything that is not a regular file or a
//     directory ([ErrNotRegular]); it then opens with O_NONBLOCK and
//     checks again that the opened file is the one it checked, so a file
//     swapped for a FIFO meanwhile cannot block it either.
//   - Quotas: [Limits].Quota bytes and [Limits].MaxFiles regular files,
//     counted once by walking the tree when the workspace is opened and
//     then kept up to date by every write, append and delete (no walk per
//     write).
//
// Errors: an empty dir, a dir that cannot be created or opened, or a walk
// of the tree that fails.
func Open(dir string, l Limits) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	// os.Root reports an escape with an unexported error value; capture
	// it by asking for the parent, so that it can be matched with
	// errors.Is instead of by its text.
	var escape error
	if _, err := root.Lstat(".."); err != nil {
		escape = errors.Unwrap(err)
	}
	w := &Workspace{dir: abs, limits: l.withDefaults(), escape: escape, root: root, paths: map[string]*pathLock{}}
	if w.bytes, w.files, err = scan(root); err != nil {
		root.Close()
		return nil, err
	}
	return w, nil
}

// scans counts the walks of whole trees, for the tests.
var scans atomic.Int64

// scan measures the regular files under root: their total size and
// number. Symlinks are not followed.
func scan(root *os.Root) (bytes int64, files int, err error) {
	scans.Add(1)
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
					return nil
				}
				return err
			}
			bytes += info.Size()
			files++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("workspace: measuring usage: %w", err)
	}
	return bytes, files, nil
}

// Dir returns the workspace's absolute directory.
func (w *Workspace) Dir() string { return w.dir }

// Limits returns the workspace's limits, defaults filled in.
func (w *Workspace) Limits() Limits { return w.limits }

// Close releases the workspace's directory handle. Operations after Close
// return [ErrClosed]; an operation in progress fails with ErrClosed at its
// next step (Close does not wait for it). Close is idempotent.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return nil
	}
	err := w.root.Close()
	w.root = nil
	return err
}

// handle returns the root, or ErrClosed. The workspace lock is taken only
// to read it.
func (w *Workspace) handle() (*os.Root, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return nil, ErrClosed
	}
	return w.root, nil
}

// lockPath serialises changes to name; call the returned function to
// release it.
func (w *Workspace) lockPath(name string) func() {
	w.mu.Lock()
	l := w.paths[name]
	if l == nil {
		l = &pathLock{}
		w.paths[name] = l
	}
	l.refs++
	w.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		w.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(w.paths, name)
		}
		w.mu.Unlock()
	}
}

// Clean checks a workspace path against the rules of [Open] (all but the
// symlink rule, which needs the file system) and returns its cleaned form:
// slash-separated, without "." or empty components, "." for the root. The
// error wraps [ErrPath].
func Clean(p string) (string, error) {
	bad := func(reason string) (string, error) {
		return "", fmt.Errorf("%w %s: %s", ErrPath, quote(p), reason)
	}
	switch {
	case p == "":
		return bad("the path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return bad("the path contains a NUL byte")
	case !utf8.ValidString(p):
		return bad("the path is not valid UTF-8")
	case strings.Contains(p, `\`):
		return bad(`backslashes are not allowed; use "/" as the separator`)
	case strings.HasPrefix(p, "/"):
		return bad("absolute paths are not allowed; use a path relative to the workspace")
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		return bad("drive-letter paths are not allowed; use a path relative to the workspace")
	case len(p) > maxPathBytes:
		return bad(fmt.Sprintf("the path is longer than %d bytes", maxPathBytes))
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return bad("the path contains a control character")
		}
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			return bad(`".." components are not allowed`)
		case len(c) > maxNameBytes:
			return bad(fmt.Sprintf("a name is longer than %d bytes", maxNameBytes))
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// quote quotes a path for an error message, cut to 120 bytes.
func quote(p string) string {
	if len(p) > 120 {
		p = p[:120] + "..."
	}
	return fmt.Sprintf("%q", p)
}

// fileName cleans p and refuses the root.
func fileName(p string) (string, error) {
	c, err := Clean(p)
	if err != nil {
		return "", err
	}
	if c == "." {
		return "", fmt.Errorf("%w %s: the path names the workspace itself, not a file", ErrPath, quote(p))
	}
	return c, nil
}

// wrap turns an error from the file system into one the model can act on.
func (w *Workspace) wrap(p string, err error) error {
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrClosed):
		return fmt.Errorf("%s: %w", quote(p), ErrClosed)
	case w.escape != nil && errors.Is(err, w.escape):
		return fmt.Errorf("%w %s: it leads outside the workspace (through a symlink)", ErrPath, quote(p))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: %w", quote(p), fs.ErrNotExist)
	case errors.As(err, &pe):
		// Drop the *at syscall name and the path, which the caller
		// already knows; keep the reason.
		return fmt.Errorf("%s: %w", quote(p), pe.Err)
	}
	return fmt.Errorf("%s: %w", quote(p), err)
}

// Read returns the content of the text file p. Errors: [ErrPath];
// fs.ErrNotExist; [ErrIsDir]; [ErrNotRegular] for a named pipe, socket or
// device; [ErrHardLink]; [ErrTooLarge] above Limits.MaxReadBytes;
// [ErrNotText] for a file that is not UTF-8; [ErrClosed].
func (w *Workspace) Read(p string) (string, error) {
	name, err := fileName(p)
	if err != nil {
		return "", err
	}
	root, err := w.handle()
	if err != nil {
		return "", err
	}
	data, err := w.read(root, name, w.limits.MaxReadBytes)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s: %w", quote(name), ErrNotText)
	}
	return string(data), nil
}

// checkRegular refuses what the workspace does not read or write: a
// directory ([ErrIsDir]), anything that is not a regular file
// ([ErrNotRegular]), and a regular file with more than one hard link
// ([ErrHardLink]).
func checkRegular(name string, st fs.FileInfo) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("%s: %w", quote(name), ErrIsDir)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: %w: it is a %s", quote(name), ErrNotRegular, atomicfile.DescribeMode(st.Mode()))
	}
	if n := links(st); n > 1 {
		return fmt.Errorf("%s: %w: it has %d; a hard link may share a file outside the workspace", quote(name), ErrHardLink, n)
	}
	return nil
}

// read reads a regular file of at most max bytes through root. The type is
// checked before the file is opened, the open does not block (O_NONBLOCK),
// and the opened file must be the one checked.
func (w *Workspace) read(root *os.Root, name string, max int64) ([]byte, error) {
	st, err := root.Stat(name)
	if err != nil {
		return nil, w.wrap(name, err)
	}
	if err := checkRegular(name, st); err != nil {
		if errors.Is(err, ErrIsDir) {
			err = fmt.Errorf("%w; use list_files", err)
		}
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, w.wrap(name, err)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, w.wrap(name, err)
	}
	if !os.SameFile(st, fst) {
		return nil, fmt.Errorf("%s: changed while being opened; try again", quote(name))
	}
	if err := checkRegular(name, fst); err != nil {
		return nil, err
	}
	if fst.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", quote(name), ErrTooLarge, fst.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, w.wrap(name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: over %d bytes", quote(name), ErrTooLarge, max)
	}
	return data, nil
}

// Write replaces the file p with content, creating it and its parent
// directories (mode 0700) as needed. The write is atomic and durable: a
// temp file in the same directory, fsync, [os.Root.Rename] over p, fsync of
// the directory; after a crash p holds its old content or the new, never a
// mix.
//
// Errors: [ErrPath] (including a symlink as the target, or a symlinked
// directory on the way); [ErrIsDir]; [ErrNotRegular]; [ErrHardLink];
// [ErrTooLarge] above Limits.MaxWriteBytes; [ErrQuota] when the workspace
// would exceed Limits.Quota or Limits.MaxFiles; [ErrClosed]. A refused
// write changes nothing.
func (w *Workspace) Write(p, content string) error {
	_, err := w.put(p, content, false)
	return err
}

// Append adds content to the end of the file p, creating it (and its parent
// directories) if needed. It is atomic like [Workspace.Write]: the file is
// rewritten whole, so a crash never leaves half an append. Errors are those
// of Write; [ErrTooLarge] means the file would grow above
// Limits.MaxWriteBytes.
func (w *Workspace) Append(p, content string) error {
	_, err := w.put(p, content, true)
	return err
}

// put writes content to p atomically, replacing the file or appending to
// it, and returns the file's new size.
func (w *Workspace) put(p, content string, appending bool) (int64, error) {
	name, err := fileName(p)
	if err != nil {
		return 0, err
	}
	root, err := w.handle()
	if err != nil {
		return 0, err
	}
	defer w.lockPath(name)()

	// Every check comes before the first change.
	var oldSize int64
	exists := false
	st, err := root.Lstat(name)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return 0, fmt.Errorf("%w %s: it is a symlink; writes do not follow symlinks", ErrPath, quote(name))
	case err == nil:
		if err := checkRegular(name, st); err != nil {
			return 0, err
		}
		oldSize, exists = st.Size(), true
	case !errors.Is(err, fs.ErrNotExist):
		return 0, w.wrap(name, err)
	}
	size := int64(len(content))
	if appending {
		size += oldSize
	}
	if size > w.limits.MaxWriteBytes {
		what := "the content is"
		if appending {
			what = "the file would grow to"
		}
		return 0, fmt.Errorf("%s: %w: %s %d bytes, the write limit is %d", quote(name), ErrTooLarge, what, size, w.limits.MaxWriteBytes)
	}
	newFiles := 0
	if !exists {
		newFiles = 1
	}
	if err := w.reserve(name, size-oldSize, newFiles); err != nil {
		return 0, err
	}
	data := []byte(content)
	if appending && oldSize > 0 {
		old, err := w.read(root, name, w.limits.MaxWriteBytes)
		if err != nil {
			w.release(size-oldSize, newFiles)
			return 0, err
		}
		data = append(old, content...)
	}
	if err := w.writeAtomic(root, name, data); err != nil {
		w.release(size-oldSize, newFiles)
		return 0, err
	}
	if d := int64(len(data)) - size; d != 0 { // the file changed under us
		w.release(-d, 0)
	}
	return int64(len(data)), nil
}

// reserve adds bytes and files to the running usage, or returns ErrQuota
// when that would exceed the limits.
func (w *Workspace) reserve(name string, bytes int64, files int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return ErrClosed
	}
	if after := w.bytes + bytes; bytes > 0 && after > w.limits.Quota {
		return fmt.Errorf("%s: %w: the workspace would hold %d bytes, the quota is %d; delete files to make room",
			quote(name), ErrQuota, after, w.limits.Quota)
	}
	if after := w.files + files; files > 0 && after > w.limits.MaxFiles {
		return fmt.Errorf("%s: %w: the workspace would hold %d files, the limit is %d; delete files to make room",
			quote(name), ErrQuota, after, w.limits.MaxFiles)
	}
	w.bytes += bytes
	w.files += files
	return nil
}

// release takes bytes and files back from the running usage.
func (w *Workspace) release(bytes int64, files int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bytes -= bytes
	w.files -= files
}

// writeAtomic replaces name with data through root: parent directories,
// a temp file in the same directory (O_EXCL), fsync, os.Root.Rename over
// name, fsync of the directory. A failed write removes its temp file.
func (w *Workspace) writeAtomic(root *os.Root, name string, data []byte) (err error) {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if err := w.mkdirs(root, dir); err != nil {
		return err
	}
	if err := w.checkNoSymlinkDirs(root, dir); err != nil {
		return err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+base+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return w.wrap(name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return w.wrap(name, err)
	}
	if err = f.Chmod(0o600); err != nil && runtime.GOOS != "windows" { // umask may have changed it
		return w.wrap(name, err)
	}
	if err = f.Sync(); err != nil {
		return w.wrap(name, err)
	}
	if err = f.Close(); err != nil {
		return w.wrap(name, err)
	}
	if err = root.Rename(tmp, name); err != nil {
		return w.wrap(name, err)
	}
	return w.syncDir(root, dir)
}

// syncDir fsyncs a directory of the workspace so that a rename in it is
// durable. It is a no-op on Windows, where directories cannot be synced.
func (w *Workspace) syncDir(root *os.Root, dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if dir == "" {
		dir = "."
	}
	d, err := root.Open(dir)
	if err != nil {
		return w.wrap(dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return w.wrap(dir, err)
	}
	return nil
}

// mkdirs creates dir and its parents through root ([os.Root.MkdirAll]) and
// checks that it is a directory.
func (w *Workspace) mkdirs(root *os.Root, dir string) error {
	if dir == "" {
		return nil
	}
	if err := root.MkdirAll(dir, 0o700); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: %w", quote(dir), ErrNotDir)
		}
		return w.wrap(dir, err)
	}
	return nil
}

// checkNoSymlinkDirs refuses a directory path any component of which is a
// symlink.
func (w *Workspace) checkNoSymlinkDirs(root *os.Root, dir string) error {
	if dir == "" {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		st, err := root.Lstat(sub)
		if err != nil {
			return w.wrap(sub, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w %s: it is a symlink; writes and deletes do not go through symlinked directories", ErrPath, quote(sub))
		}
		if !st.IsDir() {
			return fmt.Errorf("%s: %w", quote(sub), ErrNotDir)
		}
	}
	return nil
}

// List returns the entries of directory p ("." for the root), sorted by
// name: the first Limits.MaxListEntries of them. Symlinks are listed, not
// followed (a symlink to a directory inside the workspace can itself be
// listed). Errors: [ErrPath]; fs.ErrNotExist; [ErrNotDir] (also for a
// named pipe, socket or device, which is never opened); [ErrClosed].
func (w *Workspace) List(p string) ([]Entry, error) {
	entries, _, err := w.list(p)
	return entries, err
}

// list is List, also returning how many entries were left out.
func (w *Workspace) list(p string) (entries []Entry, more int, err error) {
	dir, err := Clean(p)
	if err != nil {
		return nil, 0, err
	}
	root, err := w.handle()
	if err != nil {
		return nil, 0, err
	}
	st, err := root.Stat(dir)
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	if !st.IsDir() {
		return nil, 0, fmt.Errorf("%s: %w", quote(dir), ErrNotDir)
	}
	f, err := root.OpenFile(dir, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	if !fst.IsDir() || !os.SameFile(st, fst) {
		return nil, 0, fmt.Errorf("%s: %w", quote(dir), ErrNotDir)
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	if len(des) > w.limits.MaxListEntries {
		des, more = des[:w.limits.MaxListEntries], len(des)-w.limits.MaxListEntries
	}
	entries = make([]Entry, 0, len(des))
	for _, d := range des {
		e := Entry{Name: d.Name(), Path: path.Join(dir, d.Name()), Dir: d.IsDir(), Symlink: d.Type()&fs.ModeSymlink != 0}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		entries = append(entries, e)
	}
	return entries, more, nil
}

// Delete removes the file p, or the directory p if it is empty; a symlink
// is removed itself, never its target, and a hard-linked file loses only
// this name. Errors: [ErrPath] (including a symlinked directory on the
// way); fs.ErrNotExist; [ErrNotEmpty]; [ErrClosed].
func (w *Workspace) Delete(p string) error {
	name, err := fileName(p)
	if err != nil {
		return err
	}
	root, err := w.handle()
	if err != nil {
		return err
	}
	defer w.lockPath(name)()
	dir, _ := path.Split(name)
	if err := w.checkNoSymlinkDirs(root, strings.TrimSuffix(dir, "/")); err != nil {
		return err
	}
	st, err := root.Lstat(name)
	if err != nil {
		return w.wrap(name, err)
	}
	if err := root.Remove(name); err != nil {
		if st.IsDir() {
			if f, oerr := root.Open(name); oerr == nil {
				names, _ := f.Readdirnames(1)
				f.Close()
				if len(names) > 0 {
					return fmt.Errorf("%s: %w; delete its files first", quote(name), ErrNotEmpty)
				}
			}
		}
		return w.wrap(name, err)
	}
	if st.Mode().IsRegular() {
		w.release(st.Size(), 1)
	}
	return nil
}

// Usage returns the total size in bytes of the regular files in the
// workspace (symlinks are not followed): the running count, measured when
// the workspace was opened and updated by every write, append and delete
// made through it. Errors: [ErrClosed].
func (w *Workspace) Usage() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return 0, ErrClosed
	}
	return w.bytes, nil
}

// Files returns the number of regular files in the workspace, counted
// like [Workspace.Usage]. Errors: [ErrClosed].
func (w *Workspace) Files() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return 0, ErrClosed
	}
	return w.files, nil
}
