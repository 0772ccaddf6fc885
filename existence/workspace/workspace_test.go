package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
)

// env is a workspace next to an "outside" directory holding a secret.
type env struct {
	ws      *workspace.Workspace
	dir     string // the workspace directory
	outside string // a sibling directory the workspace must never touch
	tools   map[string]toolloop.Tool
}

func newEnv(t *testing.T, l workspace.Limits) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{dir: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), tools: map[string]toolloop.Tool{}}
	require.NoError(t, os.Mkdir(e.outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(e.outside, "secret.txt"), []byte("top secret"), 0o600))
	ws, err := workspace.Open(e.dir, l)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	e.ws = ws
	for _, tool := range ws.Tools() {
		e.tools[tool.Name()] = tool
	}
	return e
}

// call runs a tool with JSON arguments built from args.
func (e *env) call(t *testing.T, tool string, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	tl, ok := e.tools[tool]
	require.True(t, ok, "no tool %s", tool)
	return tl.Call(context.Background(), raw)
}

// snapshot lists every entry under dir with its type and content, without
// following symlinks.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel] = "dir"
		case !d.Type().IsRegular(): // never opened: a FIFO would block
			out[rel] = "special:" + d.Type().String()
		default:
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = "file:" + string(data)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestHostilePaths(t *testing.T) {
	type setup func(t *testing.T, e *env)
	symlink := func(target, name string) setup {
		return func(t *testing.T, e *env) {
			target := strings.ReplaceAll(target, "$OUT", e.outside)
			p := filepath.Join(e.dir, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
			require.NoError(t, os.Symlink(target, p))
		}
	}
	const (
		dotdot    = `".." components are not allowed`
		absolute  = "absolute paths are not allowed"
		backslash = "backslashes are not allowed"
		escape    = "symlink" // "leads outside the workspace (through a symlink)" or "is a symlink; ..."
	)
	all := []string{"read", "write", "append", "delete", "list"}
	fifo := func(name string) setup {
		return func(t *testing.T, e *env) {
			mkfifo(t, filepath.Join(e.dir, name))
		}
	}
	socket := func(name string) setup {
		return func(t *testing.T, e *env) {
			l, err := net.Listen("unix", filepath.Join(e.dir, name))
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
		}
	}
	hardlink := func(name string) setup {
		return func(t *testing.T, e *env) {
			require.NoError(t, os.Link(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.dir, name)))
		}
	}
	const (
		pipe = "it is a named pipe"
		sock = "it is a socket"
		hard = "file has more than one hard link: it has 2"
	)
	files := []string{"read", "write", "append"}
	tests := []struct {
		name   string
		path   string
		setup  setup
		reason string
		ops    []string // default: all
		want   error    // default: workspace.ErrPath
	}{
		{name: "FIFO", path: "pipe", setup: fifo("pipe"), reason: pipe, ops: files, want: workspace.ErrNotRegular},
		{name: "FIFO listed", path: "pipe", setup: fifo("pipe"), reason: "not a directory", ops: []string{"list"}, want: workspace.ErrNotDir},
		{name: "FIFO through an inside symlink", path: "via", setup: func(t *testing.T, e *env) { fifo("pipe")(t, e); symlink("pipe", "via")(t, e) }, reason: pipe, ops: []string{"read"}, want: workspace.ErrNotRegular},
		{name: "socket", path: "s.sock", setup: socket("s.sock"), reason: sock, ops: files, want: workspace.ErrNotRegular},
		{name: "hard link to an outside file", path: "hard.txt", setup: hardlink("hard.txt"), reason: hard, ops: files, want: workspace.ErrHardLink},
		{name: "hard link in a subdirectory", path: "d/hard.txt", setup: func(t *testing.T, e *env) {
			require.NoError(t, os.Mkdir(filepath.Join(e.dir, "d"), 0o700))
			hardlink("d/hard.txt")(t, e)
		}, reason: hard, ops: files, want: workspace.ErrHardLink},
		{name: "parent", path: "../x", reason: dotdot},
		{name: "parent of parent", path: "../../etc/passwd", reason: dotdot},
		{name: "climbing out of a subdirectory", path: "a/../../x", reason: dotdot},
		{name: "dot-dot that stays inside", path: "a/../b", reason: dotdot},
		{name: "bare dot-dot", path: "..", reason: dotdot},
		{name: "dot then dot-dot", path: "./../x", reason: dotdot},
		{name: "trailing dot-dot", path: "a/b/..", reason: dotdot},
		{name: "sibling directory", path: "../outside/secret.txt", reason: dotdot},
		{name: "absolute", path: "/etc/passwd", reason: absolute},
		{name: "absolute to outside", path: "/tmp/x", reason: absolute},
		{name: "UNC with slashes", path: "//host/share", reason: absolute},
		{name: "drive letter with backslash", path: `C:\Windows`, reason: backslash},
		{name: "drive letter with slash", path: "C:/x", reason: "drive-letter paths are not allowed"},
		{name: "drive-relative", path: "c:x", reason: "drive-letter paths are not allowed"},
		{name: "UNC with backslashes", path: `\\server\share`, reason: backslash},
		{name: "backslash separator", path: `a\b`, reason: backslash},
		{name: "backslash dot-dot", path: `..\x`, reason: backslash},
		{name: "NUL byte", path: "x\x00y", reason: "NUL byte"},
		{name: "newline", path: "a\nb", reason: "control character"},
		{name: "empty", path: "", reason: "the path is empty", ops: []string{"read", "write", "append", "delete"}},
		{name: "the root itself", path: ".", reason: "names the workspace itself", ops: []string{"read", "write", "append", "delete"}},
		{name: "very long name", path: strings.Repeat("n", 300), reason: "a name is longer than 255 bytes"},
		{name: "very long path", path: strings.Repeat("abcd/", 250) + "x", reason: "the path is longer than 1024 bytes"},
		{name: "symlink to /etc", path: "etc/passwd", setup: symlink("/etc", "etc"), reason: escape, ops: []string{"read", "list"}},
		{name: "symlinked directory outside", path: "out/secret.txt", setup: symlink("$OUT", "out"), reason: escape},
		{name: "new file in a symlinked directory outside", path: "out/new.txt", setup: symlink("$OUT", "out"), reason: escape, ops: []string{"write", "append"}},
		{name: "relative symlink outside", path: "rel/secret.txt", setup: symlink("../outside", "rel"), reason: escape},
		{name: "symlinked intermediate directory", path: "deep/mid/sub/new.txt", setup: symlink("$OUT", "deep/mid"), reason: escape},
		{name: "file symlink outside", path: "leak.txt", setup: symlink("$OUT/secret.txt", "leak.txt"), reason: escape, ops: []string{"read", "write", "append"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, workspace.Limits{})
			if tt.setup != nil {
				tt.setup(t, e)
			}
			want := tt.want
			if want == nil {
				want = workspace.ErrPath
			}
			outsideBefore := snapshot(t, e.outside)
			insideBefore := snapshot(t, e.dir)
			ops := tt.ops
			if ops == nil {
				ops = all
			}
			for _, op := range ops {
				// Through the Go API: ErrPath and the reason.
				var err error
				switch op {
				case "read":
					_, err = e.ws.Read(tt.path)
				case "write":
					err = e.ws.Write(tt.path, "pwned")
				case "append":
					err = e.ws.Append(tt.path, "pwned")
				case "delete":
					err = e.ws.Delete(tt.path)
				case "list":
					_, err = e.ws.List(tt.path)
				}
				require.Error(t, err, op)
				assert.ErrorIs(t, err, want, op)
				assert.Contains(t, err.Error(), tt.reason, op)

				// Through the tool, as the model calls it.
				args := map[string]string{"path": tt.path}
				if op == "write" || op == "append" {
					args["content"] = "pwned"
				}
				tool := op + "_file"
				if op == "list" {
					tool = "list_files"
				}
				out, err := e.call(t, tool, args)
				require.Error(t, err, op)
				assert.Empty(t, out)
				assert.Contains(t, err.Error(), tt.reason, op)
			}
			assert.Equal(t, outsideBefore, snapshot(t, e.outside), "nothing outside changed")
			assert.Equal(t, insideBefore, snapshot(t, e.dir), "nothing inside changed")
		})
	}
}

func TestCleanAccepts(t *testing.T) {
	tests := map[string]string{
		"a.md":                   "a.md",
		"./a.md":                 "a.md",
		"notes//today.md":        "notes/today.md",
		"notes/./today.md":       "notes/today.md",
		"notes/":                 "notes",
		".":                      ".",
		"./":                     ".",
		"..a/b..":                "..a/b..",
		"名前/ファイル.txt":            "名前/ファイル.txt",
		"C":                      "C",
		"ab:c":                   "ab:c",
		".hidden":                ".hidden",
		strings.Repeat("n", 255): strings.Repeat("n", 255),
	}
	for in, want := range tests {
		got, err := workspace.Clean(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := workspace.Clean("\xff")
	assert.ErrorIs(t, err, workspace.ErrPath)
	assert.Contains(t, err.Error(), "not valid UTF-8")
}

func TestInsideSymlinks(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	require.NoError(t, e.ws.Write("docs/a.txt", "inside"))
	require.NoError(t, os.Symlink("docs", filepath.Join(e.dir, "inner")))
	require.NoError(t, os.Symlink("docs/a.txt", filepath.Join(e.dir, "alias.txt")))
	require.NoError(t, os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.dir, "leak.txt")))

	// Reads and listings follow symlinks that stay inside.
	got, err := e.ws.Read("inner/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "inside", got)
	got, err = e.ws.Read("alias.txt")
	require.NoError(t, err)
	assert.Equal(t, "inside", got)
	entries, err := e.ws.List("inner")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "inner/a.txt", entries[0].Path)

	// Writes do not go through them.
	err = e.ws.Write("inner/b.txt", "x")
	assert.ErrorIs(t, err, workspace.ErrPath)
	assert.Contains(t, err.Error(), `"inner": it is a symlink`)
	err = e.ws.Write("alias.txt", "x")
	assert.ErrorIs(t, err, workspace.ErrPath)
	assert.Contains(t, err.Error(), "writes do not follow symlinks")

	// The root listing shows links as links.
	out, err := e.call(t, "list_files", map[string]string{})
	require.NoError(t, err)
	assert.Equal(t, "alias.txt (symlink)\ndocs/\ninner (symlink)\nleak.txt (symlink)", out)

	// Deleting a link removes the link, never its target.
	require.NoError(t, e.ws.Delete("leak.txt"))
	require.NoError(t, e.ws.Delete("inner"))
	data, err := os.ReadFile(filepath.Join(e.outside, "secret.txt"))
	require.NoError(t, err)
	assert.Equal(t, "top secret", string(data))
	got, err = e.ws.Read("docs/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "inside", got)
}

func TestTools(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	ctx, artifacts := toolloop.CollectArtifacts(context.Background())
	ctx, discoveries := toolloop.CollectDiscoveries(ctx)
	run := func(name string, args string) (string, error) {
		return e.tools[name].Call(ctx, json.RawMessage(args))
	}
	names := make([]string, 0, len(e.tools))
	for _, tl := range e.ws.Tools() {
		names = append(names, tl.Name())
		assert.NotEmpty(t, tl.Description())
		assert.Contains(t, string(tl.Schema()), `"path"`)
	}
	assert.Equal(t, []string{"read_file", "write_file", "append_file", "list_files", "delete_file"}, names)

	steps := []struct {
		tool, args, want, err string
	}{
		{tool: "list_files", args: `{}`, want: "(empty directory)"},
		{tool: "write_file", args: `{"path":"notes/today.md","content":"hello"}`, want: "wrote 5 bytes to notes/today.md"},
		{tool: "write_file", args: `"{\"path\":\"./notes//plan.md\",\"content\":\"\"}"`, want: "wrote 0 bytes to notes/plan.md"},
		{tool: "read_file", args: `{"path":"notes/today.md"}`, want: "hello"},
		{tool: "read_file", args: `{"path":"notes/plan.md"}`, want: "(empty file)"},
		{tool: "append_file", args: `{"path":"notes/today.md","content":", world"}`, want: "appended 7 bytes to notes/today.md (now 12 bytes)"},
		{tool: "append_file", args: `{"path":"log.txt","content":"één\n"}`, want: "appended 6 bytes to log.txt (now 6 bytes)"},
		{tool: "read_file", args: `{"path":"notes/today.md"}`, want: "hello, world"},
		{tool: "write_file", args: `{"path":"notes/today.md","content":"replaced"}`, want: "wrote 8 bytes to notes/today.md"},
		{tool: "list_files", args: `{"path":"."}`, want: "log.txt (6 bytes)\nnotes/"},
		{tool: "list_files", args: `{"path":"notes"}`, want: "notes/plan.md (0 bytes)\nnotes/today.md (8 bytes)"},
		{tool: "list_files", args: `{"path":"notes/today.md"}`, err: `"notes/today.md": not a directory`},
		{tool: "list_files", args: `{"path":"nowhere"}`, err: `"nowhere" does not exist`},
		{tool: "read_file", args: `{"path":"notes"}`, err: `"notes": is a directory; use list_files`},
		{tool: "read_file", args: `{"path":"missing.md"}`, err: `"missing.md" does not exist: file does not exist`},
		{tool: "read_file", args: `{"file":"x"}`, err: "invalid arguments: /: additionalProperties 'file' not allowed; /: missing properties: 'path'"},
		{tool: "write_file", args: `{"path":"notes"}`, err: "invalid arguments: /: missing properties: 'content'"},
		{tool: "write_file", args: `{"path":"notes","content":"x"}`, err: `"notes": is a directory`},
		{tool: "write_file", args: `{"path":"notes/today.md/x","content":"x"}`, err: `"notes/today.md/x": not a directory`},
		{tool: "delete_file", args: `{"path":"notes"}`, err: `"notes": directory not empty; delete its files first`},
		{tool: "delete_file", args: `{"path":"notes/plan.md"}`, want: "deleted notes/plan.md"},
		{tool: "delete_file", args: `{"path":"notes/today.md"}`, want: "deleted notes/today.md"},
		{tool: "delete_file", args: `{"path":"notes/today.md"}`, err: `"notes/today.md" does not exist`},
		{tool: "delete_file", args: `{"path":"notes/"}`, want: "deleted notes"},
		{tool: "list_files", args: `{"path":""}`, want: "log.txt (6 bytes)"},
	}
	for i, s := range steps {
		got, err := run(s.tool, s.args)
		if s.err != "" {
			require.Error(t, err, "step %d %s %s", i, s.tool, s.args)
			assert.Contains(t, err.Error(), s.err, "step %d", i)
			continue
		}
		require.NoError(t, err, "step %d %s %s", i, s.tool, s.args)
		assert.Equal(t, s.want, got, "step %d %s %s", i, s.tool, s.args)
	}
	assert.Equal(t, []string{"notes/today.md", "notes/plan.md", "log.txt"}, artifacts())
	// Reads are discoveries, one per path, with the latest first line;
	// failed reads, listings and writes are not.
	assert.Equal(t, []identity.Discovery{
		{Text: `first line "hello, world"`, Source: "notes/today.md"},
		{Text: "(empty file)", Source: "notes/plan.md"},
	}, discoveries())
}

func TestErrorsMatch(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	require.NoError(t, e.ws.Write("d/f.txt", "x"))
	_, err := e.ws.Read("nope")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = e.ws.Read("d")
	assert.ErrorIs(t, err, workspace.ErrIsDir)
	_, err = e.ws.List("d/f.txt")
	assert.ErrorIs(t, err, workspace.ErrNotDir)
	assert.ErrorIs(t, e.ws.Delete("d"), workspace.ErrNotEmpty)
	assert.ErrorIs(t, e.ws.Delete("nope"), fs.ErrNotExist)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "bin"), []byte{0xff, 0xfe, 0}, 0o600))
	_, err = e.ws.Read("bin")
	assert.ErrorIs(t, err, workspace.ErrNotText)
}

func TestLimits(t *testing.T) {
	e := newEnv(t, workspace.Limits{MaxReadBytes: 10, MaxWriteBytes: 20, Quota: 50, MaxListEntries: 3})
	assert.Equal(t, workspace.Limits{MaxReadBytes: 10, MaxWriteBytes: 20, Quota: 50, MaxFiles: workspace.DefaultMaxFiles, MaxListEntries: 3}, e.ws.Limits())

	// Writes: at most 20 bytes per file.
	require.NoError(t, e.ws.Write("a.txt", strings.Repeat("a", 20)))
	err := e.ws.Write("b.txt", strings.Repeat("b", 21))
	assert.ErrorIs(t, err, workspace.ErrTooLarge)
	assert.EqualError(t, err, `"b.txt": file too large: the content is 21 bytes, the write limit is 20`)
	_, err = os.Stat(filepath.Join(e.dir, "b.txt"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a refused write creates nothing")

	// Appends may not grow a file past the write limit.
	require.NoError(t, e.ws.Write("c.txt", strings.Repeat("c", 15)))
	err = e.ws.Append("c.txt", "123456")
	assert.ErrorIs(t, err, workspace.ErrTooLarge)
	assert.Contains(t, err.Error(), "the file would grow to 21 bytes")
	require.NoError(t, e.ws.Append("c.txt", "12345"))

	// Reads: at most 10 bytes.
	_, err = e.ws.Read("a.txt")
	assert.ErrorIs(t, err, workspace.ErrTooLarge)
	assert.EqualError(t, err, `"a.txt": file too large: 20 bytes, the limit is 10`)
	require.NoError(t, e.ws.Write("small.txt", "0123456789"))
	got, err := e.ws.Read("small.txt")
	require.NoError(t, err)
	assert.Equal(t, "0123456789", got)

	// Quota: 20 + 20 + 10 = 50 bytes used.
	used, err := e.ws.Usage()
	require.NoError(t, err)
	assert.Equal(t, int64(50), used)
	err = e.ws.Write("d.txt", "x")
	assert.ErrorIs(t, err, workspace.ErrQuota)
	assert.EqualError(t, err, `"d.txt": workspace quota exceeded: the workspace would hold 51 bytes, the quota is 50; delete files to make room`)
	assert.ErrorIs(t, e.ws.Append("small.txt", "x"), workspace.ErrQuota)
	_, err = e.ws.List("dir-that-would-be-made")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorIs(t, e.ws.Write("new/dir/d.txt", "x"), workspace.ErrQuota)
	_, err = os.Stat(filepath.Join(e.dir, "new"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a refused write creates no directories")
	// Replacing a file counts only the difference.
	require.NoError(t, e.ws.Write("a.txt", strings.Repeat("z", 20)))
	require.NoError(t, e.ws.Write("a.txt", "shrunk"))
	require.NoError(t, e.ws.Write("d.txt", "now it fits"))

	// Listings: at most 3 entries, the rest counted.
	entries, err := e.ws.List(".")
	require.NoError(t, err)
	require.Len(t, entries, 3)
	assert.Equal(t, workspace.Entry{Name: "a.txt", Path: "a.txt", Size: 6}, entries[0])
	out, err := e.call(t, "list_files", map[string]string{"path": "."})
	require.NoError(t, err)
	assert.Equal(t, "a.txt (6 bytes)\nc.txt (20 bytes)\nd.txt (11 bytes)\n... and 1 more entries not shown", out)
}

func TestDefaults(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	assert.Equal(t, workspace.Limits{
		MaxReadBytes:   256 << 10,
		MaxWriteBytes:  256 << 10,
		Quota:          64 << 20,
		MaxFiles:       10000,
		MaxListEntries: 500,
	}, e.ws.Limits())
	st, err := os.Stat(e.dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), st.Mode().Perm())
	assert.True(t, filepath.IsAbs(e.ws.Dir()))
}

func TestAtomicWritesLeaveNoTempFiles(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	for i := range 20 {
		require.NoError(t, e.ws.Write("a/b/file.txt", fmt.Sprint("version ", i)))
		require.NoError(t, e.ws.Append("a/log.txt", fmt.Sprintln("line", i)))
	}
	assert.ErrorIs(t, e.ws.Write("a/b/file.txt", strings.Repeat("x", 300<<10)), workspace.ErrTooLarge)
	assert.Equal(t, map[string]string{
		".":            "dir",
		"a":            "dir",
		"a/b":          "dir",
		"a/b/file.txt": "file:version 19",
		"a/log.txt":    "file:" + lines(20),
	}, snapshot(t, e.dir))
	st, err := os.Stat(filepath.Join(e.dir, "a/b/file.txt"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
}

func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintln(&b, "line", i)
	}
	return b.String()
}

func TestConcurrentAppends(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, e.ws.Append("shared.log", fmt.Sprintf("agent %02d\n", i)))
		}()
	}
	wg.Wait()
	got, err := e.ws.Read("shared.log")
	require.NoError(t, err)
	ls := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	sort.Strings(ls)
	want := make([]string, 16)
	for i := range want {
		want[i] = fmt.Sprintf("agent %02d", i)
	}
	assert.Equal(t, want, ls, "no append lost")
}

func TestClosed(t *testing.T) {
	e := newEnv(t, workspace.Limits{})
	require.NoError(t, e.ws.Close())
	require.NoError(t, e.ws.Close())
	_, err := e.ws.Read("a")
	assert.ErrorIs(t, err, workspace.ErrClosed)
	assert.ErrorIs(t, e.ws.Write("a", "x"), workspace.ErrClosed)
	assert.ErrorIs(t, e.ws.Append("a", "x"), workspace.ErrClosed)
	assert.ErrorIs(t, e.ws.Delete("a"), workspace.ErrClosed)
	_, err = e.ws.List(".")
	assert.ErrorIs(t, err, workspace.ErrClosed)
	_, err = e.ws.Usage()
	assert.ErrorIs(t, err, workspace.ErrClosed)
	_, err = e.call(t, "write_file", map[string]string{"path": "a", "content": "x"})
	assert.ErrorIs(t, err, workspace.ErrClosed)
}

func TestOpenErrors(t *testing.T) {
	_, err := workspace.Open("", workspace.Limits{})
	assert.Error(t, err)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = workspace.Open(file, workspace.Limits{})
	assert.Error(t, err)
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"a.md", "notes/today.md", "../x", "a/../../x", "/etc/passwd", `C:\Windows`, "C:/x",
		`\\server\share`, "x\x00y", "", ".", "./../x", "a//b/./c/", "..a", "\xff", "a\nb",
		strings.Repeat("n", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := workspace.Clean(p)
		if err != nil {
			require.ErrorIs(t, err, workspace.ErrPath)
			return
		}
		require.NotEmpty(t, c, "Clean(%q)", p)
		require.False(t, strings.HasPrefix(c, "/"), "Clean(%q) = %q", p, c)
		require.False(t, strings.ContainsAny(c, "\\\x00"), "Clean(%q) = %q", p, c)
		if c != "." {
			for _, part := range strings.Split(c, "/") {
				require.NotContains(t, []string{"", ".", ".."}, part, "Clean(%q) = %q has component %q", p, c, part)
			}
		}
		require.True(t, filepath.IsLocal(filepath.FromSlash(c)), "Clean(%q) = %q is not local", p, c)
		again, err := workspace.Clean(c)
		require.NoError(t, err, "Clean is not idempotent: %q -> %q", p, c)
		require.Equal(t, c, again, "Clean is not idempotent: %q -> %q", p, c)
	})
}

// FuzzSandbox throws arbitrary paths at every operation of a workspace that
// holds symlinks to the outside, and checks that nothing outside changes and
// that whatever was written is inside.
func FuzzSandbox(f *testing.F) {
	for _, s := range []string{
		"a.md", "out/x", "out/../x", "rel/secret.txt", "deep/mid/x", "leak.txt", "../outside/secret.txt",
		"inner/new.txt", "/tmp/x", `..\x`, "x\x00", "deep/./mid/../mid/x",
	} {
		f.Add(s)
	}
	base := f.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "ws")
	require.NoError(f, os.Mkdir(outside, 0o700))
	require.NoError(f, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret"), 0o600))
	ws, err := workspace.Open(dir, workspace.Limits{})
	require.NoError(f, err)
	defer ws.Close()
	for name, target := range map[string]string{
		"out": outside, "rel": "../outside", "leak.txt": filepath.Join(outside, "secret.txt"),
		"inner": "docs", "deep/mid": outside,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(f, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(f, os.Symlink(target, p))
	}
	require.NoError(f, ws.Write("docs/a.txt", "inside"))
	f.Fuzz(func(t *testing.T, p string) {
		werr := ws.Write(p, "fuzz")
		_ = ws.Append(p, "fuzz")
		_, _ = ws.Read(p)
		_, _ = ws.List(p)
		if werr == nil {
			c, err := workspace.Clean(p)
			require.NoError(t, err, "Write(%q) succeeded but Clean refuses it", p)
			st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(c)))
			require.NoError(t, err, "Write(%q) succeeded but %s is not a regular file inside", p, c)
			require.True(t, st.Mode().IsRegular(), "Write(%q) succeeded but %s is not a regular file inside: %v", p, c, st.Mode())
		}
		_ = ws.Delete(p)
		entries, err := os.ReadDir(outside)
		require.NoError(t, err, "outside changed after %q", p)
		require.Len(t, entries, 1, "outside changed after %q", p)
		require.Equal(t, "secret.txt", entries[0].Name(), "outside changed after %q", p)
		data, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
		require.NoError(t, err, "secret changed after %q", p)
		require.Equal(t, "top secret", string(data), "secret changed after %q", p)
	})
}
