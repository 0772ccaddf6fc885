package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimulateWorld: -world feeds a month of simulated time with slot
// updates, and the same flags give the same bytes.
func TestSimulateWorld(t *testing.T) {
	args := func(dir string) []string {
		return []string{"-days", "30", "-heartbeat", "1h", "-world", "2", "-world-every", "12h", "-world-notify", "0.5", "-no-plots", "-out", dir}
	}
	a, b := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	require.NoError(t, runSimulateArgs(context.Background(), args(a), &out))
	assert.Regexp(t, `world: \d+ slot updates from 2 sources \(\d+ to the shared board\), \d+ notifications`, out.String())
	require.NoError(t, runSimulateArgs(context.Background(), args(b), &bytes.Buffer{}))
	first, err := os.ReadFile(filepath.Join(a, "trajectory.jsonl.gz"))
	require.NoError(t, err)
	second, err := os.ReadFile(filepath.Join(b, "trajectory.jsonl.gz"))
	require.NoError(t, err)
	assert.Equal(t, first, second, "a month of a world replays from the seed")

	for _, bad := range [][]string{{"-world", "-1"}, {"-world", "2", "-driver", "heartbeats"}, {"-world", "1", "-world-notify", "2"}} {
		_, err := parseSimulateFlags(bad)
		assert.Error(t, err, "%v", bad)
	}
}
