package monitor

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/runner"
)

// Scheduler is what the monitor shows of a runner's scheduler: each
// lane's queue depth and lateness. *runner.Runner satisfies it. It is
// optional: the monitor asks its [Config].Runner for it with a type
// assertion, so a [hostaccess.Agents] without Stats (such as [hostaccess.Single]) still works;
// its lane gauges and the dashboard's lane summary are then left out.
type Scheduler interface {
	// Stats returns the scheduler's counters (see runner.Stats).
	Stats() runner.Stats
}

var _ Scheduler = (*runner.Runner)(nil)

// lanes are the scheduler's lanes, in the order of runner.Stats'
// arrays.
var lanes = [...]runner.Lane{runner.LaneAutonomy, runner.LanePriority}

// recentLateness is how many cycles per lane the dashboard's lateness
// percentiles are computed over.
const recentLateness = 256

// LaneView is one scheduler lane in [SchedulerView].
type LaneView struct {
	// Lane is "autonomy" or "priority" (runner.Lane).
	Lane string `json:"lane"`
	// Queued and Running are the cycles waiting and running now.
	Queued  int `json:"queued"`
	Running int `json:"running"`
	// Dispatched counts the ticks handed to a worker since the runner
	// started.
	Dispatched int64 `json:"dispatched"`
	// Cycles is how many of the lane's last cycles (at most 256) the
	// lateness percentiles are over; LatenessP50 and LatenessP99 are how
	// late those cycles started against their due time, in seconds
	// (event.CycleStats.Lateness); 0 when Cycles is 0.
	Cycles      int     `json:"cycles"`
	LatenessP50 float64 `json:"lateness_p50_seconds"`
	LatenessP99 float64 `json:"lateness_p99_seconds"`
}

// SchedulerView is the scheduler's state in GET /api/agents (the
// dashboard's header): its two lanes, the heartbeats coalesced since it
// started, the cycles a spent token budget held, what the runner sees of
// the model server (the autonomy lane's concurrency limit, latency, calls
// in flight and 503s) and the runner-wide budget.
type SchedulerView struct {
	Lanes     []LaneView `json:"lanes"`
	Coalesced int64      `json:"coalesced"`
	// Held counts the cycles a spent budget made wait
	// (runner.Stats.Held).
	Held int64 `json:"held,omitempty"`
	// Concurrency is runner.Stats.Concurrency.
	Concurrency runner.ConcurrencyStats `json:"concurrency"`
	// Budget is the runner-wide budget, absent without one.
	Budget *budget.Status `json:"budget,omitempty"`
}

// laneTracker keeps, per lane, the lateness of the last cycles (for the
// dashboard's percentiles) and the heartbeats coalesced into cycles (for
// the counter when the Runner is no [Scheduler]). Memory is bounded: 2 ×
// 256 durations.
type laneTracker struct {
	mu        sync.Mutex
	late      [len(lanes)]ring[time.Duration]
	coalesced int64
}

func newLaneTracker() *laneTracker {
	t := &laneTracker{}
	for i := range t.late {
		t.late[i] = newRing[time.Duration](recentLateness)
	}
	return t
}

// laneIndex returns the index of the lane named s ("autonomy" or
// "priority"), or -1.
func laneIndex(s string) int {
	for i, l := range lanes {
		if l.String() == s {
			return i
		}
	}
	return -1
}

// observe records a cycle run by a scheduler (one with a lane).
func (t *laneTracker) observe(c *event.CycleStats) {
	i := laneIndex(c.Lane)
	if i < 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.late[i].add(c.Lateness)
	t.coalesced += int64(c.Coalesced)
}

// view returns the scheduler view from st and the recent lateness.
func (t *laneTracker) view(st runner.Stats) *SchedulerView {
	v := &SchedulerView{Coalesced: st.Coalesced, Held: st.Held, Concurrency: st.Concurrency, Budget: st.Budget}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, l := range lanes {
		late := t.late[i].list()
		slices.Sort(late)
		v.Lanes = append(v.Lanes, LaneView{
			Lane: l.String(), Queued: st.Queued[i], Running: st.Running[i], Dispatched: st.Dispatched[i],
			Cycles: len(late), LatenessP50: percentile(late, 0.50).Seconds(), LatenessP99: percentile(late, 0.99).Seconds(),
		})
	}
	return v
}

// percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted
// durations, or 0 when there are none.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted)) + 0.999999) // ceil, without float noise
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func (t *laneTracker) coalescedTotal() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.coalesced
}

// schedulerView returns the dashboard's scheduler view, or nil when the
// Runner is no [Scheduler].
func (m *Monitor) schedulerView() *SchedulerView {
	if m.sched == nil {
		return nil
	}
	return m.met.lanes.view(m.sched.Stats())
}

var (
	descLaneQueued     = prometheus.NewDesc("existence_lane_queued", "Cycles waiting in a scheduler lane now, by lane (autonomy, priority).", []string{"lane"}, nil)
	descLaneRunning    = prometheus.NewDesc("existence_lane_running", "Cycles running on a scheduler lane's workers now, by lane.", []string{"lane"}, nil)
	descLaneDispatched = prometheus.NewDesc("existence_lane_dispatched_total", "Ticks the scheduler handed to a lane's workers, by lane.", []string{"lane"}, nil)
	descCoalesced      = prometheus.NewDesc("existence_heartbeats_coalesced_total", "Heartbeats merged into a cycle already queued or running (none called the model).", nil, nil)
	descLaneWorkers    = prometheus.NewDesc("existence_lane_workers", "A scheduler lane's size now, by lane: the autonomy lane's is its concurrency limit.", []string{"lane"}, nil)
	descHeld           = prometheus.NewDesc("existence_budget_held_total", "Cycles a spent token budget made wait.", nil, nil)
	descInFlight       = prometheus.NewDesc("existence_model_calls_in_flight", "Model calls in flight now, all agents of the rnr.", nil, nil)
	descRTT            = prometheus.NewDesc("existence_model_latency_seconds", "Model call latency as the rnr's meter sees it: min (the no-load latency, least over the last 256 windows) and recent (the last window's mean).", []string{"kind"}, nil)
	descOverloads      = prometheus.NewDesc("existence_model_overloads_total", "Model calls the server refused as overloaded (503, 429, busy).", nil, nil)
	descServerCalls    = prometheus.NewDesc("existence_model_server_calls_total", "Model calls that reached the server, as the rnr's meter counts them (retries included).", nil, nil)
	descAdaptive       = prometheus.NewDesc("existence_concurrency_adaptive", "1 when the autonomy lane is sized by the adaptive concurrency limit.", nil, nil)
	descSharedUsed     = prometheus.NewDesc("existence_runner_budget_used_tokens", "Tokens the rnr-wide budget's window holds now.", nil, nil)
	descSharedLimit    = prometheus.NewDesc("existence_runner_budget_tokens", "The rnr-wide budget's tokens per window.", nil, nil)
)

// laneCollector computes the lane metrics when scraped: from the Runner's
// [Scheduler] Stats when it has them; otherwise only the coalesced
// heartbeats, summed from the cycle events.
type laneCollector struct{ m *Monitor }

func (c *laneCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLaneQueued, descLaneRunning, descLaneDispatched, descCoalesced,
		descLaneWorkers, descHeld, descInFlight, descRTT, descOverloads, descServerCalls, descAdaptive, descSharedUsed, descSharedLimit} {
		ch <- d
	}
}

func (c *laneCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.sched
	if s == nil {
		ch <- prometheus.MustNewConstMetric(descCoalesced, prometheus.CounterValue, float64(c.m.met.lanes.coalescedTotal()))
		return
	}
	st := s.Stats()
	for i, l := range lanes {
		ch <- prometheus.MustNewConstMetric(descLaneQueued, prometheus.GaugeValue, float64(st.Queued[i]), l.String())
		ch <- prometheus.MustNewConstMetric(descLaneRunning, prometheus.GaugeValue, float64(st.Running[i]), l.String())
		ch <- prometheus.MustNewConstMetric(descLaneDispatched, prometheus.CounterValue, float64(st.Dispatched[i]), l.String())
		ch <- prometheus.MustNewConstMetric(descLaneWorkers, prometheus.GaugeValue, float64(st.Workers[i]), l.String())
	}
	ch <- prometheus.MustNewConstMetric(descCoalesced, prometheus.CounterValue, float64(st.Coalesced))
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.CounterValue, float64(st.Held))
	cc := st.Concurrency
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(cc.InFlight))
	ch <- prometheus.MustNewConstMetric(descRTT, prometheus.GaugeValue, cc.MinRTT.Seconds(), "min")
	ch <- prometheus.MustNewConstMetric(descRTT, prometheus.GaugeValue, cc.RTT.Seconds(), "recent")
	ch <- prometheus.MustNewConstMetric(descOverloads, prometheus.CounterValue, float64(cc.Overloads))
	ch <- prometheus.MustNewConstMetric(descServerCalls, prometheus.CounterValue, float64(cc.Calls))
	adaptive := 0.0
	if cc.Adaptive {
		adaptive = 1
	}
	ch <- prometheus.MustNewConstMetric(descAdaptive, prometheus.GaugeValue, adaptive)
	if b := st.Budget; b != nil {
		ch <- prometheus.MustNewConstMetric(descSharedUsed, prometheus.GaugeValue, float64(b.Used))
		ch <- prometheus.MustNewConstMetric(descSharedLimit, prometheus.GaugeValue, float64(b.Tokens))
	}
}
