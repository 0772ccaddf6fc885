package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/internal/npmtest"
)

// TestInspectorStrict runs the MCP Inspector's CLI (@modelcontextprotocol/
// inspector, a client nobody here wrote) over stdio against
// `existence run -mcp-serve` on the stand-in model: it lists the tools in
// --strict mode, which fails on any tool schema that some client's
// schema subset would refuse, then calls one.
func TestInspectorStrict(t *testing.T) {
	inspector := npmtest.Bin(t, "mcp-inspector")
	if testing.Short() {
		t.Skip("starts Node.js and the trio")
	}
	dir := t.TempDir()
	run := strings.Join([]string{"run", "-mcp-serve", "-llm-url", "standin:?latency=1s", "-heartbeat", "1h"}, "\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"tools/list --strict", []string{"--strict", "--method", "tools/list"}, `"agent_events"`},
		{"tools/call list_agents", []string{"--method", "tools/call", "--tool-name", "list_agents"}, `Cedar`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--cli", "--cwd", dir, "-e", childEnv + "=" + run}, tc.args...)
			cmd := exec.CommandContext(t.Context(), inspector, append(args, os.Args[0])...)
			cmd.Env = npmtest.Env()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("mcp-inspector %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			}
			assert.Contains(t, string(out), tc.want)
		})
	}
}
