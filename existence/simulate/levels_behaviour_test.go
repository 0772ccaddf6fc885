package simulate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/simulate"
)

// The result's time in each level is the trajectory's, integrated
// exactly: LevelTimes over each pair of an agent's consecutive rows (the
// load only escalates between rows, in closed form) adds up to
// AgentResult.InLevel; the peak load is between the rows' highest and
// the highest the load escalated to between rows; crises are the rows in
// crisis.
func TestResultAgreesWithTrajectory(t *testing.T) {
	for _, d := range drivers {
		for _, seed := range []uint64{1, 8} {
			t.Run(fmt.Sprintf("%s/seed%d", d, seed), func(t *testing.T) {
				cfg := with(small(seed), d)
				cfg.Duration = 2 * time.Hour
				cfg.Model = simulate.Stochastic{FailureRate: 0.6, AbandonShare: 0.5, StressorRate: 0.3, ResolveRate: 0.05}
				res, b := run(t, cfg)
				byAgent := map[string][]simulate.Row{}
				for _, r := range rowsOf(t, b) {
					byAgent[r.Agent] = append(byAgent[r.Agent], r)
				}
				for _, a := range res.Agents {
					rows := byAgent[a.ID]
					require.NotEmpty(t, rows)
					var in [5]time.Duration
					peak, escalated, crises := 0.0, 0.0, 0
					for i, r := range rows {
						peak = max(peak, float64(r.Load))
						if r.Crisis {
							crises++
						}
						if i+1 == len(rows) {
							break
						}
						sevs := make([]simulate.Sev, len(r.Stressors))
						for j, s := range r.Stressors {
							sevs[j] = simulate.Sev{Severity: float64(s.Severity), RatePerDay: float64(s.Rate)}
						}
						span := rows[i+1].T.Sub(r.T)
						for l, dl := range simulate.LevelTimes(sevs, span) {
							in[l] += dl
						}
						escalated = max(escalated, simulate.LoadOf(simulate.EscalateStressors(sevs, span)))
					}
					for l := range in {
						assert.InDelta(t, a.InLevel[l].Seconds(), in[l].Seconds(), 1, "%s level %d", a.ID, l)
					}
					// The peak is reached at a row, or just before a heartbeat
					// whose resolutions lowered the load.
					assert.GreaterOrEqual(t, a.PeakLoad, peak-1e-5, "%s peak", a.ID)
					assert.LessOrEqual(t, a.PeakLoad, max(peak, escalated)+1e-5, "%s peak", a.ID)
					assert.Equal(t, a.Crises, crises, "%s crises", a.ID)
				}
			})
		}
	}
}

// Rates as documented: a negative StressorRate means no self-reported
// stressor ever; a StressorRate of 1 reports one at nearly every cycle.
func TestStressorRates(t *testing.T) {
	count := func(cfg simulate.Config) (selfReported int) {
		_, b := run(t, cfg)
		for _, r := range rowsOf(t, b) {
			for _, c := range r.Added {
				if c.Cause == "self-report" {
					selfReported++
				}
			}
		}
		return selfReported
	}
	base := simulate.Config{Duration: 20 * time.Minute, Seed: 2, Executor: simulate.Immediate{}, Agents: simulate.Agents(1)}
	none := base
	none.Model = simulate.Stochastic{StressorRate: -1}
	assert.Zero(t, count(none), "a negative rate means 0")
	many := base
	many.Model = simulate.Stochastic{StressorRate: 1, ResolveRate: -1}
	assert.Positive(t, count(many), "a rate of 1 reports stressors")
}

// The start time moves the whole run: the same Config at another Start
// gives the same rows shifted in T, and the same Sec.
func TestStartShiftsTheRun(t *testing.T) {
	cfg := small(6)
	_, a := run(t, cfg)
	cfg.Start = simulate.DefaultStart.Add(1000 * time.Hour)
	_, b := run(t, cfg)
	ra, rb := rowsOf(t, a), rowsOf(t, b)
	require.Equal(t, len(ra), len(rb))
	for i := range ra {
		assert.Equal(t, ra[i].Sec, rb[i].Sec)
		assert.Equal(t, ra[i].T.Add(1000*time.Hour), rb[i].T)
		assert.Equal(t, ra[i].Load, rb[i].Load)
		assert.Equal(t, ra[i].Kind, rb[i].Kind)
	}
}

// LevelTimes of loads that only change between rows: a load that stays
// in one level spends the whole span there; the boundaries are spec §4's
// (prominent 0.35, constrained 0.55, dominant 0.75, crisis 0.90).
func TestLevelBoundaries(t *testing.T) {
	hour := time.Hour
	for _, c := range []struct {
		load  float64
		level int
	}{{0, 0}, {0.3499, 0}, {0.35, 1}, {0.5499, 1}, {0.55, 2}, {0.7499, 2}, {0.75, 3}, {0.8999, 3}, {0.90, 4}, {1, 4}} {
		got := simulate.LevelTimes([]simulate.Sev{{Severity: c.load}}, hour)
		var want [5]time.Duration
		want[c.level] = hour
		assert.Equal(t, want, got, "load %v", c.load)
	}
}
