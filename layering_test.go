package sdk_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/existence-loop/sdk"

// layers orders the module's packages from the contracts at the bottom to
// the commands at the top, as database/sql/driver sits below database/sql:
// a package may import packages of its own layer or below, never above.
// The first matching prefix decides (longest prefixes first).
var layers = []struct {
	prefix string
	layer  int
}{
	{"cmd/", 6}, // the commands and their internal packages
	{"examples/", 6},
	{"monitor", 5},
	{"agentdef", 5}, // agents defined as files: above the loop, which never imports it
	{"mcpserver", 5},
	{"a2aserver", 5},
	{"hostaccess", 5},       // what monitor, mcpserver and a2aserver serve from: auth, the agent source
	{"existence/event", 3},  // what agents report: below the agent and the runner
	{"existence/budget", 3}, // the token budget's value types
	{"existence/runner", 4}, // the runner: above the agent, by the rule in TestLayering
	{"existence", 4},
	{"prompt", 3},
	{"store/", 2}, // the backends: beside the contracts they implement, never below them (see TestLayering)
	{"hollow", 2}, // the original's importer: above identity and memory, which it fills
	{"identity", 2},
	{"memory", 2},
	{"llm", 1},   // the model contract, and below it by rule (TestLayering): llm/ctxwindow, llm/middleware, llm/pool, then the adapters
	{"clock", 0}, // the one time source: imports nothing of the SDK
	{"task", 0},
	{"slot", 0},
	{"lease", 0},
	{"suffering", 0},
	{"internal/engine", 1}, // the real engine of the TestEngine tests: beside the models, on llm/llmtest's template
	{"internal/", 0},
	{"", 7}, // the root package: documentation only
}

// layerOf returns the layer of the package at pkg (a path inside the
// module): the first entry of layers that is pkg itself or, for a prefix
// ending in "/", a parent of it; a package and its subpackages share a
// layer.
func layerOf(pkg string) int {
	for _, l := range layers {
		p := strings.TrimSuffix(l.prefix, "/")
		if pkg == p || (p != "" && strings.HasPrefix(pkg, p+"/")) {
			return l.layer
		}
	}
	return 7
}

// TestLayering fails when a package imports one above it: the stores and
// the model adapters never import the loop, the contracts import nothing of
// the SDK's above them, and no library imports a command.
func TestLayering(t *testing.T) {
	fset := token.NewFileSet()
	imports := map[string]map[string]bool{} // package dir → SDK imports
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, module+"/"); ok {
				imports[dir][rest] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, imports, "existence", "the walk found the packages")
	for dir, deps := range imports {
		for dep := range deps {
			assert.LessOrEqual(t, layerOf(dep), layerOf(dir), "%s (layer %d) imports %s (layer %d), a layer above it", dir, layerOf(dir), dep, layerOf(dep))
		}
	}
	for _, dir := range []string{"identity", "store/filestore", "store/sqlitestore", "store/pgstore", "store/taskqueue", "store/storetest", "llm", "llm/ctxwindow", "llm/middleware", "llm/pool", "llm/ollama", "llm/openai"} {
		for dep := range imports[dir] {
			assert.False(t, strings.HasPrefix(dep, "existence"), "%s imports %s", dir, dep)
		}
	}
	for dir, deps := range imports {
		if layerOf(dir) > layerOf("store") || strings.HasPrefix(dir, "store/") {
			continue
		}
		for dep := range deps {
			assert.False(t, strings.HasPrefix(dep, "store/"), "%s imports the backend %s: the contracts never import their implementations", dir, dep)
		}
	}
	// Inside llm: the contract imports none of its subpackages; window
	// planning stands below the middleware, the middleware below the pools,
	// and none of them imports an adapter or the test stand-ins.
	for dir, below := range map[string][]string{
		"llm":            {},
		"llm/ctxwindow":  {"llm"},
		"llm/middleware": {"llm", "llm/ctxwindow"},
		"llm/pool":       {"llm", "llm/ctxwindow", "llm/middleware"},
	} {
		require.Contains(t, imports, dir, "the walk found %s", dir)
		for dep := range imports[dir] {
			if strings.HasPrefix(dep, "llm/internal/") || !strings.HasPrefix(dep, "llm") {
				continue
			}
			assert.Contains(t, below, dep, "%s imports %s, which stands above it", dir, dep)
		}
	}
	// The agent stands below its runner: existence and its internal
	// packages never import existence/runner (the runner reaches agents
	// through existence/internal/wire).
	for dir, deps := range imports {
		if dir == "existence" || strings.HasPrefix(dir, "existence/internal/") {
			assert.NotContains(t, deps, "existence/runner", "%s imports the runner, which stands above it", dir)
		}
	}
	for _, dir := range []string{"mcpserver", "a2aserver", "hostaccess"} {
		assert.NotContains(t, imports[dir], "monitor", "%s stands beside the monitor, not on it: what they share is in hostaccess", dir)
	}
	for dir, deps := range imports {
		if dir == "identity" || strings.HasPrefix(dir, "identity/") {
			assert.NotContains(t, deps, "memory", "%s: identity stands below memory (the original's importer is hollow)", dir)
		}
	}
	for _, dir := range []string{"task", "lease", "slot"} {
		for dep := range imports[dir] {
			assert.True(t, strings.HasPrefix(dep, "internal/"), "the contract package %s imports %s", dir, dep)
		}
	}
}

func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]int{
		"existence": 4, "existence/runner": 4, "existence/toolloop": 4, "store/pgstore": 2, "store/taskqueue": 2, "cmd/internal/storespec": 6, "llm/llmtest": 1, "llm/middleware": 1, "llm/pool": 1, "llm/ctxwindow": 1,
		"internal/heap": 0, "cmd/existence/internal/cli/tui": 6, "lease": 0, "memory": 2, "prompt/prompttest": 3,
		"monitor": 5, "agentdef": 5, "a2aserver": 5, "existence/workflow": 4, "cmd/existence": 6, "": 7, "slot": 0, "existence/minds": 4, "hollow": 2, "hostaccess": 5, "internal/engine/gguf": 1,
	} {
		assert.Equal(t, want, layerOf(pkg), pkg)
	}
}
