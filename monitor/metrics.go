package monitor

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/suffering"
)

// metrics are the Prometheus metrics of a monitor. Counters and
// histograms are fed by events; the gauges are computed when scraped, from
// every agent's [existence.Agent.Status] and the Runner's [Scheduler]
// Stats (lanes.go). Labels are bounded: no agent id
// (10,000 agents would be 10,000 series per metric).
type metrics struct {
	cycles       prometheus.Counter
	cycleSeconds prometheus.Histogram
	fallbacks    *prometheus.CounterVec
	calls        *prometheus.CounterVec
	callSeconds  *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	exhausted    *prometheus.CounterVec
	goals        *prometheus.CounterVec
	toolCalls    *prometheus.CounterVec
	overflows    *prometheus.CounterVec
	compactions  *prometheus.CounterVec
	slots        *prometheus.CounterVec
	mindFailures prometheus.Counter
	events       prometheus.Counter
	lateness     *prometheus.HistogramVec // by lane (lanes.go)
	lanes        *laneTracker
}

func newMetrics(reg prometheus.Registerer, m *Monitor) (*metrics, error) {
	mt := &metrics{
		cycles: prometheus.NewCounter(prometheus.CounterOpts{Name: "existence_cycles_total", Help: "Existence cycles run, by every agent."}),
		cycleSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "existence_cycle_duration_seconds", Help: "Wall-clock time of an existence cycle, model exchange included.",
			Buckets: []float64{0.05, 0.25, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_fallbacks_total", Help: "Cycles that used the spec §6 fallback goal, by cause (llm.Classify class)."}, []string{"cause"}),
		calls:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_model_calls_total", Help: "Model attempts, by purpose (cycle, executor) and outcome (ok or the error class)."}, []string{"purpose", "outcome"}),
		callSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "existence_model_call_duration_seconds", Help: "Wall-clock time of one model attempt, by purpose.",
			Buckets: []float64{0.05, 0.25, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}}, []string{"purpose"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_model_tokens_total", Help: "Tokens model calls used, by purpose (cycle, executor), direction (prompt, output), model, lane (autonomy, priority, none) and whether the count is the server's or an estimate (estimated: false, true)."},
			[]string{"purpose", "direction", "model", "lane", "estimated"}),
		exhausted:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_budget_exhausted_total", Help: "Token budgets spent (budget_exhausted events), by scope (agent, rnr)."}, []string{"scope"}),
		goals:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_goals_ended_total", Help: "Goals ended, by status (DONE, FAILED, ABANDONED)."}, []string{"status"}),
		toolCalls:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_tool_calls_total", Help: "Tool calls by executors, by result (ok, failed)."}, []string{"result"}),
		overflows:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_context_overflows_total", Help: "Prompts that did not fit the model's context window, by purpose (cycle, executor) and how: cut (by the server, and caught) or refused (by the server, or before sending)."}, []string{"purpose", "how"}),
		compactions:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_context_compactions_total", Help: "Tool-loop histories compacted to fit the context window, by method (summary, elision)."}, []string{"method"}),
		slots:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "existence_slots_total", Help: "Slot changes, by board (agent, shared) and change (posted; dropped by a full board; removed)."}, []string{"board", "change"}),
		mindFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "existence_mind_failures_total", Help: "Runs of minds that failed (mind_failed events); each backs off before it runs again."}),
		events:       prometheus.NewCounter(prometheus.CounterOpts{Name: "existence_monitor_events_total", Help: "Events the monitor observed."}),
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "existence_cycle_lateness_seconds", Help: "How late a scheduled cycle started against its due time, by lane (autonomy, priority); heartbeats are 6 s apart.",
			Buckets: []float64{0.01, 0.1, 0.5, 1, 2, 6, 12, 30, 60, 120, 300, 600}}, []string{"lane"}),
		lanes: newLaneTracker(),
	}
	for _, l := range lanes {
		mt.lateness.WithLabelValues(l.String()) // both lanes' series exist from the start
	}
	for _, c := range []prometheus.Collector{mt.cycles, mt.cycleSeconds, mt.fallbacks, mt.calls, mt.callSeconds, mt.tokens, mt.exhausted, mt.goals, mt.toolCalls, mt.overflows, mt.compactions, mt.slots, mt.mindFailures, mt.events, mt.lateness, &stateCollector{m: m}, &laneCollector{m: m}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return mt, nil
}

// defaultRegistry is a fresh registry with the Go runtime and process
// collectors.
func defaultRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

func (mt *metrics) observe(e event.Event) {
	mt.events.Inc()
	switch e.Kind {
	case event.Cycle:
		mt.cycles.Inc()
		if e.Cycle != nil {
			mt.cycleSeconds.Observe(e.Cycle.Total.Seconds())
			if laneIndex(e.Cycle.Lane) >= 0 { // run by a scheduler, not by Agent.Tick directly
				mt.lateness.WithLabelValues(e.Cycle.Lane).Observe(e.Cycle.Lateness.Seconds())
				mt.lanes.observe(e.Cycle)
			}
		}
	case event.Fallback:
		mt.fallbacks.WithLabelValues(e.FailureClass).Inc()
	case event.ModelCall:
		if c := e.Call; c != nil {
			p := c.Purpose
			if p == "" {
				p = "unknown"
			}
			mt.calls.WithLabelValues(p, c.Outcome).Inc()
			mt.callSeconds.WithLabelValues(p).Observe(c.Duration.Seconds())
			lane := c.Lane
			if lane == "" {
				lane = "none"
			}
			mt.tokens.WithLabelValues(p, "prompt", c.Model, lane, strconv.FormatBool(c.PromptEstimated)).Add(float64(c.PromptTokens))
			mt.tokens.WithLabelValues(p, "output", c.Model, lane, strconv.FormatBool(c.OutputEstimated)).Add(float64(c.OutputTokens))
		}
	case event.GoalEnded:
		mt.goals.WithLabelValues(string(e.GoalStatus)).Inc()
	case event.BudgetExhausted:
		if e.Budget != nil {
			mt.exhausted.WithLabelValues(e.Budget.Scope).Inc()
		}
	case event.ContextOverflow:
		if c := e.Context; c != nil {
			how := "refused"
			if c.Kept > 0 {
				how = "cut"
			}
			mt.overflows.WithLabelValues(c.Purpose, how).Inc()
		}
	case event.ContextCompacted:
		if c := e.Context; c != nil {
			mt.compactions.WithLabelValues(c.Method).Inc()
		}
	case event.Slot, event.SlotDropped:
		board := "agent"
		if e.Shared {
			board = "shared"
		}
		change := "posted"
		switch {
		case e.Kind == event.SlotDropped && e.Reason == "removed":
			change = "removed"
		case e.Kind == event.SlotDropped:
			change = "dropped"
		}
		mt.slots.WithLabelValues(board, change).Inc()
	case event.MindFailed:
		mt.mindFailures.Inc()
	case event.ToolCall:
		if e.Tool != nil {
			r := "ok"
			if e.Tool.Failed {
				r = "failed"
			}
			mt.toolCalls.WithLabelValues(r).Inc()
		}
	}
}

var (
	descAgents    = prometheus.NewDesc("existence_agents", "Agents, by suffering level (none, prominent, constrained, dominant, crisis).", []string{"level"}, nil)
	descStressors = prometheus.NewDesc("existence_stressors_active", "Active stressors over every agent, by type.", []string{"type"}, nil)
	descFallbacks = prometheus.NewDesc("existence_agents_falling_back", "Agents whose last cycle used the fallback goal.", nil, nil)
	descRequests  = prometheus.NewDesc("existence_requests_pending", "Requests to the human waiting for an answer.", nil, nil)
	descStreams   = prometheus.NewDesc("existence_monitor_streams", "Open event streams.", nil, nil)
	descSpent     = prometheus.NewDesc("existence_agents_budget_exhausted", "Agents whose own token budget is spent now (their autonomy waits).", nil, nil)
)

// stateCollector computes the gauges from the agents' status when scraped.
type stateCollector struct{ m *Monitor }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAgents, descStressors, descFallbacks, descRequests, descStreams, descSpent} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	levels := map[string]float64{}
	for _, l := range []suffering.Level{suffering.LevelNone, suffering.LevelProminent, suffering.LevelConstrained, suffering.LevelDominant, suffering.LevelCrisis} {
		levels[l.String()] = 0
	}
	types := map[string]float64{}
	falling, spent := 0.0, 0.0
	statuses, _ := c.m.src.Statuses(context.Background()) // on error, the agents are not counted
	for _, s := range statuses {
		if s.Budget != nil && s.Budget.Exhausted {
			spent++
		}
		levels[s.Level]++
		for _, x := range s.Stressors {
			types[x.Type]++
		}
		if s.ConsecutiveFallbacks > 0 {
			falling++
		}
	}
	for l, n := range levels {
		ch <- prometheus.MustNewConstMetric(descAgents, prometheus.GaugeValue, n, l)
	}
	for t, n := range types {
		ch <- prometheus.MustNewConstMetric(descStressors, prometheus.GaugeValue, n, t)
	}
	ch <- prometheus.MustNewConstMetric(descFallbacks, prometheus.GaugeValue, falling)
	ch <- prometheus.MustNewConstMetric(descSpent, prometheus.GaugeValue, spent)
	if q := c.m.cfg.Requests; q != nil {
		if rs, err := q.List(context.Background(), requests.Filter{Status: requests.Pending}); err == nil {
			ch <- prometheus.MustNewConstMetric(descRequests, prometheus.GaugeValue, float64(len(rs)))
		}
	}
	ch <- prometheus.MustNewConstMetric(descStreams, prometheus.GaugeValue, float64(c.m.hub.count()))
}
