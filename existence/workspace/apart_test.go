package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/workspace"
)

// TestCheckApart: the shapes a hostile test found accepted (-state X
// -workspace X; -state ws/st -workspace ws; a symbolic link to the
// workspace as the state directory) are refused, with an error that says
// how they overlap; directories apart are accepted, created or not.
func TestCheckApart(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(p, 0o700))
		return p
	}
	x := mk("x")
	mk("ws/st")
	mk("elsewhere")
	require.NoError(t, os.Symlink(x, filepath.Join(root, "link-to-x")))
	require.NoError(t, os.Symlink(filepath.Join(root, "ws"), filepath.Join(root, "elsewhere", "ws-link")))
	t.Chdir(root)

	tests := []struct {
		name, workspace, state, how string // how "" = apart
	}{
		{"same directory", x, x, "they are the same directory"},
		{"same directory, relative and absolute", "x", x, "they are the same directory"},
		{"same directory, trailing slash and dot", "./x/", "x/.", "they are the same directory"},
		{"state inside the workspace", "ws", "ws/st", "the state directory is inside the workspace"},
		{"workspace inside the state", "ws/st", "ws", "the workspace is inside the state directory"},
		{"state inside, not created yet", "ws", "ws/new/state", "the state directory is inside the workspace"},
		{"symlinked state directory", "x", "link-to-x", "they are the same directory"},
		{"symlinked workspace parent", "elsewhere/ws-link/st", "ws", "the workspace is inside the state directory"},
		{"neither exists yet, nested", "fresh", "fresh/state", "the state directory is inside the workspace"},
		{"apart", "ws", "x", ""},
		{"siblings sharing a prefix", "ws", "ws2", ""},
		{"apart, not created yet", "new-ws", "new-state", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := workspace.CheckApart(tt.workspace, tt.state)
			if tt.how == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, workspace.ErrOverlap)
			var oe *workspace.OverlapError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tt.how, oe.How)
			assert.Equal(t, tt.workspace, oe.Workspace)
			assert.Equal(t, tt.state, oe.State)
			assert.Contains(t, err.Error(), "could rewrite the agents' saved state")
		})
	}
	require.Error(t, workspace.CheckApart("", "x"))
}
