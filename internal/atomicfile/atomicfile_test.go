package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, "a.json", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, "a.json", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(dir, "a.json", 10)
	if err != nil || string(got) != "two" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	st, err := os.Stat(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Errorf("perm = %o, want 600", perm)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestWriteFileRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "../x", "a/b", "/abs"} {
		if err := WriteFile(t.TempDir(), name, nil, 0o600); err == nil {
			t.Errorf("WriteFile(%q) succeeded", name)
		}
	}
}

func TestWriteFileReplacesSymlinkInsteadOfFollowing(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "a.json")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	if err := WriteFile(dir, "a.json", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("write followed the symlink: victim now %q", b)
	}
}

func TestReadFileRefusals(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
	os.WriteFile(filepath.Join(dir, "big"), []byte(strings.Repeat("x", 11)), 0o600)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	symlinkErr := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "escape"))

	tests := []struct {
		name string
		want error // nil: any error
	}{
		{"big", ErrTooLarge},
		{"sub", ErrNotRegular},
		{"missing", fs.ErrNotExist},
		{"../" + filepath.Base(outside) + "/secret", nil},
	}
	if symlinkErr == nil {
		tests = append(tests, struct {
			name string
			want error
		}{"escape", nil})
	}
	for _, tt := range tests {
		_, err := ReadFile(dir, tt.name, 10)
		if err == nil {
			t.Errorf("ReadFile(%q) succeeded", tt.name)
			continue
		}
		if tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", tt.name, err, tt.want)
		}
	}
}
