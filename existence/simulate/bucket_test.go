package simulate_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"

	"github.com/existence-loop/sdk/existence/simulate"
)

func TestLoadBucket(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		span, want time.Duration
	}{
		{12 * time.Hour, 0}, // exact
		{day, 0},
		{25 * time.Hour, 30 * time.Minute},
		{7 * day, 3 * time.Hour},
		{30 * day, 12 * time.Hour},
		{60 * day, day},
		{90 * day, 2 * day},
		{365 * day, 7 * day},
		{3650 * day, 28 * day},
	} {
		t.Run(tt.span.String(), func(t *testing.T) {
			got := simulate.LoadBucket(tt.span)
			assert.Equal(t, tt.want, got)
			if got > 0 && tt.span < 3650*day {
				assert.LessOrEqual(t, int(tt.span/got), 60, "at most 60 buckets")
			}
		})
	}
}

func TestBucketLoad(t *testing.T) {
	type b = simulate.LoadBucketStats
	for _, tt := range []struct {
		name  string
		pts   plotter.XYs
		x0, w float64
		want  []b
	}{
		{"a ramp split at the edge", plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}, 0, 0.5,
			[]b{{From: 0, To: 0.5, Min: 0, Mean: 0.25, Max: 0.5}, {From: 0.5, To: 1, Min: 0.5, Mean: 0.75, Max: 1}}},
		{"a jump counts in min and max, not in the mean", plotter.XYs{{X: 0, Y: 0.2}, {X: 0.5, Y: 0.6}, {X: 0.5, Y: 0.2}, {X: 1, Y: 0.6}}, 0, 1,
			[]b{{From: 0, To: 1, Min: 0.2, Mean: 0.4, Max: 0.6}}},
		{"a crisis peak inside a bucket", plotter.XYs{{X: 0, Y: 0.3}, {X: 0.4, Y: 0.3}, {X: 0.5, Y: 1}, {X: 0.5, Y: 0.2}, {X: 1, Y: 0.2}}, 0, 1,
			[]b{{From: 0, To: 1, Min: 0.2, Mean: 0.12 + 0.065 + 0.1, Max: 1}}},
		{"the last bucket spans what the curve covers", plotter.XYs{{X: 0, Y: 1}, {X: 1.5, Y: 1}}, 0, 1,
			[]b{{From: 0, To: 1, Min: 1, Mean: 1, Max: 1}, {From: 1, To: 1.5, Min: 1, Mean: 1, Max: 1}}},
		{"a curve that starts late", plotter.XYs{{X: 0.25, Y: 0.4}, {X: 0.75, Y: 0.4}}, 0, 0.5,
			[]b{{From: 0.25, To: 0.5, Min: 0.4, Mean: 0.4, Max: 0.4}, {From: 0.5, To: 0.75, Min: 0.4, Mean: 0.4, Max: 0.4}}},
		{"one point", plotter.XYs{{X: 0, Y: 1}}, 0, 1, nil},
		{"no width", plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 1}}, 0, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := simulate.BucketLoad(tt.pts, tt.x0, tt.w)
			require.Len(t, got, len(tt.want))
			for i := range got {
				assert.InDelta(t, tt.want[i].From, got[i].From, 1e-9, "bucket %d From", i)
				assert.InDelta(t, tt.want[i].To, got[i].To, 1e-9, "bucket %d To", i)
				assert.InDelta(t, tt.want[i].Min, got[i].Min, 1e-9, "bucket %d Min", i)
				assert.InDelta(t, tt.want[i].Mean, got[i].Mean, 1e-9, "bucket %d Mean", i)
				assert.InDelta(t, tt.want[i].Max, got[i].Max, 1e-9, "bucket %d Max", i)
			}
		})
	}
}

// TestBucketLoadEdgesFromRounding: points on edges that floating point
// cannot represent (thirds) end, and every bucket's mean of a constant
// curve is that constant.
func TestBucketLoadEdgesFromRounding(t *testing.T) {
	var pts plotter.XYs
	for i := range 3001 {
		pts = append(pts, plotter.XY{X: float64(i) / 300, Y: 0.5})
	}
	got := simulate.BucketLoad(pts, 0, 1.0/3)
	require.Len(t, got, 30)
	for _, b := range got {
		assert.InDelta(t, 0.5, b.Mean, 1e-9)
		assert.InDelta(t, 1.0/3, b.To-b.From, 1e-9)
	}
}

// longRows is a synthetic trajectory of days for three agents: the load
// rises through each day and drops at its end, with a crisis on day 3.
func longRows(days int) []simulate.Row {
	var rows []simulate.Row
	for i, name := range []string{"Cedar", "Cipher", "Vault"} {
		id := fmt.Sprint("agent-", i)
		rows = append(rows, simulate.Row{Kind: simulate.RowStart, Agent: id, Name: name})
		for h := 1; h <= days*24; h++ {
			load := 0.2 + 0.5*float64(h%24)/24 + 0.05*float64(i)
			if h/24 == 3 && h%24 > 20 {
				load = 1
			}
			rows = append(rows, simulate.Row{Kind: simulate.RowTick, Agent: id, Sec: float64(h) * 3600, Load: simulate.Num(math.Min(load, 1))})
		}
	}
	return rows
}

// TestLoadPlotBucketsLongRuns: a run of a day or less is drawn exactly; a
// 30-day run in 12-hour buckets, which the title names, with each agent's
// mean line drawn.
func TestLoadPlotBucketsLongRuns(t *testing.T) {
	p, err := simulate.LoadPlot(longRows(1))
	require.NoError(t, err)
	assert.Equal(t, "Suffering load", p.Title.Text)

	p, err = simulate.LoadPlot(longRows(30))
	require.NoError(t, err)
	assert.Equal(t, "Suffering load, in 12-hour buckets: line the mean, band from the least to the most", p.Title.Text)
	img := decode(t, p)
	for i, name := range []string{"Cedar", "Cipher", "Vault"} {
		px, _ := count(img, simulate.SeriesColors[i], 1)
		assert.Greater(t, px, 200, "the mean line of %s", name)
	}
}
