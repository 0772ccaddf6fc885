package simulate_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/store/memstore"
)

// A scripted model's replies are the goals chosen, in order, one per
// cycle, for every agent; its latency delays each goal's start.
func TestScriptedGoalsInOrder(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			_, b := run(t, simulate.Config{
				Driver:   d,
				Agents:   simulate.Agents(2),
				Duration: 20 * time.Second, // cycles at about 0, 6, 12, 18 s
				Model: simulate.Scripted{Latency: 500 * time.Millisecond, Replies: []string{
					cycleReply("map the workspace"), cycleReply("read the notes"), cycleReply("write the plan"), cycleReply("review the plan"),
				}},
				Executor: simulate.Immediate{},
			})
			goals := map[string][]string{}
			for _, r := range rowsOf(t, b) {
				if r.Chosen != nil {
					require.False(t, r.Chosen.Fallback, "%s: a scripted reply is no fallback", r.Agent)
					goals[r.Agent] = append(goals[r.Agent], r.Chosen.Goal)
					assert.Equal(t, int64(500), r.LatencyMS, "the scripted latency")
				}
			}
			require.Len(t, goals, 2)
			for agent, g := range goals {
				require.NotEmpty(t, g)
				assert.Equal(t, []string{"map the workspace", "read the notes", "write the plan", "review the plan"}[:len(g)], g, agent)
			}
		})
	}
}

// States kept in a Store go on where they were: a second run over the
// same store starts from the first run's end (its stressors and goals),
// not from a new identity.
func TestStoreCarriesStateAcrossRuns(t *testing.T) {
	store := memstore.New()
	cfg := simulate.Config{
		Agents:   simulate.Agents(1),
		Duration: 2 * time.Minute,
		Seed:     1,
		Store:    store,
		Model:    simulate.Stochastic{StressorRate: 1, ResolveRate: -1},
		Executor: simulate.Immediate{},
	}
	first, b1 := run(t, cfg)
	rows1 := rowsOf(t, b1)
	end1 := rows1[len(rows1)-1]
	require.Equal(t, simulate.RowEnd, end1.Kind)
	require.NotEmpty(t, end1.Stressors, "the first run ends with stressors")

	cfg.Start = first.End
	_, b2 := run(t, cfg)
	rows2 := rowsOf(t, b2)
	start2 := rows2[0]
	require.Equal(t, simulate.RowStart, start2.Kind)
	assert.Equal(t, first.End, start2.T)
	require.Len(t, start2.Stressors, len(end1.Stressors), "the second run starts with the first run's stressors")
	for i := range end1.Stressors {
		assert.Equal(t, end1.Stressors[i].Type, start2.Stressors[i].Type)
		// The state as last saved, at the first run's last heartbeat (a
		// few seconds of escalation, under 1e-4, before its end row).
		assert.InDelta(t, float64(end1.Stressors[i].Severity), float64(start2.Stressors[i].Severity), 1e-4)
		assert.InDelta(t, end1.Stressors[i].OnsetSec-cfg.Duration.Seconds(), start2.Stressors[i].OnsetSec, 0.002, "onsets carried, relative to the new start")
	}
	assert.InDelta(t, float64(end1.Load), float64(start2.Load), 1e-4)

	fresh := cfg
	fresh.Store = nil
	_, b3 := run(t, fresh)
	assert.Empty(t, rowsOf(t, b3)[0].Stressors, "without a store every run starts anew")
}

// A context cancelled in the middle of a run ends it with ctx's error
// and the result so far.
func TestCancelMidRun(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var events atomic.Int64
			cfg := with(small(1), d)
			cfg.Duration = 24 * time.Hour
			cfg.Observer = func(event.Event) {
				if events.Add(1) == 200 {
					cancel()
				}
			}
			var buf bytes.Buffer
			cfg.Trajectory = &buf
			res, err := simulate.Run(ctx, cfg)
			require.ErrorIs(t, err, context.Canceled)
			require.NotNil(t, res, "the result so far")
			var cycles int
			for _, a := range res.Agents {
				cycles += a.Cycles
			}
			assert.Positive(t, cycles)
			assert.Less(t, cycles, 3*24*60, "it stopped long before a day of cycles")
		})
	}
}

// Plots save as PNG of the documented size and as SVG; an unknown format
// is refused.
func TestSaveFormats(t *testing.T) {
	rows := plotRows(t)
	p, err := simulate.LoadPlot(rows)
	require.NoError(t, err)
	var pngBuf bytes.Buffer
	require.NoError(t, simulate.Save(&pngBuf, p, simulate.PNG))
	cfg, err := png.DecodeConfig(bytes.NewReader(pngBuf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, image.Point{simulate.PlotWidth, simulate.PlotHeight}, image.Point{cfg.Width, cfg.Height})

	var svg bytes.Buffer
	require.NoError(t, simulate.Save(&svg, p, simulate.SVG))
	s := svg.String()
	assert.Contains(t, s, "<svg")
	assert.Contains(t, s, `width="900pt"`, "1200 px at 96 dpi are 12.5 in, 900 pt")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(s), "</svg>"))

	var other bytes.Buffer
	err = simulate.Save(&other, p, "gif")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gif")
	assert.Zero(t, other.Len(), "nothing written for an unknown format")
}

// Every plot of the same rows is the same bytes, in both formats.
func TestPlotsSameBytes(t *testing.T) {
	rows := plotRows(t)
	for name, mk := range map[string]func([]simulate.Row) (*plot.Plot, error){
		"load":     simulate.LoadPlot,
		"timeline": simulate.TimelinePlot,
		"outcome":  simulate.OutcomePlot,
	} {
		t.Run(name, func(t *testing.T) {
			var out [2][]byte
			for i := range out {
				p, err := mk(rows)
				require.NoError(t, err)
				var buf bytes.Buffer
				require.NoError(t, simulate.Save(&buf, p, simulate.SVG))
				out[i] = buf.Bytes()
			}
			assert.True(t, bytes.Equal(out[0], out[1]), "two SVGs of the same rows differ")
		})
	}
}
