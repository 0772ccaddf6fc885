package simulate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/simulate"
)

// Under Heartbeats, goals hold for their simulated duration, bounded by
// GoalTimeout (abandoned at the timeout) and by the goal-span rule
// (MaxGoalDuration; negative disables it).
func TestGoalDurationBounds(t *testing.T) {
	for _, c := range []struct {
		name        string
		timeout     time.Duration
		maxDuration time.Duration
		want        string // the status of every ended goal
	}{
		{"fits", 20 * time.Minute, -1, "DONE"},
		{"timeout", time.Minute, -1, "ABANDONED"},
		{"goal span", 20 * time.Minute, 2 * time.Minute, "ABANDONED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, b := run(t, simulate.Config{Duration: time.Hour, Seed: 1, Driver: simulate.Heartbeats, Agents: simulate.Agents(1),
				Executor: simulate.Mix{FailureRate: 0, Duration: simulate.Fixed(10 * time.Minute)},
				Model:    simulate.Stochastic{Latency: simulate.Fixed(time.Second)}, GoalTimeout: c.timeout, MaxGoalDuration: c.maxDuration})
			var ended []simulate.Row
			for _, r := range rowsOf(t, b) {
				if r.Ended != nil {
					ended = append(ended, r)
				}
			}
			require.NotEmpty(t, ended)
			for _, r := range ended {
				assert.Equal(t, c.want, r.Ended.Status, "goal %d at %.0f s", r.Ended.N, r.Sec)
			}
			a := res.Agents[0]
			switch c.want {
			case "DONE":
				assert.InDelta(t, 6, a.Done, 1, "an hour of 10-minute goals")
			default:
				assert.Greater(t, a.Abandoned, 6, "goals end early, so more of them")
			}
		})
	}
}

// Under Heartbeats, model calls beyond ModelSlots wait in simulated time
// for a free slot, first come first served: the wait is part of the
// row's latency, and with enough slots nobody waits.
func TestHeartbeatsModelSlotsWait(t *testing.T) {
	latency := 4 * time.Second
	waits := func(slots int) (waited int, total int) {
		_, b := run(t, simulate.Config{Duration: 10 * time.Minute, Seed: 1, Driver: simulate.Heartbeats, Agents: simulate.Agents(3),
			EveryHeartbeat: true, ModelSlots: slots, Executor: simulate.Immediate{}, Model: simulate.Stochastic{Latency: simulate.Fixed(latency)}})
		for _, r := range rowsOf(t, b) {
			if r.Calls == 0 {
				continue
			}
			total++
			assert.GreaterOrEqual(t, r.LatencyMS, int64(r.Calls)*latency.Milliseconds(), "at least the calls' own latency")
			if r.LatencyMS > int64(r.Calls)*latency.Milliseconds() {
				waited++
			}
		}
		return waited, total
	}
	w, n := waits(0)
	require.Positive(t, n)
	assert.Zero(t, w, "no limit: nobody waits")
	w, n = waits(3)
	require.Positive(t, n)
	assert.Zero(t, w, "a slot each: nobody waits")
	w, _ = waits(1)
	assert.Positive(t, w, "one slot for three agents: some wait")
}

// The Report executor asks the model for each goal's outcome: one more
// call per goal than Immediate, and the outcomes follow the model's
// FailureRate.
func TestReportExecutorCallsTheModel(t *testing.T) {
	cfg := simulate.Config{Duration: 20 * time.Minute, Seed: 3, Agents: simulate.Agents(1), Driver: simulate.Heartbeats,
		Model: simulate.Stochastic{FailureRate: 1, AbandonShare: 0}}
	cfg.Executor = simulate.Immediate{}
	imm, _ := run(t, cfg)
	cfg.Executor = simulate.Report{}
	rep, _ := run(t, cfg)
	a, b := imm.Agents[0], rep.Agents[0]
	assert.Positive(t, a.Done, "Immediate: every goal DONE whatever the model")
	assert.Zero(t, a.Failed)
	assert.Zero(t, b.Done, "Report: the model's FailureRate 1 fails every goal")
	assert.Positive(t, b.Failed)
	assert.Greater(t, b.ModelCalls, b.Cycles, "a report call per goal besides the cycles'")
	assert.Equal(t, a.ModelCalls, a.Cycles, "Immediate makes no call of its own")
}
