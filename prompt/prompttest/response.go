package prompttest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/prompt"
)

// MustParse parses raw and fails the test at once when it does not parse.
func MustParse(t testing.TB, raw string) *prompt.Response {
	t.Helper()
	r, err := prompt.ParseResponse(raw)
	if err != nil {
		t.Fatalf("prompttest.MustParse: %s: %v\ninput:\n%s", kindName(err), err, clip(raw))
		return nil
	}
	return r
}

// ParseFails asserts that raw does not parse and that the error is of the
// given kind ([prompt.ErrTooLarge], [prompt.ErrNoJSON], [prompt.ErrSyntax],
// [prompt.ErrSchema], [prompt.ErrEmptyGoal] or [prompt.ErrDuplicateKey]).
// It returns the [*prompt.ParseError] (for example to check its Pointer),
// or nil after reporting a failure.
func ParseFails(t testing.TB, raw string, kind error) *prompt.ParseError {
	t.Helper()
	r, err := prompt.ParseResponse(raw)
	if err == nil {
		t.Errorf("prompttest.ParseFails: parsed, want %v; got content %q", kind, r.Content)
		return nil
	}
	if !errors.Is(err, kind) {
		t.Errorf("prompttest.ParseFails: got %s (%v), want %v", kindName(err), err, kind)
		return nil
	}
	var pe *prompt.ParseError
	if !errors.As(err, &pe) {
		t.Errorf("prompttest.ParseFails: error %T is not a *prompt.ParseError: %v", err, err)
		return nil
	}
	return pe
}

// ParseFiles parses every file matching pattern (a [filepath.Glob]
// pattern, e.g. "testdata/responses/*.txt": model outputs you collected)
// and fails the test for each file that does not parse, or when no file
// matches. It returns the responses in file-name order (nil entries for
// failures). Use it to check that a schema change still accepts real
// outputs.
func ParseFiles(t testing.TB, pattern string) []*prompt.Response {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("prompttest.ParseFiles: %v", err)
		return nil
	}
	if len(files) == 0 {
		t.Errorf("prompttest.ParseFiles: no file matches %q", pattern)
		return nil
	}
	out := make([]*prompt.Response, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("prompttest.ParseFiles: %v", err)
			continue
		}
		r, err := prompt.ParseResponse(string(data))
		if err != nil {
			t.Errorf("prompttest.ParseFiles: %s: %s: %v", f, kindName(err), err)
			continue
		}
		out[i] = r
	}
	return out
}

// kindName names the class of a parse error.
func kindName(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{prompt.ErrTooLarge, "ErrTooLarge"},
		{prompt.ErrNoJSON, "ErrNoJSON"},
		{prompt.ErrSyntax, "ErrSyntax"},
		{prompt.ErrSchema, "ErrSchema"},
		{prompt.ErrEmptyGoal, "ErrEmptyGoal"},
		{prompt.ErrDuplicateKey, "ErrDuplicateKey"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "unclassified error"
}

// clip shortens a long input for a failure message.
func clip(s string) string {
	const n = 2000
	if runes.Count(s) <= n {
		return s
	}
	return runes.Head(s, n) + "…"
}
