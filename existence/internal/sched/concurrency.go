package sched

import (
	"time"

	"github.com/existence-loop/sdk/existence/internal/wire"
	"github.com/existence-loop/sdk/llm/middleware"
)

// AdaptiveWorkers, as [RunnerConfig].AutonomyWorkers, sizes the autonomy
// lane by a [middleware.AdaptiveLimit] that measures every model call the
// runner's agents make: the lane grows while the server's latency stays
// near its minimum and shrinks when it climbs (a queue forms) or the
// server answers 503, 429 or "busy". The priority lane has a reserved
// share of the limit (max(PriorityWorkers, ⌈limit/4⌉) calls) that autonomy
// cycles never take, and may grow to the whole limit, its cycles beyond
// the share taking autonomy workers as they free up: a host message never
// waits behind autonomy work in the runner, nor behind another host
// message, and the short queue the limit keeps at the server leaves it
// room there. Its calls are marked [middleware.WithPriority], so that a 503 is
// retried after a short wait.
const AdaptiveWorkers = -1

// ConcurrencyStats is what a runner sees of its model server, in
// [RunnerStats].Concurrency: every model call its agents make (cycles and
// executors, retries included), measured next to the adapter.
type ConcurrencyStats struct {
	// Adaptive reports that the autonomy lane is sized by the limit
	// ([AdaptiveWorkers]).
	Adaptive bool `json:"adaptive"`
	// Limit is the concurrency limit now: the adaptive limit, which the
	// lanes share (the priority lane's reserve, the autonomy lane the
	// rest; see [RunnerStats].Workers), or AutonomyWorkers.
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
	r.meter = middleware.NewAdaptiveLimit(cfg)
	r.adaptive = adaptive
	if adaptive {
		r.core.workers[LaneAutonomy], r.core.workers[LanePriority], r.core.reserve = laneShares(r.meter.Limit(), r.cfg.PriorityWorkers)
	}
}

// setAutonomy shares a limit of n calls in flight between the lanes (see
// [laneShares]): more start at once if cycles wait; fewer take effect as
// running cycles end.
func (r *Runner) setAutonomy(n int) {
	r.smu.Lock()
	r.core.workers[LaneAutonomy], r.core.workers[LanePriority], r.core.reserve = laneShares(n, r.cfg.PriorityWorkers)
	r.smu.Unlock()
	r.poke()
}

// laneShares splits an adaptive limit of n calls in flight between the
// lanes: the priority lane has a reserved share of max(priority, ⌈n/4⌉)
// calls that autonomy cycles never take, the autonomy lane the rest (at
// least 1), and the priority lane may grow up to the whole limit, its
// cycles beyond the reserve taking autonomy workers as they free up
// (schedCore.capacity). So a host message, an assigned task or a crisis
// finds a free worker and a short queue at the server, and a burst of
// them is not served one at a time.
func laneShares(n, priority int) (autonomy, prio, reserve int) {
	n = max(n, 1)
	reserve = max(priority, (n+3)/4)
	return max(n-reserve, 1), max(n, reserve), reserve
}

// concurrency returns the meter's view, with the limit: the adaptive one,
// else the autonomy lane's size.
func (r *Runner) concurrency(workers int) ConcurrencyStats {
	if r.meter == nil {
		return ConcurrencyStats{Limit: workers}
	}
	st := r.meter.Stats()
	if r.adaptive {
		workers = st.Limit
	}
	return ConcurrencyStats{Adaptive: r.adaptive, Limit: workers, InFlight: st.InFlight, MinRTT: st.MinRTT, RTT: st.RTT,
		Calls: st.Samples, Overloads: st.Overloads, Cuts: st.Cuts}
}

// holdNode returns when a cycle of e's agent in lane may start by the
// budgets, if not at now (zero: now).
func holdNode(e *schedEntry, lane Lane, now time.Time) time.Time {
	if n := e.node; n != nil {
		return n.a.BudgetHold(wire.Lane(lane), now)
	}
	return time.Time{}
}
