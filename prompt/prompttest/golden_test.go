package prompttest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/prompt/prompttest"
)

// fakeTB records what a helper reports instead of failing the real test.
type fakeTB struct {
	testing.TB // nil: any method not overridden panics, so the test notices
	errs       []string
	fatal      bool
	logs       []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.fatal = true
}
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) failed() bool { return len(f.errs) > 0 }

// setUpdate sets the -update flag for the duration of the test.
func setUpdate(t *testing.T, on bool) {
	t.Helper()
	old := prompttest.Updating()
	require.NoError(t, flag.Set(prompttest.UpdateFlag, strconv.FormatBool(on)))
	t.Cleanup(func() { _ = flag.Set(prompttest.UpdateFlag, strconv.FormatBool(old)) })
}

func TestGoldenMatch(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, false)
	require.NoError(t, os.Mkdir("testdata", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "p.golden"), []byte("A\n\nB"), 0o644))
	f := &fakeTB{}
	prompttest.Golden(f, "p", "A\n\nB")
	assert.False(t, f.failed(), "%v", f.errs)
}

func TestGoldenMismatchFailsWithDiff(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, false)
	require.NoError(t, os.Mkdir("testdata", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "p.golden"), []byte("one\ntwo\nthree"), 0o644))
	f := &fakeTB{}
	prompttest.Golden(f, "p", "one\n2\nthree")
	require.Len(t, f.errs, 1)
	assert.False(t, f.fatal, "a mismatch is an error, not fatal: other goldens still run")
	msg := f.errs[0]
	assert.Contains(t, msg, filepath.Join("testdata", "p.golden"))
	assert.Contains(t, msg, "-update")
	assert.Contains(t, msg, "@@ want line 1, got line 1 @@\n  one\n- two\n+ 2\n  three\n")
}

func TestGoldenCRLFIsNormalised(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, false)
	require.NoError(t, os.Mkdir("testdata", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "p.golden"), []byte("A\r\n\r\nB"), 0o644))
	f := &fakeTB{}
	prompttest.Golden(f, "p", "A\n\nB")
	assert.False(t, f.failed(), "%v", f.errs)
}

func TestGoldenMissingFile(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, false)
	f := &fakeTB{}
	prompttest.Golden(f, "nope", "x")
	require.True(t, f.fatal)
	assert.Contains(t, f.errs[0], "does not exist; run go test -update")
}

func TestGoldenUpdateWrites(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, true)
	f := &fakeTB{}
	prompttest.Golden(f, "new", "hello\n")
	require.False(t, f.failed(), "%v", f.errs)
	data, err := os.ReadFile(filepath.Join("testdata", "new.golden"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(data), "written byte for byte")
	assert.Len(t, f.logs, 1)

	// And it now matches without -update.
	setUpdate(t, false)
	g := &fakeTB{}
	prompttest.Golden(g, "new", "hello\n")
	assert.False(t, g.failed())
	prompttest.Golden(g, "new", "hello")
	assert.True(t, g.failed())
	assert.Contains(t, g.errs[0], "want ends with a newline, got does not")
}

func TestGoldenInvalidName(t *testing.T) {
	t.Chdir(t.TempDir())
	setUpdate(t, true)
	for _, name := range []string{"", "../escape", "a/b", `a\b`, ".hidden", "-flag", "a b"} {
		f := &fakeTB{}
		prompttest.Golden(f, name, "x")
		assert.True(t, f.fatal, "%q", name)
	}
	_, err := os.Stat("testdata")
	assert.True(t, os.IsNotExist(err), "nothing was written")
}

func TestDiff(t *testing.T) {
	assert.Equal(t, "", prompttest.Diff("same", "same"))
	assert.Equal(t, "@@ want line 1, got line 1 @@\n- a\n+ b\n", prompttest.Diff("a", "b"))

	// Context is limited to 3 lines around each change; distant changes
	// make separate hunks.
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	want := strings.Join(lines, "\n")
	changed := append([]string{}, lines...)
	changed[1] = "LINE 2"
	changed[15] = "LINE 16"
	changed = append(changed[:10], append([]string{"inserted"}, changed[10:]...)...)
	got := strings.Join(changed, "\n")
	assert.Equal(t, `@@ want line 1, got line 1 @@
  line 1
- line 2
+ LINE 2
  line 3
  line 4
  line 5
@@ want line 8, got line 8 @@
  line 8
  line 9
  line 10
+ inserted
  line 11
  line 12
  line 13
  line 14
  line 15
- line 16
+ LINE 16
  line 17
  line 18
  line 19
`, prompttest.Diff(want, got))

	assert.Equal(t, "got ends with a newline, want does not\n", prompttest.Diff("a", "a\n"))
}

func TestDiffLargeInput(t *testing.T) {
	a := strings.Repeat("x\n", 3000)
	b := a + "y"
	d := prompttest.Diff(a, b)
	assert.Contains(t, d, "first difference at line 3001")
	assert.Contains(t, d, "+ y")
}
