package npmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// InstallHint is the one line that installs every tool of this package.
const InstallHint = "mkdir -p ~/.cache/existence-npm && cp .ci/npm/package.json ~/.cache/existence-npm/ && npm install --prefix ~/.cache/existence-npm (or run .ci/run)"

// Dir is where the tools are installed: $EXISTENCE_NPM, or
// $HOME/.cache/existence-npm.
func Dir() string {
	if d := os.Getenv("EXISTENCE_NPM"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "existence-npm")
	}
	return filepath.Join(home, ".cache", "existence-npm")
}

// BinDir is the directory of the installed executables (and of node).
func BinDir() string { return filepath.Join(Dir(), "node_modules", ".bin") }

// Bin returns the path of the installed executable name (e.g.
// "conformance", "mcp-server-everything"). It skips t, with
// [InstallHint], when name or node is not installed.
func Bin(t testing.TB, name string) string {
	t.Helper()
	for _, n := range []string{"node", name} {
		if _, err := os.Stat(filepath.Join(BinDir(), n)); err != nil {
			t.Skipf("%s is not installed in %s; install: %s", n, Dir(), InstallHint)
		}
	}
	return filepath.Join(BinDir(), name)
}

// File returns the path of a file inside node_modules (e.g.
// "axe-core/axe.min.js"), skipping t with [InstallHint] when it is missing.
func File(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(), "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed in %s; install: %s", rel, Dir(), InstallHint)
	}
	return p
}

// Env is this process's environment with [BinDir] first in PATH, so that
// the tools' "#!/usr/bin/env node" finds the pinned Node.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
}
