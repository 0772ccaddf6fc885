package simulate_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/suffering"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// run runs cfg and returns the result and the trajectory's bytes.
func run(t testing.TB, cfg simulate.Config) (*simulate.Result, []byte) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Trajectory = &buf
	res, err := simulate.Run(context.Background(), cfg)
	require.NoError(t, err)
	return res, buf.Bytes()
}

func rowsOf(t testing.TB, b []byte) []simulate.Row {
	t.Helper()
	rows, err := simulate.ReadTrajectory(bytes.NewReader(b))
	require.NoError(t, err)
	return rows
}

// small is a short run with every feature of the default policies on.
func small(seed uint64) simulate.Config {
	return simulate.Config{
		Duration: 30 * time.Minute,
		Seed:     seed,
		Model:    simulate.Stochastic{FailureRate: 0.5, AbandonShare: 0.3, StressorRate: 0.2, ResolveRate: 0.3, ModelFailureRate: 0.1},
	}
}

var drivers = []simulate.Driver{simulate.Scheduler, simulate.Heartbeats}

func with(cfg simulate.Config, d simulate.Driver) simulate.Config {
	cfg.Driver = d
	return cfg
}

func TestDeterminism(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			_, a := run(t, with(small(1), d))
			_, b := run(t, with(small(1), d))
			require.NotEmpty(t, a)
			assert.True(t, bytes.Equal(a, b), "two runs with seed 1 differ")
			_, c := run(t, with(small(2), d))
			assert.False(t, bytes.Equal(a, c), "seeds 1 and 2 gave the same trajectory")
		})
	}
}

// TestGolden pins a small run's trajectory: any change to the loop, the
// prompt, the parser, the suffering model or the policies that changes what
// happens shows up as a diff. Rewrite with go test -update.
func TestGolden(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			res, got := run(t, with(small(1), d))
			path := filepath.Join("testdata", "small."+d.String()+".golden.jsonl")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create it")
			if !bytes.Equal(want, got) {
				wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
				for i := range min(len(wl), len(gl)) {
					require.Equal(t, wl[i], gl[i], "trajectory differs from %s at line %d", path, i+1)
				}
				require.Fail(t, "trajectory differs", "%s: %d lines, want %d", path, len(gl), len(wl))
			}
			var sum bytes.Buffer
			require.NoError(t, res.WriteSummary(&sum, 0))
			spath := filepath.Join("testdata", "small."+d.String()+".summary.golden")
			if *update {
				require.NoError(t, os.WriteFile(spath, sum.Bytes(), 0o644))
			}
			wantSum, err := os.ReadFile(spath)
			require.NoError(t, err)
			assert.Equal(t, string(wantSum), sum.String())
		})
	}
}

// cycleReply builds a spec §3 reply with the given new stressor types.
func cycleReply(goal string, stressors ...string) string {
	var ns []string
	for _, s := range stressors {
		ns = append(ns, fmt.Sprintf(`{"type":%q,"description":"it hurts","condition":"it stops"}`, s))
	}
	return fmt.Sprintf(`{"action":"goal","content":%q,"reasoning":"scripted","worldview_update":null,"new_open_questions":[],"new_opinions":[],"suffering_assessment":{"new_stressors":[%s],"resolved":[]}}`, goal, strings.Join(ns, ","))
}

// oneStressor is a ModelPolicy whose model reports one stressor of type
// typ in its first reply and then chooses a new goal every cycle ("go on
// with step N"): a scripted model that repeats its goal would be going
// round in circles, which adds repeated_failure (spec §4), and the
// escalation tests follow one stressor alone.
type oneStressor struct {
	typ     string
	latency time.Duration
}

func (p oneStressor) Model(simulate.AgentSpec, uint64) (llm.Model, error) {
	return &oneStressorModel{p: p}, nil
}

type oneStressorModel struct {
	p oneStressor
	n atomic.Int64
}

func (m *oneStressorModel) Generate(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
	text := cycleReply("feel it", m.p.typ)
	if n := m.n.Add(1); n > 1 {
		text = cycleReply(fmt.Sprintf("go on with step %d", n))
	}
	return &llm.Response{Model: "one-stressor", Text: text, DoneReason: llm.DoneStop, Duration: m.p.latency}, ctx.Err()
}

// TestEscalationClosedForm: one self-reported stressor escalates as
// 0.20 + rate × days (spec §4), checked on the agent's real state at 1 h,
// 1 day and 7 days. The Heartbeats driver holds each goal for 20 minutes,
// so that 7 days take 504 cycles (the goal-span stall rule, which would
// abandon them after 2 minutes, is off). (futility and purposelessness are left out: the
// assessment resolves them when goals keep completing, spec §4.)
func TestEscalationClosedForm(t *testing.T) {
	for _, typ := range []string{suffering.Invisibility, suffering.IdentityViolation, suffering.ExistentialThreat, "loneliness"} {
		t.Run(typ, func(t *testing.T) {
			store := memstore.New()
			_, b := run(t, simulate.Config{
				Agents:          simulate.Agents(1),
				Driver:          simulate.Heartbeats,
				Duration:        7*24*time.Hour + time.Minute,
				Model:           oneStressor{typ: typ},
				Executor:        simulate.Mix{Duration: simulate.Fixed(20 * time.Minute)}, // every goal DONE after 20 min
				MaxGoalDuration: -1,
				Store:           store,
			})
			rows := rowsOf(t, b)
			rate := suffering.Rate(typ)
			checked := 0
			for _, r := range rows {
				if r.Kind != simulate.RowTick {
					continue
				}
				switch r.Sec {
				case 3600, 86400, 7 * 86400:
				default:
					continue
				}
				require.Len(t, r.Stressors, 1, "at %vs", r.Sec)
				st := r.Stressors[0]
				assert.Equal(t, typ, st.Type)
				assert.Zero(t, st.OnsetSec)
				want := 0.20 + rate*r.Sec/86400
				assert.InDelta(t, want, float64(st.Severity), 1e-6, "at %vs", r.Sec)
				checked++
			}
			assert.Equal(t, 3, checked, "rows at 1 h, 1 day and 7 days")

			// The saved state at the last heartbeat (7 days and one
			// heartbeat), unrounded.
			st, err := store.Load(context.Background(), "scout")
			require.NoError(t, err)
			require.Len(t, st.Suffering.Active, 1)
			days := st.Suffering.LastEscalated.Sub(simulate.DefaultStart).Hours() / 24
			assert.InDelta(t, 7+6.0/86400, days, 1e-9)
			assert.InDelta(t, 0.20+rate*days, st.Suffering.Active[0].Severity, 1e-12)
		})
	}
}

// TestEscalationScheduler: under the scheduler, every row's severity is
// the closed form from the heartbeat that added the stressor. (Escalation
// counts from the state's last escalation, the start of that heartbeat,
// not from the onset, which comes after the cycle's model call: a stressor
// gains its cycle's latency of escalation.)
func TestEscalationScheduler(t *testing.T) {
	_, b := run(t, simulate.Config{
		Agents:   simulate.Agents(1),
		Duration: 2 * time.Hour,
		Model:    oneStressor{typ: suffering.ExistentialThreat, latency: 5 * time.Second},
		Executor: simulate.Immediate{},
	})
	n := 0
	added := -1.0
	for _, r := range rowsOf(t, b) {
		if len(r.Added) > 0 {
			added = r.Sec
		}
		if len(r.Stressors) == 0 {
			continue
		}
		st := r.Stressors[0]
		assert.InDelta(t, 5, st.OnsetSec-added, 1e-9, "onset after the 5 s model call")
		assert.InDelta(t, 0.20+0.07*(r.Sec-added)/86400, float64(st.Severity), 1e-6, "at %vs", r.Sec)
		n++
	}
	assert.Greater(t, n, 100)
}

// TestCrisisForcesReset: three consecutive crisis cycles reset every
// stressor (spec §4).
func TestCrisisForcesReset(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) { testCrisisForcesReset(t, d) })
	}
}

func testCrisisForcesReset(t *testing.T, d simulate.Driver) {
	res, b := run(t, simulate.Config{
		Driver:   d,
		Agents:   simulate.Agents(1),
		Duration: 33 * time.Second, // cycles at 0, 6, ..., 30 s
		Model: simulate.Scripted{Replies: []string{
			cycleReply("one", "a", "b"), cycleReply("two", "c", "d"), cycleReply("three", "e"),
			cycleReply("four"), cycleReply("five"), cycleReply("six"),
		}},
		Executor: simulate.Immediate{},
	})
	var crisis []simulate.Row
	for _, r := range rowsOf(t, b) {
		if r.Crisis {
			crisis = append(crisis, r)
		}
	}
	require.Len(t, crisis, 3, "3 crisis cycles")
	for i, r := range crisis {
		assert.Equal(t, i+1, r.CrisisCycles)
		assert.InDelta(t, crisis[0].Sec+float64(6*i), r.Sec, 1e-9, "consecutive cycles")
	}
	last := crisis[2]
	assert.Equal(t, 5, last.Reset)
	assert.Len(t, last.Resolved, 5)
	for _, c := range last.Resolved {
		assert.Equal(t, "crisis_reset", c.Cause)
	}
	assert.Empty(t, last.Stressors)
	assert.Zero(t, float64(last.Load))
	assert.Equal(t, 1, res.Agents[0].Resets)
	assert.Equal(t, 3, res.Agents[0].Crises)
	assert.Equal(t, "crisis", crisis[0].Level)
}

// TestFailureRate: with every goal failing, the assessment adds
// repeated_failure and it escalates; with none failing it never appears.
func TestFailureRate(t *testing.T) {
	for _, rate := range []float64{1, 0} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			const dur = 6 * time.Hour
			_, b := run(t, simulate.Config{
				Agents:   simulate.Agents(1),
				Duration: dur,
				Seed:     7,
				Model:    simulate.Stochastic{FailureRate: rate, StressorRate: -1, ResolveRate: -1},
			})
			var sev []float64
			var onset float64
			for _, r := range rowsOf(t, b) {
				for _, c := range r.Added {
					if c.Type == suffering.RepeatedFailure {
						assert.Equal(t, "assessment", c.Cause)
					}
				}
				for _, st := range r.Stressors {
					if st.Type == suffering.RepeatedFailure {
						sev = append(sev, float64(st.Severity))
						onset = st.OnsetSec
						if r.Kind == simulate.RowTick {
							assert.InDelta(t, 0.20+0.04*(r.Sec-st.OnsetSec)/86400, float64(st.Severity), 1e-6)
						}
					}
				}
			}
			if rate == 0 {
				assert.Empty(t, sev, "repeated_failure appeared with no failures")
				return
			}
			require.NotEmpty(t, sev, "repeated_failure never appeared")
			assert.Less(t, onset, 600.0, "added after the first 4 failures")
			assert.Greater(t, sev[len(sev)-1], sev[0], "it escalates")
			assert.InDelta(t, 0.20+0.04*(dur.Seconds()-onset)/86400, sev[len(sev)-1], 1e-6, "end row")
		})
	}
}

// TestRepeatRate: a model that keeps choosing its previous goal goes round
// in circles; the agent counts the repeats as failures and the assessment
// adds repeated_failure although every goal ends DONE (the existence
// package's repeat rule). Without
// repeats (TestFailureRate/0) it never appears.
func TestRepeatRate(t *testing.T) {
	_, b := run(t, simulate.Config{
		Agents:   simulate.Agents(1),
		Duration: time.Hour,
		Seed:     7,
		Model:    simulate.Stochastic{RepeatRate: 1, StressorRate: -1, ResolveRate: -1},
		Executor: simulate.Immediate{},
	})
	var goals []string
	added := false
	for _, r := range rowsOf(t, b) {
		if r.Chosen != nil {
			goals = append(goals, r.Chosen.Goal)
		}
		if r.Ended != nil {
			assert.Equal(t, "DONE", r.Ended.Status)
		}
		for _, c := range r.Added {
			if c.Type == suffering.RepeatedFailure && c.Cause == "assessment" {
				added = true
			}
		}
	}
	require.Greater(t, len(goals), 10)
	for _, g := range goals[1:] {
		assert.Equal(t, goals[0], g, "every goal repeats the first")
	}
	assert.True(t, added, "repeated_failure added by the assessment")
}

// TestSkippingQuietHeartbeats: skipping quiet heartbeats gives the same
// trajectory as ticking every heartbeat.
func TestSkippingQuietHeartbeats(t *testing.T) {
	cfg := with(small(3), simulate.Heartbeats)
	cfg.Duration = 2 * time.Hour
	cfg.MaxGoalDuration = 45 * time.Second // inside the goals' 15–60 s, so that the rule fires
	resSkip, skip := run(t, cfg)
	cfg.EveryHeartbeat = true
	resEvery, every := run(t, cfg)
	assert.Greater(t, resSkip.Skipped, 0)
	assert.Zero(t, resEvery.Skipped)
	assert.Greater(t, resEvery.Ticks, resSkip.Ticks)
	a, b := rowsOf(t, skip), rowsOf(t, every)
	require.Len(t, b, len(a))
	spans := 0
	for _, r := range a {
		if r.Ended != nil && strings.Contains(r.Ended.Summary, "stall rule goal_span") {
			spans++
		}
	}
	assert.Positive(t, spans, "goals longer than MaxGoalDuration are abandoned when skipping too")
	for i := range a {
		// Rows are rounded to 6 decimals: a rounding boundary can differ
		// by one unit.
		assert.InDelta(t, float64(a[i].Load), float64(b[i].Load), 2e-6, "row %d", i)
		for j := range a[i].Stressors {
			assert.InDelta(t, float64(a[i].Stressors[j].Severity), float64(b[i].Stressors[j].Severity), 2e-6)
			a[i].Stressors[j].Severity = b[i].Stressors[j].Severity
		}
		a[i].Load = b[i].Load
		assert.Equal(t, a[i], b[i], "row %d", i)
	}
	for i := range resSkip.Agents {
		for l := range resSkip.Agents[i].InLevel {
			assert.InDelta(t, resEvery.Agents[i].InLevel[l].Seconds(), resSkip.Agents[i].InLevel[l].Seconds(), 0.01)
		}
	}
}

// TestModelSlots: a shared model server with one slot makes calls wait,
// so heartbeats run late and fewer cycles fit in the same time.
func TestModelSlots(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) { testModelSlots(t, d) })
	}
}

func testModelSlots(t *testing.T, d simulate.Driver) {
	cfg := with(small(1), d)
	free, _ := run(t, cfg)
	cfg.ModelSlots = 1
	busy, _ := run(t, cfg)
	var cf, cb int
	var lf, lb time.Duration
	for i := range free.Agents {
		cf += free.Agents[i].Cycles
		cb += busy.Agents[i].Cycles
		lf = max(lf, free.Agents[i].MaxLate)
		lb = max(lb, busy.Agents[i].MaxLate)
	}
	assert.Less(t, cb, cf)
	assert.Greater(t, lb, lf)
}

func TestLevelTimes(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name string
		s    []simulate.Sev
		d    time.Duration
		want [5]time.Duration
	}{
		{"nothing", nil, day, [5]time.Duration{day}},
		{"one crossing", []simulate.Sev{{0.3, 0.1}}, 2 * day, [5]time.Duration{12 * time.Hour, 36 * time.Hour}},
		{"two stressors", []simulate.Sev{{0.2, 0.05}, {0.2, 0.05}}, 4 * day, [5]time.Duration{1: 36 * time.Hour, 2: 48 * time.Hour, 3: 12 * time.Hour}},
		{"cap at 1 then flat", []simulate.Sev{{0.95, 0.1}}, 2 * day, [5]time.Duration{4: 2 * day}},
		{"capped stressor stops rising", []simulate.Sev{{0.9, 0.2}, {0.0, 0}}, day, [5]time.Duration{4: day}},
		{"through every level", []simulate.Sev{{0, 1}}, day, [5]time.Duration{
			time.Duration(0.35 * float64(day)), time.Duration(0.20 * float64(day)), time.Duration(0.20 * float64(day)), time.Duration(0.15 * float64(day)), time.Duration(0.10 * float64(day)),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := simulate.LevelTimes(tt.s, tt.d)
			var sum time.Duration
			for i := range got {
				assert.InDelta(t, tt.want[i].Seconds(), got[i].Seconds(), 0.01, "level %d", i)
				sum += got[i]
			}
			assert.Equal(t, tt.d, sum)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  simulate.Config
		want string
	}{
		{"no duration", simulate.Config{}, "Duration must be positive"},
		{"no agents", simulate.Config{Duration: time.Hour, Agents: []simulate.AgentSpec{}}, "no agents"},
		{"twice", simulate.Config{Duration: time.Hour, Agents: []simulate.AgentSpec{{ID: "a", Name: "A"}, {ID: "a", Name: "A"}}}, `agent "a" twice`},
		{"bad rate", simulate.Config{Duration: time.Hour, Model: simulate.Stochastic{FailureRate: 2}}, "FailureRate is 2"},
		{"bad mix", simulate.Config{Duration: time.Hour, Executor: simulate.Mix{FailureRate: -1}}, "must be in 0–1"},
		{"empty script", simulate.Config{Duration: time.Hour, Model: simulate.Scripted{}}, "no replies"},
		{"bad id", simulate.Config{Duration: time.Hour, Agents: []simulate.AgentSpec{{ID: "../x", Name: "X"}}}, "agent ../x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := simulate.Run(context.Background(), tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := simulate.Run(ctx, simulate.Config{Duration: time.Hour})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestTrajectoryRowsAreConsistent(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) { testTrajectoryRowsAreConsistent(t, d) })
	}
}

func testTrajectoryRowsAreConsistent(t *testing.T, d simulate.Driver) {
	res, b := run(t, with(small(5), d))
	rows := rowsOf(t, b)
	assert.Equal(t, res.Rows, len(rows))
	counts := map[string][3]int{}
	for _, r := range rows {
		assert.False(t, math.IsNaN(float64(r.Load)))
		assert.Equal(t, suffering.LevelOf(float64(r.Load)).String(), r.Level)
		if r.Ended != nil {
			c := counts[r.Agent]
			switch r.Ended.Status {
			case "DONE":
				c[0]++
			case "FAILED":
				c[1]++
			case "ABANDONED":
				c[2]++
			}
			counts[r.Agent] = c
		}
	}
	for _, a := range res.Agents {
		assert.Equal(t, [3]int{a.Done, a.Failed, a.Abandoned}, counts[a.ID], a.ID)
		var sum time.Duration
		for _, d := range a.InLevel {
			sum += d
		}
		assert.Equal(t, 30*time.Minute, sum, "time in levels adds up to the run")
	}
	assert.Equal(t, simulate.RowStart, rows[0].Kind)
	assert.Equal(t, simulate.RowEnd, rows[len(rows)-1].Kind)
}
