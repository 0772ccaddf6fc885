package simulate_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"github.com/existence-loop/sdk/existence/simulate"
)

var (
	plotOnce sync.Once
	plotData []simulate.Row
)

// plotRows is a run with stressors and all three outcomes (run once).
func plotRows(t *testing.T) []simulate.Row {
	t.Helper()
	plotOnce.Do(func() { plotData = makePlotRows(t) })
	require.NotEmpty(t, plotData)
	return plotData
}

func makePlotRows(t *testing.T) []simulate.Row {
	_, b := run(t, simulate.Config{
		Duration: 12 * time.Hour,
		Seed:     1,
		Model:    simulate.Stochastic{FailureRate: 0.5, AbandonShare: 0.4, StressorRate: 0.01, ResolveRate: 0.01},
		Driver:   simulate.Heartbeats,
	})
	return rowsOf(t, b)
}

func decode(t *testing.T, p *plot.Plot) image.Image {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, simulate.Save(&buf, p, simulate.PNG))
	img, err := png.Decode(&buf)
	require.NoError(t, err, "not a valid PNG")
	assert.Equal(t, image.Rect(0, 0, simulate.PlotWidth, simulate.PlotHeight), img.Bounds(), "documented size")
	return img
}

// count returns the number of pixels of exactly c, and the number of
// distinct rows holding at least minRun of them.
func count(img image.Image, c color.RGBA, minRun int) (pixels, rows int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		n := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B && uint8(a>>8) == c.A {
				n++
			}
		}
		pixels += n
		if n >= minRun {
			rows++
		}
	}
	return pixels, rows
}

func TestLoadPlot(t *testing.T) {
	p, err := simulate.LoadPlot(plotRows(t))
	require.NoError(t, err)
	img := decode(t, p)
	// The four thresholds are horizontal lines across the plot: rows of
	// the threshold colour at least 800 pixels long (the legend's sample
	// line is shorter).
	_, rows := count(img, simulate.ThresholdColor, 800)
	assert.GreaterOrEqual(t, rows, 4, "four threshold lines")
	assert.LessOrEqual(t, rows, 12, "lines at most 2-3 pixels thick")
	for i, name := range []string{"Cedar", "Cipher", "Vault"} {
		px, _ := count(img, simulate.SeriesColors[i], 1)
		assert.Greater(t, px, 200, "the series of %s", name)
	}

	var svg bytes.Buffer
	require.NoError(t, simulate.Save(&svg, p, simulate.SVG))
	assert.True(t, strings.HasPrefix(svg.String(), "<?xml"))
	assert.Contains(t, svg.String(), `width="900pt" height="450pt"`)
	assert.Contains(t, svg.String(), "Cipher")
}

func TestTimelinePlot(t *testing.T) {
	rows := plotRows(t)
	p, err := simulate.TimelinePlot(rows)
	require.NoError(t, err)
	img := decode(t, p)
	// Bars shaded by severity: the pale end of the ramp (0.2) is there.
	found := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 0xe0 && g>>8 > 0xb0 && g>>8 < 0xe8 && bl>>8 < 0xa0 {
				found++
			}
		}
	}
	assert.Greater(t, found, 100, "severity-shaded bars")
	var svg bytes.Buffer
	require.NoError(t, simulate.Save(&svg, p, simulate.SVG))
	for _, lane := range []string{"Cedar · repeated_failure", "Vault · repeated_failure"} {
		assert.Contains(t, svg.String(), lane)
	}
}

func TestOutcomePlot(t *testing.T) {
	p, err := simulate.OutcomePlot(plotRows(t))
	require.NoError(t, err)
	img := decode(t, p)
	for _, st := range []string{"DONE", "FAILED", "ABANDONED"} {
		px, _ := count(img, simulate.StatusColors[st], 1)
		assert.Greater(t, px, 500, st)
	}
}

func TestPlotsNoData(t *testing.T) {
	for name, f := range map[string]func([]simulate.Row) (*plot.Plot, error){
		"load": simulate.LoadPlot, "timeline": simulate.TimelinePlot, "outcomes": simulate.OutcomePlot,
	} {
		_, err := f(nil)
		assert.ErrorIs(t, err, simulate.ErrNoData, name)
	}
	var buf bytes.Buffer
	p, err := simulate.LoadPlot([]simulate.Row{{Kind: simulate.RowStart, Agent: "a"}, {Kind: simulate.RowEnd, Agent: "a", Sec: 60}})
	require.NoError(t, err)
	assert.Error(t, simulate.Save(&buf, p, "gif"))
}

func TestPlotsAreDeterministic(t *testing.T) {
	rows := plotRows(t)
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		p, err := simulate.LoadPlot(rows)
		require.NoError(t, err)
		require.NoError(t, simulate.Save(buf, p, simulate.PNG))
	}
	assert.True(t, bytes.Equal(a.Bytes(), b.Bytes()))
}
