package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceClientEnv makes the test binary the client that the MCP
// conformance tester starts (TestMain): mcptools connected to the URL it
// is given, calling every tool the scenario's server offers.
const conformanceClientEnv = "MCPTOOLS_CONFORMANCE_CLIENT"

// conformanceClient runs one client scenario against url and returns the
// exit code: 0 when every tool call succeeded.
func conformanceClient(url, scenario string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	set, err := mcptools.Connect(ctx, mcptools.Config{
		Servers: []mcptools.ServerConfig{{Name: "conf", URL: url}},
		// A person who accepts every proposed default: the SDK fills the
		// defaults into the empty answer.
		Elicit: func(context.Context, mcptools.Elicitation) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, scenario+":", err)
		return 1
	}
	defer set.Close()
	args := map[string]string{"conf__add_numbers": `{"a":2,"b":3}`}
	code := 0
	for _, tool := range set.Tools() {
		a := args[tool.Name()]
		if a == "" {
			a = `{}`
		}
		out, err := tool.Call(ctx, json.RawMessage(a))
		if err != nil {
			fmt.Fprintln(os.Stderr, tool.Name()+":", err)
			code = 1
			continue
		}
		fmt.Println(tool.Name()+":", out)
	}
	return code
}

// TestConformanceClient runs the official MCP conformance tester's client
// scenarios against mcptools: the handshake, a tool call, the resumption
// of a response stream the server closes early (GET with Last-Event-ID,
// after the SSE retry delay) and an elicitation answered with defaults.
func TestConformanceClient(t *testing.T) {
	tester := npmtest.Bin(t, "conformance")
	if testing.Short() {
		t.Skip("starts Node.js for each scenario")
	}
	for _, scenario := range []string{"initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"} {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.CommandContext(t.Context(), tester, "client", "--command", os.Args[0],
				"--scenario", scenario, "--timeout", "30000", "-o", out)
			cmd.Env = append(npmtest.Env(), conformanceClientEnv+"=1")
			b, err := cmd.CombinedOutput()
			if err != nil {
				checks, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
				t.Fatalf("conformance client --scenario %s: %v\n%s\nchecks: %v", scenario, err, b, checks)
			}
			t.Logf("%s", b)
		})
	}
}
