package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunRefusesOverlappingStateAndWorkspace: a tool call must never write
// the agents' saved state, so run refuses a state directory and a
// workspace that are one directory, or either inside the other, also
// through a symlink, and a SQLite file inside the workspace.
func TestRunRefusesOverlappingStateAndWorkspace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ws", "st"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "elsewhere"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(dir, "ws"), filepath.Join(dir, "link")))
	t.Chdir(dir)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"the same directory", []string{"-state", "ws", "-workspace", "ws"}},
		{"the state inside the workspace", []string{"-state", "ws/st", "-workspace", "ws"}},
		{"the workspace inside the state", []string{"-state", "ws", "-workspace", "ws/st"}},
		{"through a symlink", []string{"-state", "link", "-workspace", "ws"}},
		{"a SQLite file in the workspace", []string{"-store", "sqlite:ws/agents.db", "-workspace", "ws"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := Main(append([]string{"run", "-dry-run"}, tt.args...), strings.NewReader(""), &out, &errb)
			assert.Equal(t, 1, code, errb.String())
			assert.Contains(t, errb.String(), "-state/-store and -workspace")
			assert.Empty(t, out.String(), "nothing ran")
		})
	}
	var out, errb strings.Builder
	code := Main([]string{"run", "-dry-run", "-state", "elsewhere", "-workspace", "ws"}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, 0, code, errb.String())
}
