package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstalledCommand installs the command with go install, as a user
// does, and runs it as a process: help, version, the exit codes, and a
// dry run that prints the trio's prompts.
func TestInstalledCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs the command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command: install Go")
	}
	bindir := t.TempDir()
	install := exec.Command(gobin, "install", ".")
	install.Env = append(os.Environ(), "GOBIN="+bindir)
	out, err := install.CombinedOutput()
	require.NoError(t, err, string(out))
	bin := filepath.Join(bindir, "existence")
	if _, err := os.Stat(bin); err != nil {
		bin += ".exe"
	}
	work := t.TempDir()
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"-h"}, 0, "Usage: existence <command> [flags]", ""},
		{"no command", nil, 2, "", "Commands:"},
		{"command help", []string{"serve", "-h"}, 0, "-refresh duration", ""},
		{"version", []string{"version"}, 0, "existence github.com/existence-loop/sdk ", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", `existence: unknown command "frobnicate"`},
		{"bad flag", []string{"import", "-frobnicate"}, 2, "", "existence import: flag provided but not defined: -frobnicate"},
		{"failure", []string{"import", "-hollow", work, "-store", work}, 1, "", "existence import: hollow: not a hollow-agentOS memory directory"},
		{"dry run", []string{"run", "-dry-run", "-now", "2026-04-13T12:00:00Z"}, 0, "=== prompt: builder ===\nYou are Vault.", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Dir = work
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.code, code, stderr.String())
			assert.Contains(t, stdout.String(), tt.stdout)
			assert.Contains(t, stderr.String(), tt.stderr)
		})
	}
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written in the working directory")
}
