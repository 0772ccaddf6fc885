package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunIdempotent writes the tiny shape from a small repository twice:
// the second run finds the file up to date and leaves it as is; another
// seed rewrites it.
func TestRunIdempotent(t *testing.T) {
	repo := t.TempDir()
	text := strings.Repeat("package x\n\n// Hello, \"world\": {json}.\nfunc f() int { return 42 }\n", 30)
	if err := os.WriteFile(filepath.Join(repo, "x.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	runOK := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"-out", out, "-repo", repo, "-tiny"}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("run: %v (%s)", err, stderr.String())
		}
		return stdout.String()
	}
	first := runOK()
	if !strings.HasPrefix(first, out+"\t") || !strings.Contains(first, " parameters") || strings.Contains(first, "up to date") {
		t.Errorf("first run printed %q", first)
	}
	a, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if second := runOK(); !strings.Contains(second, "(up to date)") {
		t.Errorf("second run printed %q", second)
	}
	if third := runOK("-seed", "2"); strings.Contains(third, "up to date") {
		t.Errorf("another seed printed %q", third)
	}
	b, _ := os.ReadFile(out)
	if bytes.Equal(a, b) || len(a) != len(b) {
		t.Errorf("another seed: %d and %d bytes, equal %v", len(a), len(b), bytes.Equal(a, b))
	}
	if err := run(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("no -out accepted")
	}
}
