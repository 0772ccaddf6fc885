package cli

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSizedWorkers: against the simulated model, -autonomy-workers 0 sizes
// the lane to the load (agents ÷ period × call time + 10%), at least
// GOMAXPROCS and at most the agents.
func TestSizedWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tt := range []struct {
		name string
		o    swarmOptions
		want int
	}{
		{"the defaults", swarmOptions{agents: 1000, heartbeat: 6 * time.Second, latency: 2 * time.Second, jitter: 200 * time.Millisecond}, 404},
		{"10,000 agents", swarmOptions{agents: 10000, heartbeat: 6 * time.Second, latency: 2 * time.Second}, 3667},
		{"a cooldown longer than the heartbeat", swarmOptions{agents: 1000, heartbeat: 6 * time.Second, cooldown: 12 * time.Second, latency: 2 * time.Second}, 184},
		{"an instant model", swarmOptions{agents: 1000, heartbeat: time.Second}, procs},
		{"no more than the agents", swarmOptions{agents: 3, heartbeat: time.Second, latency: 10 * time.Second}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, why := sizedWorkers(&tt.o)
			assert.Equal(t, tt.want, n)
			assert.Contains(t, why, "sized to the load")
		})
	}
}

// TestSwarmDefaultsShowTheScheduler: with the default -autonomy-workers
// against the simulated model, the lane is sized to the load, not the
// adaptive limit (which starts at one worker), so every agent cycles in
// the first two heartbeats, and the report says how the workers were
// chosen. Explicit workers are kept.
func TestSwarmDefaultsShowTheScheduler(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "50", "-heartbeat", "1s", "-model-latency", "100ms", "-jitter", "0s", "-duration", "2s"}, io.Discard)
	require.NoError(t, err)
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, res.Concurrency.Adaptive)
	assert.Equal(t, max(6, runtime.GOMAXPROCS(0)), res.AutonomyWorkers) // 50 ÷ 1 s × 0.1 s + 10%
	assert.Equal(t, 50, res.AgentsCycled, "every agent cycled")
	var out bytes.Buffer
	require.NoError(t, res.print(&out, false))
	assert.Contains(t, out.String(), "autonomy workers (sized to the load: 50 agents ÷ 1.0 s × 0.1 s a model call + 10%; the simulated model never queues)")

	o, err = parseSwarmFlags([]string{"-agents", "5", "-heartbeat", "1s", "-model-latency", "10ms", "-jitter", "0s", "-duration", "200ms", "-autonomy-workers", "2"}, io.Discard)
	require.NoError(t, err)
	res, err = runSwarm(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.AutonomyWorkers)
	assert.Empty(t, res.WorkersSized)
}

// TestSwarmSaysWhenTheStandinBoundsIt: a report against a stand-in says
// its capacity, and when the run used most of it, that the stand-in, not
// the SDK, bounded the throughput and how to give it more.
func TestSwarmSaysWhenTheStandinBoundsIt(t *testing.T) {
	for _, tt := range []struct {
		requests int
		bound    bool
	}{{29, true}, {10, false}} {
		res := &swarmResult{DurationS: 15, Concurrency: runner.ConcurrencyStats{Adaptive: true},
			Server: &swarmServer{Provider: "ollama", URL: "http://127.0.0.1:1", Model: "m", Standin: &swarmStandin{Slots: 1, Queue: 4, LatencyMS: 500, Requests: tt.requests}}}
		var out bytes.Buffer
		res.printServer(&out)
		assert.Contains(t, out.String(), "its capacity: 1 slots of 500 ms, at most 2.0 calls/s")
		if tt.bound {
			assert.Contains(t, out.String(), "the stand-in, not the SDK, bounds the throughput (more: 'standin:?slots=8')")
		} else {
			assert.NotContains(t, out.String(), "bounds the throughput")
		}
		assert.Contains(t, out.String(), "a run under a minute shows mostly its ramp")
	}
}
