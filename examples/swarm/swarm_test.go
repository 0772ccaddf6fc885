package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"-agents", "10000", "-model-latency", "2s", "-heartbeat", "6s", "-autonomy-workers", "16", "-duration", "60s", "-host-messages", "3", "-json"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, options{agents: 10000, latency: 2 * time.Second, jitter: 200 * time.Millisecond, heartbeat: 6 * time.Second, autonomyWorkers: 16, priorityWorkers: 1, duration: time.Minute, hostMessages: 3, store: "memory", seed: 1, json: true}, o)
	for _, bad := range [][]string{{"-agents", "0"}, {"-store", "sqlite:x.db"}, {"-heartbeat", "0s"}, {"-model-latency", "1s", "-jitter", "2s"}} {
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}

func TestJSONKeys(t *testing.T) {
	o, err := parseFlags([]string{"-agents", "20", "-model-latency", "10ms", "-jitter", "0s", "-heartbeat", "50ms", "-autonomy-workers", "4", "-duration", "500ms", "-host-messages", "2", "-json"}, io.Discard)
	require.NoError(t, err)
	res, err := run(context.Background(), o)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, res.print(&buf, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	for _, k := range []string{"agents", "cycles", "cycles_per_s", "model_calls", "coalesced", "lateness_ms", "rss_bytes_per_agent", "goroutines_max", "host_reply_ms"} {
		assert.Contains(t, m, k)
	}
	lat := m["lateness_ms"].(map[string]any)
	for _, lane := range []string{"autonomy", "priority"} {
		q := lat[lane].(map[string]any)
		for _, k := range []string{"p50", "p99", "max"} {
			assert.Contains(t, q, k)
		}
	}
	assert.EqualValues(t, 20, m["agents"])
	assert.Positive(t, m["cycles"])
	assert.GreaterOrEqual(t, m["model_calls"], m["cycles"])
	buf.Reset()
	require.NoError(t, res.print(&buf, false))
	assert.Contains(t, buf.String(), "lateness autonomy")
}

// BenchmarkSwarm runs the swarm harness at 1,000 agents for 3 s (a 600 ms
// heartbeat and a 200 ms model, both 10× faster than the 6 s and
// 2 s, with enough workers for the load), and reports its figures.
func BenchmarkSwarm(b *testing.B) {
	o := options{agents: 1000, latency: 200 * time.Millisecond, jitter: 20 * time.Millisecond, heartbeat: 600 * time.Millisecond, autonomyWorkers: 400, priorityWorkers: 1, duration: 3 * time.Second, hostMessages: 5, store: "memory", seed: 1}
	for b.Loop() {
		res, err := run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.CyclesPerS, "cycles/s")
		b.ReportMetric(res.Lateness["autonomy"].P99, "lateness-p99-ms")
		b.ReportMetric(float64(res.RSSBytesPerAgent), "rss-B/agent")
		b.ReportMetric(float64(res.GoroutinesMax), "goroutines")
		b.ReportMetric(float64(res.CallsInFlightMax), "calls-in-flight")
		if res.HostReply != nil {
			b.ReportMetric(res.HostReply.Max, "host-reply-max-ms")
		}
	}
}

func TestOutOfOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		sd   []startDue
		want int64
	}{
		{"in order", []startDue{{at(10), at(0)}, {at(20), at(5)}, {at(30), at(30)}}, 0},
		{"listed out of start order", []startDue{{at(30), at(30)}, {at(10), at(0)}}, 0},
		{"within the tolerance", []startDue{{at(10), at(200)}, {at(20), at(150)}}, 0},
		{"one inversion", []startDue{{at(10), at(500)}, {at(20), at(100)}, {at(30), at(600)}}, 1},
		{"two after the same late one", []startDue{{at(10), at(900)}, {at(20), at(100)}, {at(30), at(200)}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, outOfOrder(tt.sd))
		})
	}
}
