package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/mcpserver"
)

// conformanceScenarios are the official MCP conformance tester's server
// scenarios (pinned in .ci/npm/package.json) that apply to what this server advertises: the
// lifecycle, logging, tools and resources listings, streamable HTTP and
// DNS-rebinding protection. The others call fixtures of the tester's own
// reference server (tools such as "test_simple_text", resources such as
// "test://static-text", prompts, completions), which this server does
// not have.
var conformanceScenarios = []string{
	"server-initialize", "ping", "logging-set-level", "tools-list", "resources-list",
	"server-sse-polling", "server-sse-multiple-streams", "dns-rebinding-protection",
}

// TestConformanceServer runs the official MCP conformance tester
// (@modelcontextprotocol/conformance) against the server over streamable
// HTTP.
func TestConformanceServer(t *testing.T) {
	tester := npmtest.Bin(t, "conformance")
	if testing.Short() {
		t.Skip("starts Node.js for each scenario")
	}
	f := newFixture(t)
	hs := testerEndpoint(t, f.server)
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), tester, "server", "--url", hs.URL, "--scenario", scenario)
			cmd.Env = npmtest.Env()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance server --scenario %s: %v\n%s", scenario, err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// testerEndpoint serves s over streamable HTTP for the conformance tester,
// which sends no credentials: the bearer token is added to every request.
func testerEndpoint(t *testing.T, s *mcpserver.Server) *httptest.Server {
	t.Helper()
	h, err := s.Handler(mcpserver.HTTPConfig{Token: "s3cret"})
	require.NoError(t, err)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer s3cret")
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}
