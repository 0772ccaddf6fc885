package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteFile(dir, "a.json", []byte("one"), 0o600))
	require.NoError(t, WriteFile(dir, "a.json", []byte("two"), 0o600))
	got, err := ReadFile(dir, "a.json", 10)
	require.NoError(t, err, "ReadFile")
	require.Equal(t, "two", string(got), "ReadFile")
	st, err := os.Stat(filepath.Join(dir, "a.json"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), "perm")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "temp files left behind")
}

func TestWriteFileRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "../x", "a/b", "/abs"} {
		assert.Error(t, WriteFile(t.TempDir(), name, nil, 0o600), "WriteFile(%q) succeeded", name)
	}
}

func TestWriteFileReplacesSymlinkInsteadOfFollowing(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	if err := os.Symlink(target, filepath.Join(dir, "a.json")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	require.NoError(t, WriteFile(dir, "a.json", []byte("new"), 0o600))
	b, _ := os.ReadFile(target)
	require.Equal(t, "keep", string(b), "write followed the symlink")
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
		if !assert.Error(t, err, "ReadFile(%q) succeeded", tt.name) {
			continue
		}
		if tt.want != nil {
			assert.ErrorIs(t, err, tt.want, "ReadFile(%q)", tt.name)
		}
	}
}
