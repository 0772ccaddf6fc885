package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/npmtest"
	"github.com/existence-loop/sdk/mcpserver"
)

// TestConformanceRequirements runs the conformance tester's requirement
// set of each spec revision (--requirements 2025-11-25 and 2026-07-28: the
// server scenarios the revision requires, frozen at its release) against
// the HTTP endpoint, which serves both. Every failure is either fixed or
// listed, with its reason, in testdata/conformance-{revision}-baseline.yml;
// the tester fails on a failure not listed and on a listed one that
// passes. $CONFORMANCE_OUT keeps the tester's results.
func TestConformanceRequirements(t *testing.T) {
	tester := npmtest.Bin(t, "conformance")
	if testing.Short() {
		t.Skip("starts Node.js for each scenario")
	}
	f := newFixture(t)
	hs := testerEndpoint(t, f.server)
	for _, revision := range []string{"2025-11-25", mcpserver.StatelessVersion} {
		t.Run(revision, func(t *testing.T) {
			baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-"+revision+"-baseline.yml"))
			require.NoError(t, err)
			args := []string{"server", "--url", hs.URL, "--requirements", revision, "-o", cmpOr(os.Getenv("CONFORMANCE_OUT"), t.TempDir())}
			if _, err := os.Stat(baseline); err == nil {
				args = append(args, "--expected-failures", baseline)
			}
			cmd := exec.CommandContext(t.Context(), tester, args...)
			cmd.Env = npmtest.Env()
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			require.NoError(t, err, "conformance server --requirements %s", revision)
		})
	}
}

// cmpOr returns a, or b when a is empty ($CONFORMANCE_OUT keeps the
// tester's results for reading).
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
