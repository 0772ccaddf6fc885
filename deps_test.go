package sdk_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corePackages are the packages an embedding program builds on: they must
// build without the heavy dependencies the servers, the terminal view, the
// plots and the PostgreSQL store bring.
var corePackages = []string{"existence", "llm/ollama", "prompt", "store/filestore"}

// heavyModules are the module path prefixes kept out of corePackages'
// dependencies: a browser driver (chromedp, for the monitor's browser
// tests), the terminal view (bubbletea and the charmbracelet modules),
// plotting (gonum.org/v1/plot), gRPC (the OTLP gRPC exporter) and the
// PostgreSQL driver (pgx).
var heavyModules = []string{
	"github.com/chromedp/",
	"github.com/charmbracelet/",
	"gonum.org/v1/plot",
	"google.golang.org/grpc",
	"github.com/jackc/pgx",
}

// heavyChains returns, for each package of graph (an import path → the
// import paths it imports) under one of the heavy prefixes and reachable
// from roots, the shortest import chain that pulls it in, from a root to
// the package, joined with " → ". The chains are sorted.
func heavyChains(graph map[string][]string, roots, heavy []string) []string {
	isHeavy := func(p string) bool {
		for _, h := range heavy {
			if p == strings.TrimSuffix(h, "/") || strings.HasPrefix(p, strings.TrimSuffix(h, "/")+"/") {
				return true
			}
		}
		return false
	}
	parent := map[string]string{}
	seen := map[string]bool{}
	queue := []string{}
	for _, r := range roots {
		if !seen[r] {
			seen[r] = true
			queue = append(queue, r)
		}
	}
	var chains []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if isHeavy(p) {
			chain := []string{p}
			for q := p; parent[q] != ""; q = parent[q] {
				chain = append(chain, parent[q])
			}
			slices.Reverse(chain)
			chains = append(chains, strings.Join(chain, " → "))
			continue // the chain to p names it; what p imports adds nothing
		}
		for _, d := range graph[p] {
			if !seen[d] {
				seen[d] = true
				parent[d] = p
				queue = append(queue, d)
			}
		}
	}
	slices.Sort(chains)
	return chains
}

func TestHeavyChains(t *testing.T) {
	graph := map[string][]string{
		"m/core":  {"fmt", "m/trace"},
		"m/trace": {"go.opentelemetry.io/otel/exporters/otlp/otlptracegrpc"},
		"m/other": {"github.com/jackc/pgx/v5"},
		"go.opentelemetry.io/otel/exporters/otlp/otlptracegrpc": {"google.golang.org/grpc"},
		"google.golang.org/grpc":                                {"google.golang.org/grpc/codes"},
		"github.com/jackc/pgx/v5":                               nil,
		"google.golang.org/grpcx":                               nil,
		"m/light":                                               {"google.golang.org/grpcx"},
	}
	tests := []struct {
		name  string
		roots []string
		want  []string
	}{
		{"pulled through two packages", []string{"m/core"}, []string{"m/core → m/trace → go.opentelemetry.io/otel/exporters/otlp/otlptracegrpc → google.golang.org/grpc"}},
		{"a root itself", []string{"github.com/jackc/pgx/v5"}, []string{"github.com/jackc/pgx/v5"}},
		{"two roots, each chain once", []string{"m/other", "m/core", "m/trace"}, []string{"m/other → github.com/jackc/pgx/v5", "m/trace → go.opentelemetry.io/otel/exporters/otlp/otlptracegrpc → google.golang.org/grpc"}},
		{"a longer name with the same prefix is not the module", []string{"m/light"}, nil},
		{"none", []string{"fmt"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, heavyChains(graph, tc.roots, heavyModules))
		})
	}
}

// TestCoreHasNoHeavyDependencies fails when one of corePackages imports,
// directly or not, a package of heavyModules, naming the chain that pulls
// it in. It runs `go list -deps` (skipped when go is not on PATH).
func TestCoreHasNoHeavyDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: the dependency check needs `go list`")
	}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}
	var roots []string
	for _, p := range corePackages {
		args = append(args, "./"+p)
		roots = append(roots, module+"/"+p)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(gobin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			graph[f[0]] = f[1:]
		}
	}
	for _, r := range roots {
		require.Contains(t, graph, r, "go list listed the core packages")
	}
	for _, c := range heavyChains(graph, roots, heavyModules) {
		t.Errorf("a core package pulls in a heavy dependency: %s", c)
	}
}
