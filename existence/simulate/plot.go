package simulate

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot sizes, in pixels at [PlotDPI] (PNG) or in points scaled to the same
// inches (SVG).
const (
	PlotWidth  = 1200
	PlotHeight = 600
	PlotDPI    = 96
)

// Colours of the plots.
var (
	// ThresholdColor draws the four suffering thresholds (0.35, 0.55,
	// 0.75, 0.90) on the load plot; no series uses it.
	ThresholdColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	// SeriesColors draw the agents' load lines, in turn.
	SeriesColors = []color.RGBA{
		{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, {R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
		{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, {R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, {R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	}
	// StatusColors fill the goal-outcome bars.
	StatusColors = map[string]color.RGBA{
		"DONE":      {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		"FAILED":    {R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
		"ABANDONED": {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	}
)

// Format is an output format of the plots.
type Format string

// Plot formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// ErrNoData: the trajectory has nothing to plot.
var ErrNoData = errors.New("simulate: nothing to plot")

// maxPlotAgents caps the agents drawn on the load plot and the timeline.
const maxPlotAgents = 9

// LoadPlot draws the suffering load over time (days) of the first 9 agents
// of rows, with the four thresholds as horizontal lines in
// [ThresholdColor] drawn over them. Between rows the load follows the
// closed form of escalation. A run of up to [ExactLoadSpan] is drawn
// exactly, one line per agent: the saw-tooth of escalation and relief. A
// longer run has thousands of teeth, more than the plot has pixels, so
// each agent's load is aggregated into buckets of time ([LoadBucket]
// picks their width: at most 60 across the run; [BucketLoad] computes
// them): a line through each bucket's time-weighted mean, over a
// translucent step band from its minimum to its maximum, so that crises
// (a maximum of 1.0) stay visible. The title names the bucket width.
func LoadPlot(rows []Row) (*plot.Plot, error) {
	series := loadSeries(rows)
	if len(series) == 0 {
		return nil, ErrNoData
	}
	p := plot.New()
	p.Title.Text = "Suffering load"
	p.X.Label.Text = "simulated days"
	p.Y.Label.Text = "load"
	p.Y.Min, p.Y.Max = 0, 1.2 // room for the legend
	xmin, xmax := math.Inf(1), 0.0
	for _, s := range series {
		xmin = min(xmin, s.pts[0].X)
		xmax = max(xmax, s.pts[len(s.pts)-1].X)
	}
	span := time.Duration((xmax - xmin) * 24 * float64(time.Hour))
	width := LoadBucket(span)
	if width > 0 {
		p.Title.Text = fmt.Sprintf("Suffering load, in %s buckets: line the mean, band from the least to the most", bucketName(width))
	}
	// The bands first, then the lines over all of them, so that no band
	// tints another agent's line.
	lines := make([]*plotter.Line, len(series))
	for i, s := range series {
		c := SeriesColors[i%len(SeriesColors)]
		pts := s.pts
		if width > 0 {
			buckets := BucketLoad(s.pts, xmin, width.Hours()/24)
			band, mean := make(plotter.XYs, 0, 2*len(buckets)), make(plotter.XYs, 0, len(buckets))
			// The band is a step per bucket (it spans the bucket); the mean
			// a line through the buckets' middles.
			for _, b := range buckets {
				band = append(band, plotter.XY{X: b.From, Y: b.Max}, plotter.XY{X: b.To, Y: b.Max})
				mean = append(mean, plotter.XY{X: (b.From + b.To) / 2, Y: b.Mean})
			}
			for j := len(buckets) - 1; j >= 0; j-- {
				band = append(band, plotter.XY{X: buckets[j].To, Y: buckets[j].Min}, plotter.XY{X: buckets[j].From, Y: buckets[j].Min})
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			poly.Color = color.RGBA{R: c.R / 6, G: c.G / 6, B: c.B / 6, A: 0x2a} // c at 1/6, premultiplied
			poly.LineStyle.Width = 0
			p.Add(poly)
			pts = mean
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, vg.Points(1)
		if width > 0 {
			l.Width = vg.Points(1.5)
		}
		lines[i] = l
	}
	for i, l := range lines {
		p.Add(l)
		p.Legend.Add(series[i].name, l)
	}
	// The thresholds are drawn over the series, so that a dense run hides none.
	for _, th := range thresholds {
		l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: th}, {X: xmax, Y: th}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = ThresholdColor, vg.Points(1.5)
		if width > 0 {
			l.Width, l.Dashes = vg.Points(1), []vg.Length{vg.Points(6), vg.Points(4)}
		}
		p.Add(l)
	}
	th, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
	th.Color = ThresholdColor
	p.Legend.Add("thresholds 0.35 0.55 0.75 0.90", th)
	p.Legend.Top = true
	return p, nil
}

// ExactLoadSpan is the longest run [LoadPlot] draws exactly; a longer one
// is drawn in buckets.
const ExactLoadSpan = 24 * time.Hour

// loadBuckets is about how many buckets [LoadBucket] puts across a run:
// at [PlotWidth] pixels, 18 or more pixels a bucket, so that three or
// four agents' means stay apart and their bands show as steps.
const loadBuckets = 60

// bucketWidths are the widths [LoadBucket] chooses from.
var bucketWidths = []time.Duration{
	15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour,
}

// LoadBucket returns the bucket width [LoadPlot] uses for a run of span:
// 0 (drawn exactly) up to [ExactLoadSpan]; else the shortest of 15
// minutes, 30 minutes, 1, 2, 3, 6 and 12 hours, 1, 2, 7, 14 and 28 days
// that gives at most 60 buckets (3 hours for 7 days, 12 hours for 30
// days, 2 days for 90 days), or 28 days beyond.
func LoadBucket(span time.Duration) time.Duration {
	if span <= ExactLoadSpan {
		return 0
	}
	for _, w := range bucketWidths {
		if span/w <= loadBuckets {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// bucketName names a bucket width: "6-hour", "1-day", "7-day".
func bucketName(w time.Duration) string {
	switch {
	case w%(24*time.Hour) == 0:
		return fmt.Sprintf("%d-day", w/(24*time.Hour))
	case w%time.Hour == 0:
		return fmt.Sprintf("%d-hour", w/time.Hour)
	default:
		return fmt.Sprintf("%d-minute", w/time.Minute)
	}
}

// LoadBucketStats is one bucket of an agent's load curve: its span From
// to To (days since the start of the run), and the least, time-weighted
// mean and greatest load in it.
type LoadBucketStats struct {
	From, To       float64
	Min, Mean, Max float64
}

// BucketLoad aggregates a load curve into buckets of width days from x0:
// pts are points in days, in order of X, joined by straight lines (two
// points at one X are a jump). The curve is split at the buckets' edges by
// linear interpolation; each bucket's Mean is the curve's integral over
// the part of the bucket it covers divided by that part's length, Min and
// Max the extremes of the points in it and of the curve at its edges. A
// bucket the curve does not reach is left out; one it covers only in part
// (the last) spans only that part. Fewer than two points, or a width ≤ 0,
// give none.
func BucketLoad(pts plotter.XYs, x0, width float64) []LoadBucketStats {
	if len(pts) < 2 || width <= 0 {
		return nil
	}
	var out []LoadBucketStats
	var cur *LoadBucketStats
	var area float64
	curK := 0
	index := func(x float64) int { return int(math.Floor((x - x0) / width)) }
	flush := func() {
		if cur != nil && cur.To > cur.From {
			cur.Mean = area / (cur.To - cur.From)
			out = append(out, *cur)
		}
		cur, area = nil, 0
	}
	// add covers [xa, xb] of one segment (ya at xa, yb at xb), all inside
	// bucket k.
	add := func(k int, xa, ya, xb, yb float64) {
		if cur == nil || k != curK {
			flush()
			cur, curK = &LoadBucketStats{From: xa, To: xa, Min: math.Min(ya, yb), Max: math.Max(ya, yb)}, k
		}
		cur.To = xb
		cur.Min = math.Min(cur.Min, math.Min(ya, yb))
		cur.Max = math.Max(cur.Max, math.Max(ya, yb))
		area += (xb - xa) * (ya + yb) / 2
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if b.X <= a.X { // a jump: both values belong to the bucket
			add(index(b.X), b.X, a.Y, b.X, b.Y)
			continue
		}
		// Split the segment at each edge it crosses, k counting the
		// buckets (not recomputed from x, so that rounding cannot stall).
		xa, ya := a.X, a.Y
		for k := index(a.X); ; k++ {
			edge := x0 + float64(k+1)*width
			if edge >= b.X {
				add(k, xa, ya, b.X, b.Y)
				break
			}
			ye := a.Y + (b.Y-a.Y)*(edge-a.X)/(b.X-a.X)
			add(k, xa, ya, edge, ye)
			xa, ya = edge, ye
		}
	}
	flush()
	return out
}

type series struct {
	name string
	pts  plotter.XYs
}

// loadSeries builds each agent's load curve in days, decimated to at most
// about 4,000 points per agent (keeping each bucket's extremes).
func loadSeries(rows []Row) []series {
	type acc struct {
		name string
		pts  plotter.XYs
		prev *Row
	}
	var order []string
	by := map[string]*acc{}
	for i := range rows {
		r := &rows[i]
		a := by[r.Agent]
		if a == nil {
			if len(order) >= maxPlotAgents {
				continue
			}
			a = &acc{name: r.Agent}
			by[r.Agent] = a
			order = append(order, r.Agent)
		}
		if r.Name != "" {
			a.name = r.Name
		}
		x := r.Sec / 86400
		if p := a.prev; p != nil {
			s := make([]Sev, len(p.Stressors))
			for j, st := range p.Stressors {
				s[j] = Sev{Severity: float64(st.Severity), RatePerDay: float64(st.Rate)}
			}
			span := time.Duration((r.Sec - p.Sec) * float64(time.Second))
			for _, b := range breakpoints(s, span) {
				a.pts = append(a.pts, plotter.XY{X: p.Sec/86400 + b.Hours()/24, Y: LoadOf(EscalateStressors(s, b))})
			}
			a.pts = append(a.pts, plotter.XY{X: x, Y: LoadOf(EscalateStressors(s, span))})
		}
		a.pts = append(a.pts, plotter.XY{X: x, Y: float64(r.Load)})
		a.prev = r
	}
	out := make([]series, 0, len(order))
	for _, id := range order {
		a := by[id]
		out = append(out, series{name: a.name, pts: decimate(a.pts, 1000)})
	}
	return out
}

// decimate keeps, for each of n buckets of x, the first, lowest, highest
// and last points, in order.
func decimate(pts plotter.XYs, n int) plotter.XYs {
	if len(pts) <= 4*n {
		return pts
	}
	x0, x1 := pts[0].X, pts[len(pts)-1].X
	w := (x1 - x0) / float64(n)
	var out plotter.XYs
	for i := 0; i < len(pts); {
		b := math.Floor((pts[i].X - x0) / w)
		j := i
		lo, hi := i, i
		for j < len(pts) && math.Floor((pts[j].X-x0)/w) == b {
			if pts[j].Y < pts[lo].Y {
				lo = j
			}
			if pts[j].Y > pts[hi].Y {
				hi = j
			}
			j++
		}
		keep := []int{i, lo, hi, j - 1}
		if lo > hi {
			keep[1], keep[2] = hi, lo
		}
		last := -1
		for _, k := range keep {
			if k != last {
				out = append(out, pts[k])
				last = k
			}
		}
		i = j
	}
	return out
}

// interval is one stressor's span on the timeline.
type interval struct {
	from, to float64   // days
	samples  []float64 // days of severity samples, from..to
	sev      []float64
}

type lane struct {
	label string
	ivs   []interval
}

// timelineLanes builds one lane per (agent, stressor type), in order of
// first onset per agent, for the first 9 agents.
func timelineLanes(rows []Row) []lane {
	type open struct {
		lane  int
		onset float64
		iv    interval
	}
	var lanes []lane
	laneOf := map[[2]string]int{}
	opens := map[[2]string]*open{}
	names := map[string]string{}
	var agents []string
	closeIv := func(k [2]string, at float64) {
		o := opens[k]
		o.iv.to = at
		o.iv.samples = append(o.iv.samples, at)
		o.iv.sev = append(o.iv.sev, o.iv.sev[len(o.iv.sev)-1])
		lanes[o.lane].ivs = append(lanes[o.lane].ivs, o.iv)
		delete(opens, k)
	}
	for _, r := range rows {
		if _, ok := names[r.Agent]; !ok {
			if len(agents) >= maxPlotAgents {
				continue
			}
			agents = append(agents, r.Agent)
			names[r.Agent] = r.Agent
		}
		if r.Name != "" {
			names[r.Agent] = r.Name
		}
		x := r.Sec / 86400
		present := map[string]bool{}
		for _, st := range r.Stressors {
			present[st.Type] = true
			k := [2]string{r.Agent, st.Type}
			// a stressor resolved and added again within one heartbeat
			// shows as a new onset
			if o := opens[k]; o != nil && st.OnsetSec != o.onset {
				closeIv(k, x)
			}
			o := opens[k]
			if o == nil {
				li, ok := laneOf[k]
				if !ok {
					li = len(lanes)
					laneOf[k] = li
					lanes = append(lanes, lane{label: st.Type})
				}
				from := max(st.OnsetSec/86400, 0)
				o = &open{lane: li, onset: st.OnsetSec, iv: interval{from: from}}
				opens[k] = o
			}
			o.iv.samples = append(o.iv.samples, x)
			o.iv.sev = append(o.iv.sev, float64(st.Severity))
		}
		for _, typ := range sortedOpen(opens, r.Agent) {
			if !present[typ] {
				closeIv([2]string{r.Agent, typ}, x)
			}
		}
		if r.Kind == RowEnd {
			for _, typ := range sortedOpen(opens, r.Agent) {
				closeIv([2]string{r.Agent, typ}, x)
			}
		}
	}
	// Order lanes by agent, then first onset; label them with the agent.
	var out []lane
	for _, id := range agents {
		for _, li := range sortedLanes(laneOf, id) {
			l := lanes[li]
			l.label = names[id] + " · " + l.label
			out = append(out, l)
		}
	}
	return out
}

func sortedOpen[T any](opens map[[2]string]T, agent string) []string {
	var out []string
	for k := range opens {
		if k[0] == agent {
			out = append(out, k[1])
		}
	}
	slices.Sort(out)
	return out
}

func sortedLanes(laneOf map[[2]string]int, agent string) []int {
	var out []int
	for k, li := range laneOf {
		if k[0] == agent {
			out = append(out, li)
		}
	}
	slices.Sort(out)
	return out
}

// severityColor shades a severity (0–1) from pale yellow to dark red.
func severityColor(s float64) color.RGBA {
	s = min(max(s, 0), 1)
	lo := [3]float64{0xff, 0xed, 0xa0}
	hi := [3]float64{0x80, 0x00, 0x26}
	var c [3]uint8
	for i := range c {
		c[i] = uint8(math.Round(lo[i] + (hi[i]-lo[i])*s))
	}
	return color.RGBA{R: c[0], G: c[1], B: c[2], A: 0xff}
}

// timeline is the plotter of the stressor timeline.
type timeline struct {
	lanes []lane
	xmax  float64
}

func (t *timeline) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	fill := func(a, b float64, y0, y1 vg.Length, clr color.RGBA) {
		x0, x1 := trX(a), trX(b)
		if x1-x0 < 0.5 {
			x1 = x0 + 0.5
		}
		c.FillPolygon(clr, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
	for i, l := range t.lanes {
		y0, y1 := trY(float64(i)-0.35), trY(float64(i)+0.35)
		for _, iv := range l.ivs {
			// Merge consecutive pieces of one shade (20 shades) into one
			// rectangle.
			start, shade := iv.from, -1
			for j := 0; j+1 < len(iv.samples); j++ {
				a := iv.samples[j]
				if j == 0 {
					a = iv.from
				}
				sh := int(math.Round((iv.sev[j] + iv.sev[j+1]) / 2 * 20))
				if sh != shade {
					if shade >= 0 && a > start {
						fill(start, a, y0, y1, severityColor(float64(shade)/20))
					}
					start, shade = a, sh
				}
			}
			if shade >= 0 {
				fill(start, max(iv.to, start), y0, y1, severityColor(float64(shade)/20))
			}
		}
	}
}

func (t *timeline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, t.xmax, -0.5, float64(len(t.lanes)) - 0.5
}

// swatch is a legend thumbnail of one colour.
type swatch color.RGBA

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(color.RGBA(s), pts)
}

// TimelinePlot draws the stressor timeline: one row per stressor type of
// each of the first 9 agents, a bar from each onset to its resolution
// (or the end of the run), shaded by severity from pale yellow (0) to dark
// red (1).
func TimelinePlot(rows []Row) (*plot.Plot, error) {
	lanes := timelineLanes(rows)
	if len(lanes) == 0 {
		return nil, ErrNoData
	}
	xmax := 0.0
	for _, r := range rows {
		xmax = max(xmax, r.Sec/86400)
	}
	p := plot.New()
	p.Title.Text = "Stressors from onset to resolution, shaded by severity"
	p.X.Label.Text = "simulated days"
	p.Add(&timeline{lanes: lanes, xmax: xmax})
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = l.label
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, xmax*1.15 // room for the legend
	for _, s := range []float64{0.2, 0.5, 0.8, 1.0} {
		p.Legend.Add(fmt.Sprintf("severity %.1f", s), swatch(severityColor(s)))
	}
	p.Legend.Top = true
	return p, nil
}

// OutcomePlot draws the goals that ended on each simulated day, all agents
// together, as stacked bars: DONE, FAILED and ABANDONED.
func OutcomePlot(rows []Row) (*plot.Plot, error) {
	days := 0
	for _, r := range rows {
		days = max(days, int(math.Ceil(r.Sec/86400)))
	}
	if days == 0 {
		return nil, ErrNoData
	}
	counts := map[string]plotter.Values{}
	for _, st := range []string{"DONE", "FAILED", "ABANDONED"} {
		counts[st] = make(plotter.Values, days)
	}
	for _, r := range rows {
		if r.Ended == nil {
			continue
		}
		d := min(int(r.Sec/86400), days-1)
		if v, ok := counts[r.Ended.Status]; ok {
			v[d]++
		}
	}
	p := plot.New()
	p.Title.Text = "Goal outcomes per simulated day"
	p.X.Label.Text = "day"
	p.Y.Label.Text = "goals ended"
	w := vg.Points(math.Max(2, math.Min(24, 700/float64(days))))
	var below *plotter.BarChart
	for _, st := range []string{"DONE", "FAILED", "ABANDONED"} {
		b, err := plotter.NewBarChart(counts[st], w)
		if err != nil {
			return nil, err
		}
		b.Color = StatusColors[st]
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(st, b)
	}
	labels := make([]string, days)
	step := max(1, days/15)
	for i := range labels {
		if i%step == 0 {
			labels[i] = fmt.Sprint(i + 1)
		}
	}
	p.NominalX(labels...)
	p.Legend.Top = true
	return p, nil
}

// Save writes p in format f at the documented size ([PlotWidth] ×
// [PlotHeight] pixels at [PlotDPI] for PNG; the same size in inches for
// SVG, fonts not embedded).
func Save(w io.Writer, p *plot.Plot, f Format) error {
	wd := vg.Length(PlotWidth) * vg.Inch / PlotDPI
	ht := vg.Length(PlotHeight) * vg.Inch / PlotDPI
	switch f {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(PlotDPI), vgimg.UseBackgroundColor(color.White))
		p.Draw(draw.New(c))
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(wd, ht))
		p.Draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("simulate: unknown plot format %q", f)
}
