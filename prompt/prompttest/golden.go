package prompttest

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/internal/atomicfile"
)

// UpdateFlag is the name of the command-line flag that makes [Golden]
// rewrite golden files: go test ./yourpkg -update (name the packages
// that use prompttest: in a package without the flag, -update is an error).
//
// prompttest registers the flag when it is initialised, unless a flag of
// that name already exists (for example one the package under test defines
// in its own non-test code or internal test files, which are initialised
// first). A test package that imports prompttest must not define its own
// "update" flag in its _test.go files of the external test package: the
// flag package panics on a duplicate. Use [Updating] instead.
const UpdateFlag = "update"

func init() {
	if flag.Lookup(UpdateFlag) == nil {
		flag.Bool(UpdateFlag, false, "rewrite golden files under testdata/ instead of comparing with them")
	}
}

// Updating reports whether the -update flag is set: golden files are
// rewritten instead of compared.
func Updating() bool {
	f := flag.Lookup(UpdateFlag)
	if f == nil {
		return false
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if b, ok := g.Get().(bool); ok {
			return b
		}
	}
	b, _ := strconv.ParseBool(f.Value.String())
	return b
}

var goldenName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Golden compares got with the golden file testdata/NAME.golden of the
// package being tested (the test's working directory). When they differ it
// fails the test with a line diff (see [Diff]); when the file does not
// exist it fails and says how to create it. With -update (see
// [Updating]) it writes got to the file instead, atomically, creating
// testdata/ if needed.
//
// The file holds got byte for byte; line endings "\r\n" in the file (a
// checkout that converted them) are read as "\n". name is a plain file
// name without extension: letters, digits, '_', '.', '-', not starting with
// '.' or '-'.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	if !goldenName.MatchString(name) {
		t.Fatalf("prompttest.Golden: invalid golden name %q (want letters, digits, _ . -; no path separators)", name)
		return
	}
	file := name + ".golden"
	path := filepath.Join("testdata", file)
	if Updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatalf("prompttest.Golden: %v", err)
			return
		}
		if err := atomicfile.WriteFile("testdata", file, []byte(got), 0o644); err != nil {
			t.Fatalf("prompttest.Golden: writing %s: %v", path, err)
			return
		}
		t.Logf("prompttest.Golden: wrote %s (%d bytes)", path, len(got))
		return
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("prompttest.Golden: %s does not exist; run go test -%s to create it", path, UpdateFlag)
		return
	}
	if err != nil {
		t.Fatalf("prompttest.Golden: %v", err)
		return
	}
	want := strings.ReplaceAll(string(data), "\r\n", "\n")
	if want == got {
		return
	}
	t.Errorf("prompttest.Golden: output differs from %s (run go test -%s to accept it):\n%s", path, UpdateFlag, Diff(want, got))
}
