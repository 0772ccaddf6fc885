package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/atomicfile"
)

// Default limits; see [Limits].
const (
	DefaultMaxReadBytes   = 256 << 10
	DefaultMaxWriteBytes  = 256 << 10
	DefaultQuota          = 64 << 20
	DefaultMaxListEntries = 500
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
	// ErrQuota: a write would take the workspace above Limits.Quota.
	ErrQuota = errors.New("workspace quota exceeded")
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
	// (default 64 MiB), checked before every write and append.
	Quota int64
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
// even through a symlink; see [Open] for the path rules. A Workspace is safe
// for concurrent use by the goroutines of one process (operations are
// serialised, so quota checks are exact); several processes sharing one
// directory may together exceed the quota.
type Workspace struct {
	dir    string
	limits Limits
	escape error // the os.Root "path escapes" error, for errors.Is

	mu   sync.Mutex
	root *os.Root
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
	return &Workspace{dir: abs, limits: l.withDefaults(), escape: escape, root: root}, nil
}

// Dir returns the workspace's absolute directory.
func (w *Workspace) Dir() string { return w.dir }

// Limits returns the workspace's limits, defaults filled in.
func (w *Workspace) Limits() Limits { return w.limits }

// Close releases the workspace's directory handle. Operations after Close
// return [ErrClosed]. Close is idempotent.
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

// lock takes the workspace lock and returns the root, or ErrClosed.
func (w *Workspace) lock() (*os.Root, error) {
	w.mu.Lock()
	if w.root == nil {
		w.mu.Unlock()
		return nil, ErrClosed
	}
	return w.root, nil
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
// fs.ErrNotExist; [ErrIsDir]; [ErrTooLarge] above Limits.MaxReadBytes;
// [ErrNotText] for a file that is not UTF-8; [ErrClosed].
func (w *Workspace) Read(p string) (string, error) {
	name, err := fileName(p)
	if err != nil {
		return "", err
	}
	root, err := w.lock()
	if err != nil {
		return "", err
	}
	defer w.mu.Unlock()
	data, err := w.read(root, name, w.limits.MaxReadBytes)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s: %w", quote(name), ErrNotText)
	}
	return string(data), nil
}

// read reads a regular file of at most max bytes through root.
func (w *Workspace) read(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, w.wrap(name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, w.wrap(name, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: %w; use list_files", quote(name), ErrIsDir)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", quote(name))
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", quote(name), ErrTooLarge, st.Size(), max)
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
// temp file in the same directory, fsync, atomic rename, fsync of the
// directory; after a crash p holds its old content or the new, never a mix.
//
// Errors: [ErrPath] (including a symlink as the target, or a symlinked
// directory on the way); [ErrIsDir]; [ErrTooLarge] above
// Limits.MaxWriteBytes; [ErrQuota] when the workspace would exceed
// Limits.Quota; [ErrClosed]. A refused write changes nothing.
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
	root, err := w.lock()
	if err != nil {
		return 0, err
	}
	defer w.mu.Unlock()

	// Every check comes before the first change.
	var oldSize int64
	st, err := root.Lstat(name)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return 0, fmt.Errorf("%w %s: it is a symlink; writes do not follow symlinks", ErrPath, quote(name))
	case err == nil && st.IsDir():
		return 0, fmt.Errorf("%s: %w", quote(name), ErrIsDir)
	case err == nil && !st.Mode().IsRegular():
		return 0, fmt.Errorf("%s: not a regular file", quote(name))
	case err == nil:
		oldSize = st.Size()
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
	used, err := w.usage(root)
	if err != nil {
		return 0, err
	}
	if after := used - oldSize + size; after > w.limits.Quota {
		return 0, fmt.Errorf("%s: %w: the workspace would hold %d bytes, the quota is %d; delete files to make room",
			quote(name), ErrQuota, after, w.limits.Quota)
	}
	data := []byte(content)
	if appending && oldSize > 0 {
		old, err := w.read(root, name, w.limits.MaxWriteBytes)
		if err != nil {
			return 0, err
		}
		data = append(old, content...)
		size = int64(len(data))
	}

	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if err := w.mkdirs(root, dir); err != nil {
		return 0, err
	}
	if err := w.checkNoSymlinkDirs(root, dir); err != nil {
		return 0, err
	}
	// os.Root has no Rename before Go 1.25, so the atomic rename goes
	// through the joined path. checkNoSymlinkDirs has just verified that
	// no directory on the way is a symlink, and a rename replaces a
	// symlink at the target rather than following it. A process that
	// swaps a directory for a symlink between the check and the rename
	// could still redirect it: a TOCTOU window that the workspace lock
	// closes for everything going through this Workspace, but not for
	// other processes writing into the directory.
	if err := atomicfile.WriteFile(filepath.Join(w.dir, filepath.FromSlash(dir)), base, data, 0o600); err != nil {
		return 0, w.wrap(name, err)
	}
	return size, nil
}

// mkdirs creates dir and its parents through root, one step at a time.
func (w *Workspace) mkdirs(root *os.Root, dir string) error {
	if dir == "" {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		err := root.Mkdir(sub, 0o700)
		if err == nil || errors.Is(err, fs.ErrExist) {
			st, serr := root.Stat(sub)
			if serr != nil {
				return w.wrap(sub, serr)
			}
			if !st.IsDir() {
				return fmt.Errorf("%s: %w", quote(sub), ErrNotDir)
			}
			continue
		}
		return w.wrap(sub, err)
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
// listed). Errors: [ErrPath]; fs.ErrNotExist; [ErrNotDir]; [ErrClosed].
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
	root, err := w.lock()
	if err != nil {
		return nil, 0, err
	}
	defer w.mu.Unlock()
	f, err := root.Open(dir)
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, w.wrap(dir, err)
	}
	if !st.IsDir() {
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
// is removed itself, never its target. Errors: [ErrPath] (including a
// symlinked directory on the way); fs.ErrNotExist; [ErrNotEmpty];
// [ErrClosed].
func (w *Workspace) Delete(p string) error {
	name, err := fileName(p)
	if err != nil {
		return err
	}
	root, err := w.lock()
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
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
	return nil
}

// Usage returns the total size in bytes of the regular files in the
// workspace (symlinks are not followed). It walks the whole tree.
func (w *Workspace) Usage() (int64, error) {
	root, err := w.lock()
	if err != nil {
		return 0, err
	}
	defer w.mu.Unlock()
	return w.usage(root)
}

func (w *Workspace) usage(root *os.Root) (int64, error) {
	var total int64
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
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
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("workspace: measuring usage: %w", err)
	}
	return total, nil
}
