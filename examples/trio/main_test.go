package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrapperDryRun builds the example and runs it as scripts do: -dry-run
// prints the three prompts of `existence run -dry-run` and writes nothing;
// a bad flag exits 2 with a "trio:" message.
func TestWrapperDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command: install Go")
	}
	pkg, err := os.Getwd()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "trio")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Dir = pkg
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	dir := t.TempDir()
	cmd := exec.Command(bin, "-dry-run", "-now", "2026-04-13T12:00:00Z")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	for _, id := range []string{"scout", "analyst", "builder"} {
		assert.Contains(t, stdout.String(), "=== prompt: "+id+" ===\nYou are ")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a dry run writes nothing")
	golden, err := os.ReadFile(filepath.Join(pkg, "..", "..", "internal", "cli", "testdata", "dry-run.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(golden), stdout.String(), "the prompts of `existence run -dry-run`")

	out, err = exec.Command(bin, "-provider", "carrier-pigeon").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), `trio: -provider "carrier-pigeon": want ollama or openai`)
}
