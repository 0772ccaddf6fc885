package existence

import (
	"time"

	"github.com/existence-loop/sdk/llm"
)

// AdaptiveWorkers, as [RunnerConfig].AutonomyWorkers, sizes the autonomy
// lane by an [llm.AdaptiveLimit] that measures every model call the
// runner's agents make: the lane grows while the server's latency stays
// near its minimum and shrinks when it climbs (a queue forms) or the
// server answers 503, 429 or "busy". The priority lane keeps its own
// workers (PriorityWorkers), outside the limit: a host message never waits
// behind autonomy work in the runner, and the short queue the limit keeps
// at the server leaves it room there.
const AdaptiveWorkers = -1

// ConcurrencyStats is what a runner sees of its model server, in
// [RunnerStats].Concurrency: every model call its agents make (cycles and
// executors, retries included), measured next to the adapter.
type ConcurrencyStats struct {
	// Adaptive reports that the autonomy lane is sized by the limit
	// ([AdaptiveWorkers]).
	Adaptive bool `json:"adaptive"`
	// Limit is the autonomy lane's size now: the adaptive limit, or
	// AutonomyWorkers.
	Limit int `json:"limit"`
	// InFlight is the model calls in flight now.
	InFlight int `json:"in_flight"`
	// MinRTT is the least latency of a call over the last 256 windows
	// (the server's no-load latency) and RTT the mean of the last window;
	// 0 before enough calls.
	MinRTT time.Duration `json:"min_rtt_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	// Calls counts the calls that reached the server (cancelled ones and
	// unreachable servers aside), Overloads those it refused as overloaded
	// (503, 429, "busy"), Cuts the limit's cuts for them.
	Calls     int64 `json:"calls"`
	Overloads int64 `json:"overloads"`
	Cuts      int64 `json:"cuts"`
}

// initMeter creates the runner's meter; under AdaptiveWorkers its limit
// sizes the autonomy lane.
func (r *Runner) initMeter(adaptive bool) {
	cfg := r.cfg.Adaptive
	if adaptive {
		cfg.OnChange = r.setAutonomy
	} else {
		cfg.OnChange = nil
	}
	r.meter = llm.NewAdaptiveLimit(cfg)
	r.adaptive = adaptive
	if adaptive {
		r.core.workers[LaneAutonomy] = r.meter.Limit()
	}
}

// setAutonomy resizes the autonomy lane to n workers: more start at once
// if cycles wait; fewer take effect as running cycles end.
func (r *Runner) setAutonomy(n int) {
	r.smu.Lock()
	r.core.workers[LaneAutonomy] = max(n, 1)
	r.smu.Unlock()
	r.poke()
}

// concurrency returns the meter's view, with the autonomy lane's size.
func (r *Runner) concurrency(workers int) ConcurrencyStats {
	if r.meter == nil {
		return ConcurrencyStats{Limit: workers}
	}
	st := r.meter.Stats()
	return ConcurrencyStats{Adaptive: r.adaptive, Limit: workers, InFlight: st.InFlight, MinRTT: st.MinRTT, RTT: st.RTT,
		Calls: st.Samples, Overloads: st.Overloads, Cuts: st.Cuts}
}

// holdNode returns when a cycle of e's agent in lane may start by the
// budgets, if not at now (zero: now).
func holdNode(e *schedEntry, lane Lane, now time.Time) time.Time {
	if n := e.node; n != nil {
		return n.a.budgetHold(lane, now)
	}
	return time.Time{}
}
