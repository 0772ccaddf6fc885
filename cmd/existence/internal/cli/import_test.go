package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/sqlitestore"
)

// hollowSample is the real hollow-agentOS memory in hollow's
// test data: one agent, scout, named Titan.
func hollowSample(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "hollow", "testdata", "hollow-memory"))
	require.NoError(t, err)
	return dir
}

// runCLI runs the existence command with args and returns its exit code,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestImport imports the real sample into a directory and a SQLite file:
// a dry run writes nothing, the import creates the agent, a second one is
// refused without -replace and replaces it with -replace.
func TestImport(t *testing.T) {
	src := hollowSample(t)
	tmp := t.TempDir()
	stores := []struct {
		kind, spec string
		load       func(t *testing.T) identity.Store
	}{
		{"dir", filepath.Join(tmp, "state"), func(t *testing.T) identity.Store {
			s, err := filestore.Open(filepath.Join(tmp, "state"), filestore.Options{})
			require.NoError(t, err)
			return s
		}},
		{"sqlite", "sqlite:" + filepath.Join(tmp, "trio.db"), func(t *testing.T) identity.Store {
			s, err := sqlitestore.Open(context.Background(), filepath.Join(tmp, "trio.db"), sqlitestore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		}},
	}
	for _, st := range stores {
		t.Run(st.kind, func(t *testing.T) {
			steps := []struct {
				name      string
				args      []string
				code      int
				want      []string // in stdout
				wantErr   string   // in stderr
				stored    bool     // the store holds scout afterwards
				wantFiles bool     // the store exists afterwards
			}{
				{"dry run", []string{"-dry-run"}, 0, []string{"would import", "(dry run: nothing written)", "scout (Titan): created; 20 opinions, 12 questions; goals: 162 read (146 DONE, 15 ABANDONED, 1 active), 100 kept", "trimmed: goals: 162 → 100"}, "", false, false},
				{"import", nil, 0, []string{"imported " + src, "scout (Titan): created"}, "", true, true},
				{"again", nil, 1, []string{"did not import", "scout (Titan): refused (stored: Titan, 100 goals, load 1.00)"}, "existence import: scout already in " + st.spec + ": nothing was imported (-replace overwrites them)", true, true},
				{"dry run again", []string{"-dry-run"}, 1, []string{"refused"}, "already in", true, true},
				{"replace, dry run", []string{"-replace", "-dry-run"}, 0, []string{"scout (Titan): replaced (stored: Titan"}, "", true, true},
				{"replace", []string{"-replace"}, 0, []string{"imported", "scout (Titan): replaced"}, "", true, true},
			}
			for _, step := range steps {
				code, out, errOut := runCLI(t, append([]string{"import", "-hollow", src, "-store", st.spec}, step.args...)...)
				assert.Equal(t, step.code, code, "%s: %s", step.name, errOut)
				for _, w := range step.want {
					assert.Contains(t, out, w, step.name)
				}
				if step.wantErr != "" {
					assert.Contains(t, errOut, step.wantErr, step.name)
				} else {
					assert.Empty(t, errOut, step.name)
				}
				_, err := os.Stat(strings.TrimPrefix(st.spec, "sqlite:"))
				assert.Equal(t, step.wantFiles, err == nil, "%s: the store exists: %v", step.name, err)
				if step.stored {
					s := st.load(t)
					got, err := s.Load(context.Background(), "scout")
					require.NoError(t, err, step.name)
					assert.Equal(t, "Titan", got.Identity.Name)
					assert.Len(t, got.Identity.Goals, 100)
				}
			}
		})
	}
}

func TestImportJSONAndErrors(t *testing.T) {
	src := hollowSample(t)
	code, out, errOut := runCLI(t, "import", "-hollow", src, "-store", filepath.Join(t.TempDir(), "s"), "-json", "-tz", "Europe/Paris")
	require.Equal(t, 0, code, errOut)
	var rep importReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Agents, 1)
	a := rep.Agents[0]
	assert.Equal(t, "scout", a.ID)
	assert.Equal(t, "created", a.Action)
	assert.Equal(t, map[string]int{"DONE": 146, "ABANDONED": 15, "active": 1}, a.Goals)
	assert.Equal(t, 5, a.StressorsActive)
	assert.Equal(t, 10, a.StressorsDemoted)
	assert.False(t, rep.DryRun)

	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no -hollow", []string{"-store", t.TempDir()}, 2, "-hollow DIR is required"},
		{"bad zone", []string{"-hollow", src, "-tz", "Mars/Olympus"}, 2, "-tz: unknown time zone Mars/Olympus"},
		{"bad store", []string{"-hollow", src, "-store", "mysql://x"}, 2, "unknown scheme"},
		{"not a memory directory", []string{"-hollow", t.TempDir(), "-store", t.TempDir()}, 1, "not a hollow-agentOS memory directory"},
		{"missing directory", []string{"-hollow", filepath.Join(t.TempDir(), "none"), "-store", t.TempDir()}, 1, "no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"import"}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, errOut, tt.want)
		})
	}
}

// TestImportMemories: the semantic memory of the real sample is imported
// with the states, counted line by line; a second import refuses, and
// -replace adds nothing already there.
func TestImportMemories(t *testing.T) {
	src := hollowSample(t)
	dir := filepath.Join(t.TempDir(), "state")
	code, out, errOut := runCLI(t, "import", "-hollow", src, "-store", dir, "-json")
	require.Equal(t, 0, code, errOut)
	var rep importReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Memories, 1)
	m := rep.Memories[0]
	assert.Equal(t, "scout", m.ID)
	assert.Equal(t, "created", m.Action)
	assert.Equal(t, 2796, m.Lines, "every line of metadata.jsonl")
	assert.Equal(t, m.Lines, m.Imported+m.Repeated+m.Deleted+m.Skipped)
	assert.Equal(t, m.Imported, m.Written)
	assert.Equal(t, m.Imported, m.Embedded+m.Pending)
	assert.Equal(t, 75, m.Rows)
	assert.Equal(t, "nomic-embed-text", m.Model)
	assert.Equal(t, 768, m.Dim)

	s, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	c, err := s.CountMemories(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, m.Imported, c.Memories)
	assert.Equal(t, m.Pending, c.Pending)

	code, out, errOut = runCLI(t, "import", "-hollow", src, "-store", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "memories of scout: refused")
	assert.Contains(t, errOut, "nothing was imported")
	code, out, errOut = runCLI(t, "import", "-hollow", src, "-store", dir, "-replace")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, fmt.Sprintf("memories of scout: added; 2796 lines → %d memories", m.Imported))
	assert.Contains(t, out, "0 written", "memories already stored are kept as they are")
}
