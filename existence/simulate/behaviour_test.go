package simulate_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/simulate"
)

// The roster: Agents(3) is the trio of spec §1, and more agents take
// scouts, analysts and builders in turn with numbered ids and names, all
// distinct and valid agent ids.
func TestRoster(t *testing.T) {
	trio := simulate.Trio()
	require.Len(t, trio, 3)
	for i, want := range []struct{ id, name, domain string }{
		{"scout", "Cedar", "scout"}, {"analyst", "Cipher", "analyst"}, {"builder", "Vault", "builder"},
	} {
		assert.Equal(t, want.id, trio[i].ID)
		assert.Equal(t, want.name, trio[i].Name)
		require.NotEmpty(t, trio[i].Domains)
		assert.Equal(t, want.domain, trio[i].Role, "the role the Stochastic policy draws goals by")
		assert.NotEmpty(t, trio[i].Traits, "%s has traits", want.name)
	}
	assert.Equal(t, trio, simulate.Agents(3), "Agents(3) is the trio")
	assert.Equal(t, trio[:2], simulate.Agents(2), "fewer agents take the trio's first")

	many := simulate.Agents(10)
	require.Len(t, many, 10)
	assert.Equal(t, trio, many[:3])
	seen := map[string]bool{}
	for i, a := range many {
		assert.False(t, seen[a.ID], "id %s twice", a.ID)
		seen[a.ID] = true
		assert.Regexp(t, `^[a-z0-9][a-z0-9_-]{0,63}$`, a.ID)
		if i >= 3 {
			assert.Equal(t, fmt.Sprintf("agent-%04d", i+1), a.ID)
			assert.Equal(t, fmt.Sprintf("Agent %d", i+1), a.Name)
			assert.Equal(t, trio[i%3].Domains[0], a.Domains[0], "scouts, analysts and builders in turn")
		}
	}
	trio[0].Name = "changed"
	assert.Equal(t, "Cedar", simulate.Trio()[0].Name, "Trio returns a fresh copy")
}

// Every run, whatever the driver and seed, keeps the invariants a reader
// of the trajectory relies on: rows of an agent in time order, Sec equal
// to T since the start, loads within 0–1 and matching the stressors,
// every agent a start and an end row, and the result's times and counts
// agreeing with the rows.
func TestRunInvariants(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, d := range drivers {
		for _, seed := range []uint64{3, 11, 42} {
			t.Run(fmt.Sprintf("%s/seed%d", d, seed), func(t *testing.T) {
				cfg := with(small(seed), d)
				cfg.Start = start
				cfg.Agents = simulate.Agents(4)
				res, b := run(t, cfg)
				rows := rowsOf(t, b)
				assert.Equal(t, start, res.Start)
				assert.Equal(t, start.Add(cfg.Duration), res.End)
				require.Len(t, res.Agents, 4)
				last := map[string]time.Time{}
				starts, ends := map[string]int{}, map[string]int{}
				chosen := map[string]int{}
				for _, r := range rows {
					assert.False(t, r.T.Before(start), "row before the start")
					assert.False(t, r.T.After(res.End), "row after the end")
					assert.InDelta(t, r.T.Sub(start).Seconds(), r.Sec, 0.001)
					assert.False(t, r.T.Before(last[r.Agent]), "%s's rows go forward in time", r.Agent)
					last[r.Agent] = r.T
					assert.GreaterOrEqual(t, float64(r.Load), 0.0)
					assert.LessOrEqual(t, float64(r.Load), 1.0)
					sevs := make([]simulate.Sev, len(r.Stressors))
					for i, s := range r.Stressors {
						sevs[i] = simulate.Sev{Severity: float64(s.Severity)}
					}
					assert.InDelta(t, simulate.LoadOf(sevs), float64(r.Load), 1e-5, "the load is the stressors' sum, capped")
					switch r.Kind {
					case simulate.RowStart:
						starts[r.Agent]++
						assert.NotEmpty(t, r.Name, "start rows name the agent")
					case simulate.RowEnd:
						ends[r.Agent]++
					}
					if r.Chosen != nil {
						chosen[r.Agent]++
					}
				}
				for i, a := range res.Agents {
					assert.Equal(t, cfg.Agents[i].ID, a.ID, "results in Config.Agents order")
					assert.Equal(t, cfg.Agents[i].Name, a.Name)
					assert.Equal(t, 1, starts[a.ID], "%s: one start row", a.ID)
					assert.Equal(t, 1, ends[a.ID], "%s: one end row", a.ID)
					assert.Equal(t, res.End, last[a.ID], "%s: the end row is at the end", a.ID)
					assert.GreaterOrEqual(t, a.ModelCalls, a.Cycles-a.Fallbacks, "a cycle that did not fall back made a call")
					assert.LessOrEqual(t, a.Done+a.Failed+a.Abandoned+a.Active, chosen[a.ID]+1, "goals ended were chosen")
					assert.GreaterOrEqual(t, a.PeakLoad, 0.0)
					assert.LessOrEqual(t, a.PeakLoad, 1.0)
				}
				assert.Equal(t, len(rows), res.Rows)
			})
		}
	}
}

// The trajectory written is the trajectory read: ReadTrajectory gives
// back the same rows from the plain and the gzip-compressed bytes.
func TestTrajectoryRoundTrip(t *testing.T) {
	_, b := run(t, small(7))
	plain := rowsOf(t, b)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	zipped, err := simulate.ReadTrajectory(&gz)
	require.NoError(t, err)
	assert.Equal(t, plain, zipped)
}

// A trajectory line that is not a Row gets an error naming its line.
func TestReadTrajectoryRefusesBadLines(t *testing.T) {
	_, b := run(t, small(7))
	lines := strings.SplitAfter(string(b), "\n")
	require.Greater(t, len(lines), 3)
	for _, c := range []struct {
		name string
		bad  string
	}{
		{"not JSON", "this is not json\n"},
		{"truncated", `{"kind":"tick","t":"2026-01-01T00:00:00Z"` + "\n"},
		{"wrong type", `{"kind":"tick","load":"heavy"}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Join(lines[:2], "") + c.bad + strings.Join(lines[2:], "")
			_, err := simulate.ReadTrajectory(strings.NewReader(in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "line 3:", "the error names the line")
		})
	}
}

// A trajectory writer that fails ends the run with its error.
func TestTrajectoryWriteErrorIsReturned(t *testing.T) {
	full := errors.New("disk full")
	cfg := small(1)
	cfg.Trajectory = failAfter{n: 2, err: full, w: &bytes.Buffer{}}
	_, err := simulate.Run(t.Context(), cfg)
	require.ErrorIs(t, err, full)
}

// failAfter writes n times, then fails with err.
type failAfter struct {
	n   int
	err error
	w   *bytes.Buffer
}

func (f failAfter) Write(p []byte) (int, error) {
	if f.w.Len() >= f.n*40 { // a few rows' worth
		return 0, f.err
	}
	return f.w.Write(p)
}

// The executor policies decide goal outcomes as documented: Immediate
// and Mix with rate 0 complete every goal, Mix with rate 1 fails or
// abandons every one by AbandonShare.
func TestExecutorOutcomes(t *testing.T) {
	for _, c := range []struct {
		name                    string
		exec                    simulate.ExecutorPolicy
		done, failed, abandoned bool
	}{
		{"immediate", simulate.Immediate{}, true, false, false},
		{"mix never fails", simulate.Mix{FailureRate: 0, Duration: simulate.Fixed(20 * time.Second)}, true, false, false},
		{"mix always fails", simulate.Mix{FailureRate: 1, AbandonShare: 0, Duration: simulate.Fixed(20 * time.Second)}, false, true, false},
		{"mix always abandons", simulate.Mix{FailureRate: 1, AbandonShare: 1, Duration: simulate.Fixed(20 * time.Second)}, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := run(t, simulate.Config{Duration: 20 * time.Minute, Seed: 1, Executor: c.exec,
				Model: simulate.Stochastic{}, Driver: simulate.Heartbeats})
			var done, failed, abandoned int
			for _, a := range res.Agents {
				done, failed, abandoned = done+a.Done, failed+a.Failed, abandoned+a.Abandoned
			}
			assert.Equal(t, c.done, done > 0, "done %d", done)
			assert.Equal(t, c.failed, failed > 0, "failed %d", failed)
			assert.Equal(t, c.abandoned, abandoned > 0, "abandoned %d", abandoned)
		})
	}
}

// A model that always fails: every cycle falls back (spec §6) and no
// model-chosen goal is pursued, yet the run completes.
func TestModelAlwaysDown(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			res, b := run(t, simulate.Config{Duration: 10 * time.Minute, Seed: 1, Driver: d,
				Model: simulate.Stochastic{ModelFailureRate: 1}})
			for _, a := range res.Agents {
				require.Positive(t, a.Cycles, a.ID)
				assert.Equal(t, a.Cycles, a.Fallbacks, "%s: every cycle fell back", a.ID)
			}
			for _, r := range rowsOf(t, b) {
				if r.Chosen != nil {
					assert.True(t, r.Chosen.Fallback, "%s at %v chose a model goal", r.Agent, r.Sec)
				}
			}
		})
	}
}

// Under Heartbeats with EveryHeartbeat, each agent ticks once per
// heartbeat interval: Duration / Heartbeat ticks, give or take the
// staggered first one.
func TestHeartbeatCount(t *testing.T) {
	for _, hb := range []time.Duration{6 * time.Second, 30 * time.Second} {
		t.Run(hb.String(), func(t *testing.T) {
			res, _ := run(t, simulate.Config{Duration: 30 * time.Minute, Seed: 1, Heartbeat: hb, Driver: simulate.Heartbeats,
				EveryHeartbeat: true, Executor: simulate.Immediate{}, Model: simulate.Stochastic{Latency: simulate.Fixed(time.Second)}})
			want := int((30 * time.Minute) / hb)
			for _, a := range res.Agents {
				assert.InDelta(t, want, a.Ticks, 1, "%s ticks", a.ID)
				assert.Zero(t, a.MaxLate, "a 1 s call never makes a heartbeat late")
			}
		})
	}
}

// A model call longer than the heartbeat makes the next heartbeat late,
// as a time.Ticker would, and the trajectory says by how much.
func TestSlowModelMakesHeartbeatsLate(t *testing.T) {
	res, b := run(t, simulate.Config{Duration: 10 * time.Minute, Seed: 1, Driver: simulate.Heartbeats, Agents: simulate.Agents(1),
		EveryHeartbeat: true, Executor: simulate.Immediate{}, Model: simulate.Stochastic{Latency: simulate.Fixed(15 * time.Second)}})
	require.Len(t, res.Agents, 1)
	assert.Positive(t, res.Agents[0].MaxLate)
	var late bool
	for _, r := range rowsOf(t, b) {
		if r.LatencyMS > 0 {
			assert.Zero(t, r.LatencyMS%15000, "whole 15 s calls, no slot wait: %d ms", r.LatencyMS)
		}
		late = late || r.LateMS > 0
	}
	assert.True(t, late, "some row reports lateness")
}

// The observer sees every agent's events on the virtual clocks: never
// before the start, and after the end only by the last cycle's model
// call (at most DefaultLatency.Max), which began before it.
func TestObserverSeesVirtualTime(t *testing.T) {
	var mu sync.Mutex
	agents := map[string]int{}
	var outside []time.Time
	cfg := small(2)
	cfg.Observer = func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		agents[e.AgentID]++
		if e.Time.Before(simulate.DefaultStart) || e.Time.After(simulate.DefaultStart.Add(cfg.Duration+simulate.DefaultLatency.Max)) {
			outside = append(outside, e.Time)
		}
	}
	res, _ := run(t, cfg)
	assert.Empty(t, outside, "events by the virtual clocks")
	for _, a := range res.Agents {
		assert.Positive(t, agents[a.ID], "%s's events reach the observer", a.ID)
	}
}

// The summary table: a header, one line per agent up to maxAgents, a
// line saying how many were left out, a TOTAL line (summing every agent,
// shown or not) for more than one agent.
func TestWriteSummaryShape(t *testing.T) {
	res, _ := run(t, simulate.Config{Duration: 10 * time.Minute, Seed: 1, Agents: simulate.Agents(5), Executor: simulate.Immediate{}})
	var done, cycles int
	for _, a := range res.Agents {
		done, cycles = done+a.Done, cycles+a.Cycles
	}
	for _, c := range []struct {
		max, shown int
		more       string
	}{{0, 5, ""}, {5, 5, ""}, {9, 5, ""}, {2, 2, "3 more"}, {1, 1, "4 more"}} {
		t.Run(fmt.Sprint(c.max), func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, res.WriteSummary(&buf, c.max))
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			want := 1 + c.shown + 1
			if c.more != "" {
				want++
				assert.Equal(t, []string{"…", c.more[:1], "more"}, strings.Fields(lines[len(lines)-2]))
			}
			require.Len(t, lines, want, "%s", buf.String())
			assert.Equal(t, []string{"agent", "name", "none", "h"}, strings.Fields(lines[0])[:4])
			for i := range c.shown {
				f := strings.Fields(lines[1+i])
				nf := len(strings.Fields(res.Agents[i].Name))
				assert.Equal(t, res.Agents[i].Name, strings.Join(f[1:1+nf], " "), "%s", lines[1+i])
				assert.Equal(t, res.Agents[i].ID, f[0])
			}
			total := strings.Fields(lines[len(lines)-1])
			require.Equal(t, []string{"TOTAL", "5", "agents"}, total[:3])
			// Columns after the name: 5 levels, peak, crises, resets, done, failed, abandoned, active, cycles.
			assert.Equal(t, fmt.Sprint(done), total[3+5+3], "TOTAL sums every agent's done goals")
			assert.Equal(t, fmt.Sprint(cycles), total[3+5+3+4], "and cycles")
		})
	}
	one, _ := run(t, simulate.Config{Duration: 10 * time.Minute, Seed: 1, Agents: simulate.Agents(1), Executor: simulate.Immediate{}})
	var buf bytes.Buffer
	require.NoError(t, one.WriteSummary(&buf, 0))
	assert.NotContains(t, buf.String(), "TOTAL", "one agent: no total line")
	assert.Len(t, strings.Split(strings.TrimRight(buf.String(), "\n"), "\n"), 2)
}

// A failing writer gets the summary's error back.
func TestWriteSummaryError(t *testing.T) {
	res, _ := run(t, simulate.Config{Duration: 5 * time.Minute, Seed: 1, Executor: simulate.Immediate{}})
	full := errors.New("pipe closed")
	require.ErrorIs(t, res.WriteSummary(errWriter{full}, 0), full)
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// EscalateStressors is spec §4's closed form: each severity rises by its
// rate per day, capped at 1; the input is left as it was. LoadOf is the
// sum, capped at 1.
func TestEscalateAndLoad(t *testing.T) {
	day := 24 * time.Hour
	in := []simulate.Sev{{0.1, 0.2}, {0.5, 0.3}, {0.9, 0.5}, {0.4, 0}}
	got := simulate.EscalateStressors(in, day/2)
	want := []float64{0.2, 0.65, 1, 0.4}
	for i := range want {
		assert.InDelta(t, want[i], got[i].Severity, 1e-12, "stressor %d", i)
		assert.Equal(t, in[i].RatePerDay, got[i].RatePerDay)
	}
	assert.Equal(t, []simulate.Sev{{0.1, 0.2}, {0.5, 0.3}, {0.9, 0.5}, {0.4, 0}}, in, "the input is not changed")
	assert.Equal(t, in, simulate.EscalateStressors(in, 0), "no time, no change")
	for _, c := range []struct {
		s    []simulate.Sev
		want float64
	}{
		{nil, 0}, {[]simulate.Sev{{0.2, 0}}, 0.2}, {[]simulate.Sev{{0.2, 0}, {0.3, 1}}, 0.5}, {[]simulate.Sev{{0.7, 0}, {0.6, 0}}, 1},
	} {
		assert.InDelta(t, c.want, simulate.LoadOf(c.s), 1e-12, "%v", c.s)
	}
	// Escalating in two steps is escalating once (what lets the drivers
	// skip quiet heartbeats).
	two := simulate.EscalateStressors(simulate.EscalateStressors(in, 5*time.Hour), 7*time.Hour)
	for i, s := range simulate.EscalateStressors(in, 12*time.Hour) {
		assert.InDelta(t, s.Severity, two[i].Severity, 1e-12)
	}
}

// Dist draws within its bounds, Fixed always the same, a median draws
// around it, and the same seed draws the same sequence.
func TestDist(t *testing.T) {
	for _, c := range []struct {
		name string
		d    simulate.Dist
	}{
		{"uniform", simulate.Dist{Min: time.Second, Max: 10 * time.Second}},
		{"lognormal", simulate.Dist{Min: time.Second, Max: time.Minute, Median: 5 * time.Second}},
		{"lognormal wide", simulate.Dist{Min: 0, Max: time.Hour, Median: 30 * time.Second, Sigma: 2}},
		{"max below min", simulate.Dist{Min: 5 * time.Second, Max: time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			var draws []time.Duration
			for range 2000 {
				x := c.d.Draw(r1)
				assert.Equal(t, x, c.d.Draw(r2), "the same seed, the same draws")
				assert.GreaterOrEqual(t, x, c.d.Min)
				assert.LessOrEqual(t, x, max(c.d.Min, c.d.Max))
				draws = append(draws, x)
			}
			if c.d.Max <= c.d.Min {
				for _, x := range draws {
					assert.Equal(t, c.d.Min, x)
				}
				return
			}
			slices.Sort(draws)
			median := draws[len(draws)/2]
			want := (c.d.Min + c.d.Max) / 2
			if c.d.Median > 0 {
				want = c.d.Median
			}
			assert.InEpsilon(t, want.Seconds(), median.Seconds(), 0.15, "median %v", median)
		})
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 10 {
		assert.Equal(t, 42*time.Second, simulate.Fixed(42*time.Second).Draw(r))
	}
}

// WithLatency keeps the error's identity for errors.Is and errors.As.
func TestWithLatency(t *testing.T) {
	base := context.DeadlineExceeded
	err := simulate.WithLatency(base, 30*time.Second)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), base.Error())
}

// Num writes six decimals, so that platforms write the same bytes.
func TestNumRounds(t *testing.T) {
	for _, c := range []struct {
		n    simulate.Num
		want string
	}{
		{0, "0"}, {1, "1"}, {0.1234564, "0.123456"}, {0.1234566, "0.123457"}, {0.35, "0.35"}, {simulate.Num(math.Nextafter(0.35, 1)), "0.35"},
	} {
		b, err := c.n.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, c.want, string(b), "%v", float64(c.n))
	}
}
