package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSimulateRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, runSimulateArgs(context.Background(), []string{"-agents", "3", "-days", "0.05", "-seed", "1", "-out", dir}, &out))
	for _, name := range []string{"trajectory.jsonl.gz", "summary.txt", "load.png", "load.svg", "stressors.png", "stressors.svg", "outcomes.png", "outcomes.svg"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Positive(t, fi.Size(), name)
		assert.Contains(t, out.String(), filepath.Join(dir, name), "prints where %s is", name)
	}
	for _, agent := range []string{"Cedar", "Cipher", "Vault", "TOTAL"} {
		assert.Contains(t, out.String(), agent)
	}
	first, err := os.ReadFile(filepath.Join(dir, "trajectory.jsonl.gz"))
	require.NoError(t, err)

	// The same flags give the same bytes.
	dir2 := t.TempDir()
	out.Reset()
	require.NoError(t, runSimulateArgs(context.Background(), []string{"-agents", "3", "-days", "0.05", "-seed", "1", "-out", dir2, "-no-plots"}, &out))
	second, err := os.ReadFile(filepath.Join(dir2, "trajectory.jsonl.gz"))
	require.NoError(t, err)
	assert.Equal(t, first, second)
	assert.NotContains(t, out.String(), "load.png")

	// Plain JSON Lines with -gzip=false, the same rows.
	dir3 := t.TempDir()
	require.NoError(t, runSimulateArgs(context.Background(), []string{"-agents", "3", "-days", "0.05", "-seed", "1", "-out", dir3, "-no-plots", "-gzip=false"}, &out))
	plain, err := os.ReadFile(filepath.Join(dir3, "trajectory.jsonl"))
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(first))
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(unzipped))
}

func TestSimulateDrivers(t *testing.T) {
	for _, args := range [][]string{
		{"-driver", "heartbeats", "-executor", "mix", "-slots", "0"},
		{"-executor", "toolloop"},
		{"-executor", "immediate", "-stressor", "0", "-resolve", "0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, runSimulateArgs(context.Background(), append([]string{"-days", "0.01", "-out", t.TempDir(), "-no-plots"}, args...), &out))
			assert.Contains(t, out.String(), "trajectory:")
		})
	}
}

func TestSimulateErrors(t *testing.T) {
	replay := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(replay, []byte("{oops\n"), 0o600))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-agents", "0"}, "-agents must be at least 1"},
		{[]string{"-driver", "fast"}, `-driver "fast"`},
		{[]string{"-executor", "magic"}, `-executor "magic"`},
		{[]string{"-replay", "a", "-hollow", "b"}, "exclude each other"},
		{[]string{"-replay", replay}, "bad replay file: line 1"},
		{[]string{"-hollow", t.TempDir()}, "hollow"},
		{[]string{"extra"}, "unexpected arguments: [extra]"},
	} {
		var out bytes.Buffer
		err := runSimulateArgs(context.Background(), append([]string{"-days", "0.01", "-out", t.TempDir()}, tt.args...), &out)
		require.Error(t, err, tt.args)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// runSimulateArgs parses args as the simulate command does and runs it.
func runSimulateArgs(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseSimulateFlags(args)
	if err != nil {
		return err
	}
	return runSimulate(ctx, o, stdout)
}
