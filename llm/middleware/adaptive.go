package middleware

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// Defaults of [AdaptiveConfig].
const (
	DefaultAdaptiveMin     = 1
	DefaultAdaptiveMax     = 256
	DefaultAdaptiveInitial = 1
	// adaptiveHistory × adaptiveBucket is how many windows the no-load
	// latency is the minimum of (256): long enough that a server kept
	// busy, whose calls all wait, does not pass its queueing for its
	// speed; short enough to follow a server that became slower (a
	// larger model, longer replies) within minutes.
	adaptiveHistory, adaptiveBucket = 16, 16
	// adaptiveMinSamples is the fewest latency samples a window decides
	// on.
	adaptiveMinSamples = 3
)

// AdaptiveConfig configures an [AdaptiveLimit]. The zero value is usable:
// a limit from 1 to 256 that starts at 1.
type AdaptiveConfig struct {
	// Min, Max and Initial bound the limit and set where it starts, in
	// calls in flight; 0 means 1, 256 and Min. Initial is clamped to
	// [Min, Max].
	Min, Max, Initial int
	// OnChange, when set, is called with the new limit each time it
	// changes, after the limiter's lock is released (so it may call back
	// into the limiter). Calls are serialised with the samples that cause
	// them only as far as the callers serialise their samples.
	OnChange func(limit int)
}

// AdaptiveLimit finds how many model calls a server takes at once, the
// way TCP Vegas and Netflix's concurrency-limits (VegasLimit) find a
// network's: by watching latency. A model server serves a few requests at
// once (its slots: OLLAMA_NUM_PARALLEL, a vLLM batch) and queues the rest,
// so that, with a service time S and n calls in flight over c slots, a
// call takes about S while n ≤ c and S·n/c beyond: the latency above its
// minimum measures the server's queue. Beyond the queue's bound the
// server answers 503 "busy" (OLLAMA_MAX_QUEUE) or 429.
//
// Finished calls are grouped into windows: a window closes once it holds
// at least max(3, limit) latency samples (limit during the slow start) of
// calls started since the limit last changed, and has lasted the no-load
// latency. At each window's end, with RTT the window's mean latency,
// RTTmin the least latency seen over the last 256 windows (the no-load
// latency) and n the most calls in flight during the window, the server's
// queue is estimated as
//
//	queue = n × (1 − RTTmin / RTT)
//
// and, with alpha = 1 + log10(limit) and beta = alpha + 1:
//
//   - an overload signal in the window (a 503, a 429, a "busy" or "too
//     many requests" message; see [Overloaded]) cuts the limit by a quarter
//     (at least 1) at once, at most once per no-load latency: the calls
//     already in flight when the server refused report the same overload;
//   - at the start, until a window shows a queue of one call or more, the
//     limit grows by half each window (a slow start, as TCP's, but
//     gentler: a server's queue shows only past its slots, and doubling
//     from there overshoots its queue's bound too);
//   - a queue under alpha raises it by 1, unless fewer than half the
//     limit's calls were in flight (the demand, not the server, was the
//     bound: nothing was learnt);
//   - a queue over beta lowers it by 1; in between it holds.
//
// So the limit settles where the server holds a queue of one to three
// calls: its slots stay busy, and a call of the priority lane finds room
// behind a short queue rather than a 503. Latency that depends on the
// reply's length blurs the signal; the minimum over 256 windows keeps it
// usable as long as short and long replies mix, and a 503 still cuts.
//
// AdaptiveLimit is an algorithm, not a gate: [AdaptiveLimit.Observe]
// measures calls and [AdaptiveLimit.Limit] says how many to run;
// runner.Runner sizes its autonomy lane with it. Time comes from the
// callers (Record's now, Observe's clock), so that it works in virtual
// time and in tests. It is safe for concurrent use.
type AdaptiveLimit struct {
	cfg AdaptiveConfig

	mu        sync.Mutex
	limit     int
	slowStart bool
	inFlight  int
	win       adaptiveWindow
	mins      [adaptiveHistory]time.Duration // least latency per bucket of windows; 0 unused
	minIdx    int                            // the bucket being filled
	bucketN   int                            // windows in it
	lastRTT   time.Duration                  // mean of the last closed window
	lastCut   time.Time
	changedAt time.Time // when the limit last changed: calls started before measure the old one
	samples   int64
	overloads int64
	windows   int64
	cuts      int64
}

// adaptiveWindow gathers the samples of one window.
type adaptiveWindow struct {
	start       time.Time
	n           int
	sum         time.Duration
	min         time.Duration
	maxInFlight int
	overload    bool
}

// NewAdaptiveLimit returns a limit configured by cfg, at cfg.Initial.
func NewAdaptiveLimit(cfg AdaptiveConfig) *AdaptiveLimit {
	if cfg.Min <= 0 {
		cfg.Min = DefaultAdaptiveMin
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultAdaptiveMax
	}
	cfg.Max = max(cfg.Max, cfg.Min)
	if cfg.Initial <= 0 {
		cfg.Initial = cfg.Min
	}
	cfg.Initial = min(max(cfg.Initial, cfg.Min), cfg.Max)
	return &AdaptiveLimit{cfg: cfg, limit: cfg.Initial, slowStart: true}
}

// Limit returns the current limit: how many calls to run at once.
func (l *AdaptiveLimit) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// AdaptiveStats are an [AdaptiveLimit]'s state and counters.
type AdaptiveStats struct {
	// Limit is the current limit; InFlight the calls in flight now
	// through [AdaptiveLimit.Observe] (or between Begin and Record).
	Limit, InFlight int
	// MinRTT is the no-load latency (the least over the last 256 windows)
	// and RTT the mean latency of the last window; 0 before the first.
	MinRTT, RTT time.Duration
	// Samples counts the finished calls recorded, Overloads those that
	// were an overload signal (503, 429, "busy"), Windows the windows
	// closed and Cuts the limit's cuts for overload.
	Samples, Overloads, Windows, Cuts int64
	// SlowStart reports that the limit still grows by half each window.
	SlowStart bool
}

// Stats returns a snapshot of the limit's state and counters.
func (l *AdaptiveLimit) Stats() AdaptiveStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return AdaptiveStats{Limit: l.limit, InFlight: l.inFlight, MinRTT: l.minRTT(), RTT: l.lastRTT,
		Samples: l.samples, Overloads: l.overloads, Windows: l.windows, Cuts: l.cuts, SlowStart: l.slowStart}
}

// Begin counts a call going out and returns the calls in flight,
// itself included, for its [Sample].
func (l *AdaptiveLimit) Begin() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight++
	return l.inFlight
}

// Sample is one finished model call.
type Sample struct {
	// RTT is the call's latency: from the request to the whole reply.
	RTT time.Duration
	// InFlight is the calls in flight when it started, itself included
	// (what [AdaptiveLimit.Begin] returned).
	InFlight int
	// Overload reports that the server refused the call as overloaded
	// ([Overloaded]).
	Overload bool
	// Ignore reports a call whose latency says nothing about the server:
	// cancelled by the caller, or failed before reaching it. It is
	// counted out of the calls in flight and otherwise ignored.
	Ignore bool
}

// Record records a call that ended at now (a call counted with
// [AdaptiveLimit.Begin]) and returns the limit, changed if the sample
// closed a window that moved it.
func (l *AdaptiveLimit) Record(now time.Time, s Sample) int {
	l.mu.Lock()
	l.inFlight = max(l.inFlight-1, 0)
	before := l.limit
	l.record(now, s)
	after := l.limit
	l.mu.Unlock()
	if after != before && l.cfg.OnChange != nil {
		l.cfg.OnChange(after)
	}
	return after
}

func (l *AdaptiveLimit) record(now time.Time, s Sample) {
	if s.Ignore {
		return
	}
	l.samples++
	w := &l.win
	if w.start.IsZero() {
		w.start = now
	}
	w.maxInFlight = max(w.maxInFlight, s.InFlight)
	if s.Overload {
		l.overloads++
		w.overload = true
	} else if s.RTT > 0 && !now.Add(-s.RTT).Before(l.changedAt) {
		w.n++
		w.sum += s.RTT
		if w.min == 0 || s.RTT < w.min {
			w.min = s.RTT
		}
	}
	minRTT := l.minRTT()
	if w.overload {
		if l.lastCut.IsZero() || now.Sub(l.lastCut) >= minRTT {
			l.cut(now)
		}
		l.win = adaptiveWindow{} // what the window held predates the cut
		return
	}
	need := max(adaptiveMinSamples, l.limit)
	if l.slowStart {
		need = l.limit // a slow server's first windows would take minutes
	}
	if w.n < need || (minRTT > 0 && now.Sub(w.start) < minRTT) {
		return
	}
	before := l.limit
	l.close()
	if l.limit != before {
		l.changedAt = now
	}
}

// cut lowers the limit for an overload signal.
func (l *AdaptiveLimit) cut(now time.Time) {
	l.slowStart = false
	l.lastCut = now
	l.cuts++
	l.changedAt = now
	l.limit = max(l.cfg.Min, l.limit-max(1, l.limit/4))
}

// close decides on a full window.
func (l *AdaptiveLimit) close() {
	w := l.win
	l.win = adaptiveWindow{}
	l.windows++
	if m := l.mins[l.minIdx]; l.bucketN == 0 || w.min < m {
		l.mins[l.minIdx] = w.min
	}
	if l.bucketN++; l.bucketN == adaptiveBucket {
		l.minIdx, l.bucketN = (l.minIdx+1)%adaptiveHistory, 0
	}
	rtt := w.sum / time.Duration(w.n)
	l.lastRTT = rtt
	minRTT := l.minRTT()
	queue := float64(w.maxInFlight) * (1 - float64(minRTT)/float64(rtt))
	alpha := 1 + math.Log10(float64(l.limit))
	beta := alpha + 1
	if queue >= 1 {
		l.slowStart = false // past the slots: from here on, one at a time
	}
	switch {
	case queue < alpha && 2*w.maxInFlight < l.limit:
		// The demand, not the server, was the bound: nothing learnt.
	case queue < alpha && l.slowStart:
		l.limit = min(l.cfg.Max, max(l.limit+1, (l.limit*3+1)/2))
	case queue < alpha:
		l.limit = min(l.cfg.Max, l.limit+1)
	case queue > beta:
		l.slowStart = false
		l.limit = max(l.cfg.Min, l.limit-1)
	default:
		l.slowStart = false
	}
}

// minRTT is the least window minimum remembered; 0 before the first
// window closed.
func (l *AdaptiveLimit) minRTT() time.Duration {
	var m time.Duration
	for _, d := range l.mins {
		if d > 0 && (m == 0 || d < m) {
			m = d
		}
	}
	return m
}

// Observe returns a Model that measures every call of m for l: it counts
// the call in flight ([AdaptiveLimit.Begin]), times it with now (nil:
// time.Now), and records it ([AdaptiveLimit.Record]) as an overload when
// [Overloaded] says so, and as ignored when ctx ended first. Place it
// innermost, directly around the adapter, so that the latency is the
// server's and each retry is a sample of its own.
func (l *AdaptiveLimit) Observe(m llm.Model, now func() time.Time) llm.Model {
	if l == nil {
		return m
	}
	if now == nil {
		now = time.Now
	}
	return &adaptiveModel{next: m, l: l, now: now}
}

type adaptiveModel struct {
	next llm.Model
	l    *AdaptiveLimit
	now  func() time.Time
}

var _ llm.Model = (*adaptiveModel)(nil)

// Unwrap returns the wrapped model ([llm.Unwrapper]).
func (x *adaptiveModel) Unwrap() llm.Model { return x.next }

// Name returns the wrapped model's name, if it has one.
func (x *adaptiveModel) Name() string { return nameOf(x.next) }

func (x *adaptiveModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	n := x.l.Begin()
	start := x.now()
	resp, err := x.next.Generate(ctx, req)
	end := x.now()
	s := Sample{RTT: end.Sub(start), InFlight: n}
	switch {
	case err == nil:
	case Overloaded(err):
		s.Overload = true
	case ctx.Err() != nil, errors.Is(err, llm.ErrUnavailable):
		s.Ignore = true // cancelled, or the server was not reached
	}
	x.l.Record(end, s)
	return resp, err
}

// Overloaded reports whether err is a server's overload signal: an HTTP
// 503 or 429 ([llm.StatusError]), or a message saying the server is busy
// (Ollama's "server busy, please try again. maximum pending requests
// exceeded") or has too many requests.
func Overloaded(err error) bool {
	if err == nil {
		return false
	}
	if se, ok := asStatus(err); ok && (se.StatusCode == http.StatusServiceUnavailable || se.StatusCode == http.StatusTooManyRequests) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "server busy") || strings.Contains(msg, "too many requests")
}
