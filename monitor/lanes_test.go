package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
)

// slowModel answers every cycle after latency of virtual time, read from
// the agent's clock (runner.ClockFrom), as RunVirtual expects.
type slowModel struct{ latency time.Duration }

func (m slowModel) Generate(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
	c, ok := runner.ClockFrom(ctx).(*clock.Virtual)
	if !ok {
		return nil, fmt.Errorf("no virtual clock in the context")
	}
	c.Advance(m.latency)
	return &llm.Response{Text: `{"action":"goal","content":"map the workspace","reasoning":"r"}`}, nil
}

// laneEnv is a monitor over a runner of n agents with one autonomy worker
// and a model of the given virtual latency, on a manual clock.
func laneEnv(t *testing.T, n int, latency time.Duration) (*runner.Runner, *monitor.Monitor, *existencetest.Recorder) {
	t.Helper()
	rec := &existencetest.Recorder{}
	var mon *monitor.Monitor
	r, err := runner.New(runner.Config{
		Store:    memstore.New(),
		Clock:    existencetest.NewClock(t0),
		Observer: event.Observers(rec.Observe, func(e event.Event) { mon.Observe(e) }),
		Logger:   slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	for i := range n {
		id := fmt.Sprintf("a%03d", i)
		_, err := r.Add(context.Background(), existence.Config{ID: id, Name: id, Model: slowModel{latency}, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	mon, err = monitor.New(monitor.Config{Runner: r, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { mon.Close(); _ = r.Close() })
	return r, mon, rec
}

// schedulerSeries keeps the scheduler's series of a scrape (so that a
// failure shows them alone).
func schedulerSeries(body string) string {
	var b strings.Builder
	for line := range strings.Lines(body) {
		for _, p := range []string{"existence_lane_", "existence_cycle_lateness_", "existence_heartbeats_"} {
			if strings.HasPrefix(line, p) {
				b.WriteString(line)
			}
		}
	}
	return b.String()
}

// fmtFloat formats v as the Prometheus text format does.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestMetricsShowTheLanes(t *testing.T) {
	// 20 agents, one autonomy worker and a 2 s model: a backlog far
	// longer than a heartbeat, so cycles queue, start late and coalesce.
	r, mon, rec := laneEnv(t, 20, 2*time.Second)
	ctx := context.Background()
	require.NoError(t, r.RunVirtual(ctx, t0.Add(60*time.Second)))
	require.NoError(t, r.SayAsHost(ctx, "hello", "a019"))
	require.NoError(t, r.RunVirtual(ctx, t0.Add(90*time.Second)))

	st := r.Stats()
	require.Greater(t, st.Queued[runner.LaneAutonomy], 5, "an autonomy backlog")
	require.Equal(t, 1, st.Running[runner.LaneAutonomy], "the worker is busy at the end")
	require.Greater(t, st.Coalesced, int64(0))
	require.Equal(t, int64(1), st.Dispatched[runner.LanePriority], "the host message ran in the priority lane")

	// The lateness histogram holds every scheduled cycle, by lane, in
	// event order (the order the histogram summed them).
	count := map[string]int{}
	sum := map[string]float64{}
	var late6 int // autonomy cycles at most 6 s late
	var maxLate float64
	for _, e := range rec.Kind(event.Cycle) {
		count[e.Cycle.Lane]++
		sum[e.Cycle.Lane] += e.Cycle.Lateness.Seconds()
		if e.Cycle.Lane == "autonomy" && e.Cycle.Lateness <= 6*time.Second {
			late6++
		}
		maxLate = max(maxLate, e.Cycle.Lateness.Seconds())
	}
	require.Equal(t, 1, count["priority"])
	require.Greater(t, sum["autonomy"], 60.0, "autonomy cycles started late")
	require.Less(t, late6, count["autonomy"], "some cycles were more than a heartbeat late")

	status, body := do(t, mon, "GET", "/metrics", "", nil)
	require.Equal(t, 200, status)
	assert.NotContains(t, body, `agent="`, "no agent label: series stay bounded")
	body = schedulerSeries(body)
	for _, want := range []string{
		fmt.Sprintf(`existence_lane_queued{lane="autonomy"} %d`, st.Queued[0]),
		fmt.Sprintf(`existence_lane_queued{lane="priority"} %d`, st.Queued[1]),
		`existence_lane_running{lane="autonomy"} 1`,
		`existence_lane_running{lane="priority"} 0`,
		fmt.Sprintf(`existence_lane_dispatched_total{lane="autonomy"} %d`, st.Dispatched[0]),
		`existence_lane_dispatched_total{lane="priority"} 1`,
		fmt.Sprintf(`existence_heartbeats_coalesced_total %d`, st.Coalesced),
		fmt.Sprintf(`existence_cycle_lateness_seconds_count{lane="autonomy"} %d`, count["autonomy"]),
		fmt.Sprintf(`existence_cycle_lateness_seconds_sum{lane="autonomy"} %s`, fmtFloat(sum["autonomy"])),
		fmt.Sprintf(`existence_cycle_lateness_seconds_bucket{lane="autonomy",le="6"} %d`, late6),
		`existence_cycle_lateness_seconds_count{lane="priority"} 1`,
		fmt.Sprintf(`existence_cycle_lateness_seconds_sum{lane="priority"} %s`, fmtFloat(sum["priority"])),
	} {
		assert.Contains(t, body, want+"\n")
	}

	// The dashboard's header gets the same lanes with recent percentiles.
	status, body = do(t, mon, "GET", "/api/agents?limit=1", "", nil)
	require.Equal(t, 200, status)
	var page monitor.AgentsPage
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotNil(t, page.Scheduler)
	assert.Equal(t, st.Coalesced, page.Scheduler.Coalesced)
	require.Len(t, page.Scheduler.Lanes, 2)
	a, p := page.Scheduler.Lanes[0], page.Scheduler.Lanes[1]
	assert.Equal(t, "autonomy", a.Lane)
	assert.Equal(t, st.Queued[0], a.Queued)
	assert.Equal(t, 1, a.Running)
	assert.Equal(t, count["autonomy"], a.Cycles)
	assert.Greater(t, a.LatenessP50, 0.0)
	assert.GreaterOrEqual(t, a.LatenessP99, a.LatenessP50)
	assert.LessOrEqual(t, a.LatenessP99, maxLate)
	assert.Equal(t, monitor.LaneView{Lane: "priority", Dispatched: 1, Cycles: 1, LatenessP50: sum["priority"], LatenessP99: sum["priority"]}, p)
}

func TestMetricsWithoutAScheduler(t *testing.T) {
	// Single adapts one agent and has no Stats: no lane gauges, no
	// scheduler in the page; cycles run by Tick have no lane.
	e := newEnv(t, 1, monitor.Config{})
	mon, err := monitor.New(monitor.Config{Runner: hostaccess.Single(e.rnr.Agent("scout"))})
	require.NoError(t, err)
	defer mon.Close()
	_, ok := any(hostaccess.Single(nil)).(monitor.Scheduler)
	require.False(t, ok)
	mon.Observe(event.Event{Kind: event.Cycle, AgentID: "scout", Cycle: &event.CycleStats{}})
	mon.Observe(event.Event{Kind: event.Cycle, AgentID: "scout", Cycle: &event.CycleStats{Lane: "priority", Lateness: 1500 * time.Millisecond, Coalesced: 2}})

	status, body := do(t, mon, "GET", "/metrics", "", nil)
	require.Equal(t, 200, status)
	assert.NotContains(t, body, "existence_lane_queued")
	assert.Contains(t, body, "existence_heartbeats_coalesced_total 2\n", "summed from the cycle events")
	assert.Contains(t, body, `existence_cycle_lateness_seconds_sum{lane="priority"} 1.5`+"\n")
	assert.Contains(t, body, `existence_cycle_lateness_seconds_count{lane="autonomy"} 0`+"\n", "both lanes' series exist")

	status, body = do(t, mon, "GET", "/api/agents", "", nil)
	require.Equal(t, 200, status)
	assert.NotContains(t, body, `"scheduler"`)
}
