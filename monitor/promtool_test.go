package monitor_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/monitor"
)

// TestPromtoolChecksMetrics passes /metrics, after cycles, a fallback and
// a pending request, through Prometheus's own linter (`promtool check
// metrics`): names, units, help texts and types as Prometheus expects.
func TestPromtoolChecksMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install it with `apt-get install prometheus`")
	}
	e := newEnv(t, 3, monitor.Config{})
	ctx := context.Background()
	e.models["scout"].Add(stressorReply(t, "g", "invisibility"))
	require.NoError(t, e.rnr.Agent("scout").Tick(ctx))
	require.NoError(t, e.rnr.Agent("analyst").Tick(ctx)) // no reply queued: a fallback
	_, err = e.reqs.Submit(ctx, "scout", requests.Question, "q")
	require.NoError(t, err)
	e.mon.Observe(event.Event{Kind: event.MindFailed, AgentID: "scout", Text: "feed"})
	status, body := do(t, e.mon, "GET", "/metrics", "", nil)
	require.Equal(t, 200, status)

	cmd := exec.CommandContext(t.Context(), promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool check metrics:\n%s", out)
}
