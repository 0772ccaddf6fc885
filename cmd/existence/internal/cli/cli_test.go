package cli

import (
	"bytes"
	"flag"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommandList: -h, --help and help list every command with its
// summary on stdout and exit 0; no command at all lists them on stderr and
// exits 2.
func TestCommandList(t *testing.T) {
	names := []string{"run", "init", "swarm", "simulate", "import", "memory", "serve", "tui", "version", "help"}
	require.Len(t, commands, len(names))
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}, {}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, args...)
			list := out
			if len(args) == 0 {
				assert.Equal(t, ExitUsage, code)
				assert.Empty(t, out)
				list = errOut
			} else {
				assert.Equal(t, ExitOK, code)
				assert.Empty(t, errOut)
			}
			assert.Contains(t, list, "Usage: existence <command> [flags]")
			for i, name := range names {
				assert.Equal(t, name, commands[i].name)
				assert.Contains(t, list, "\n  "+name+" ", name)
				assert.Contains(t, list, commands[i].summary, name)
			}
		})
	}
}

// TestCommandHelp: CMD -h and help CMD print the command's usage and
// every one of its flags but the hidden aliases on stdout and exit 0.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, c.name, "-h")
			require.Equal(t, ExitOK, code, errOut)
			assert.Empty(t, errOut)
			assert.True(t, strings.HasPrefix(out, "Usage: existence "+c.name+" [flags]"), out)
			assert.NotContains(t, out, "{prog}")
			n := 0
			fs := setupOnly(c)
			fs.VisitAll(func(f *flag.Flag) {
				if hiddenFlags[fs.Name()+"/"+f.Name] {
					return
				}
				n++
				assert.Contains(t, out, "\n  -"+f.Name, "flag -%s", f.Name)
			})
			if n > 0 {
				assert.Contains(t, out, "\nFlags:\n")
			}
			code, again, _ := runCLI(t, "help", c.name)
			assert.Equal(t, ExitOK, code)
			assert.Equal(t, out, again, "help CMD prints what CMD -h prints")
		})
	}
}

// TestSharedFlagNames: a flag for the same thing has the same name in
// every command that has it.
func TestSharedFlagNames(t *testing.T) {
	has := func(c *command, name string) bool { return setupOnly(c).Lookup(name) != nil }
	for _, tt := range []struct {
		flag     string
		commands []*command
	}{
		{"store", []*command{runCommand, swarmCommand, importCommand, memoryCommand, serveCommand}},
		{"hollow", []*command{runCommand, importCommand, simulateCommand}},
		{"heartbeat", []*command{runCommand, swarmCommand, simulateCommand}},
		{"json", []*command{runCommand, swarmCommand, importCommand, memoryCommand, versionCommand}},
		{"agent", []*command{memoryCommand}},
		{"embed-url", []*command{runCommand, memoryCommand, serveCommand}},
		{"embed-model", []*command{runCommand, memoryCommand, serveCommand}},
		{"embed-provider", []*command{runCommand, memoryCommand}},
		{"seed", []*command{swarmCommand, simulateCommand}},
		{"provider", []*command{runCommand, swarmCommand}},
		{"llm-url", []*command{runCommand, swarmCommand}},
		{"model", []*command{runCommand, swarmCommand}},
		{"token-budget", []*command{runCommand, swarmCommand}},
		{"autonomy-workers", []*command{runCommand, swarmCommand}},
		{"http", []*command{runCommand, serveCommand}},
		{"http-token", []*command{runCommand, serveCommand, tuiCommand}},
		{"agents", []*command{swarmCommand, simulateCommand}},
		{"duration", []*command{swarmCommand}},
		{"v", []*command{runCommand}},
		{"dry-run", []*command{runCommand, importCommand}},
	} {
		for _, c := range tt.commands {
			assert.True(t, has(c, tt.flag), "%s has -%s", c.name, tt.flag)
		}
	}
	// No command spells them differently.
	for _, c := range commands {
		fs := setupOnly(c)
		fs.VisitAll(func(f *flag.Flag) {
			if hiddenFlags[fs.Name()+"/"+f.Name] {
				return // an old name kept as a hidden alias for one release
			}
			for _, other := range []string{"token", "state", "import-hollow", "addr", "listen", "db", "dir", "verbose", "n", "time"} {
				if f.Name == other {
					t.Errorf("%s has -%s: use the shared name", c.name, f.Name)
				}
			}
		})
	}
}

// TestOldFlagNamesAreHiddenAliases: the names replaced by the shared ones
// (run -state and -import-hollow, tui -token) still work for one release,
// setting the new flag, and help no longer lists them.
func TestOldFlagNamesAreHiddenAliases(t *testing.T) {
	o, err := parseRunFlags([]string{"-state", "old-dir", "-import-hollow", "mem"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "old-dir", o.store)
	assert.Equal(t, "mem", o.importHollow)
	for _, c := range []struct {
		cmd       string
		old, name string
	}{{"run", "state", "store"}, {"run", "import-hollow", "hollow"}, {"tui", "token", "http-token"}} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, Main([]string{c.cmd, "-h"}, strings.NewReader(""), &out, &errb))
		help := out.String() + errb.String()
		assert.Contains(t, help, "  -"+c.name+" ", "%s -h lists -%s", c.cmd, c.name)
		assert.NotContains(t, help, "  -"+c.old+" ", "%s -h hides -%s", c.cmd, c.old)
	}
}

// TestExitCodes: an unknown command or flag, a bad value or a bad
// combination exits 2; a failure while running exits 1 with "existence
// CMD: reason" on stderr.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, ExitUsage, `existence: unknown command "frobnicate"`},
		{"unknown flag", []string{"run", "-frobnicate"}, ExitUsage, "existence run: flag provided but not defined: -frobnicate\nRun 'existence help run' for usage."},
		{"bad value", []string{"swarm", "-agents", "many"}, ExitUsage, `existence swarm: invalid value "many" for flag -agents`},
		{"bad combination", []string{"swarm", "-agents", "0"}, ExitUsage, "existence swarm: -agents must be positive"},
		{"unexpected argument", []string{"simulate", "extra"}, ExitUsage, "existence simulate: unexpected arguments: [extra]"},
		{"help of nothing", []string{"help", "frobnicate"}, ExitUsage, `unknown command "frobnicate"`},
		{"runtime error", []string{"run", "-state", dir, "-show", "nobody"}, ExitError, "existence run: -show nobody: "},
		{"runtime error, import", []string{"import", "-hollow", dir, "-store", dir}, ExitError, "existence import: hollow: not a hollow-agentOS memory directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, errOut, tt.want)
			assert.Empty(t, out)
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	require.Equal(t, ExitOK, code)
	assert.True(t, strings.HasPrefix(out, "existence github.com/existence-loop/sdk "), out)

	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/existence-loop/sdk", Version: "v0.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0b555eb"}, {Key: "vcs.time", Value: "2026-11-23T09:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	for _, tt := range []struct {
		name string
		read func() (*debug.BuildInfo, bool)
		want []string
	}{
		{"stamped", stamped, []string{"existence github.com/existence-loop/sdk v0.4.0\n", "revision 0b555eb (modified), 2026-11-23T09:00:00Z\n", "go1.26.8 "}},
		{"no build info", func() (*debug.BuildInfo, bool) { return nil, false }, []string{"existence github.com/existence-loop/sdk unknown\n", "revision unknown"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := readVersion(tt.read).String()
			for _, w := range tt.want {
				assert.Contains(t, s, w)
			}
		})
	}
	code, out, _ = runCLI(t, "version", "-json")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, `"module": "github.com/existence-loop/sdk"`)
}

// TestNoMainOutsideCmdAndExamples: `go install ./...` installs only the
// commands of cmd/ (and the examples'); no other package is a program.
func TestNoMainOutsideCmdAndExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	require.NoError(t, err)
	var mains []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if f.Name.Name == "main" && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "examples/") {
			mains = append(mains, rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, mains, "package main outside cmd/ and examples/")
}

// TestEmptyModelIsAnError: an explicitly empty -model (a shell variable
// that was not set) is a usage error in run and swarm, not a silent
// default; left out, run uses the provider's default.
func TestEmptyModelIsAnError(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-model", ""}, {"run", "-model="}, {"run", "-model", "  "},
		{"swarm", "-model", ""}, {"swarm", "-llm-url", "standin:", "-model="},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, args...)
			assert.Equal(t, ExitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, `invalid value "`)
			assert.Contains(t, errOut, "must name a model; leave -model out for the default (qwen3.5:9b with ollama)")
		})
	}
	o, err := parseRunFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, defaultOllamaModel, o.model, "left out: the default")
	o, err = parseRunFlags([]string{"-model", "llama3.2:3b"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "llama3.2:3b", o.model)
}
