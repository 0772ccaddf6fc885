package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrContextLength: a prompt did not fit the model's context window. The
// server refused it, the adapter refused to send it, or the server cut it
// silently and the adapter noticed. See [ContextLengthError].
var ErrContextLength = errors.New("llm: prompt exceeds the context window")

// ContextLengthError reports a prompt that did not fit the context window.
// It matches [ErrContextLength]. Retrying the same request cannot help:
// the caller shrinks the prompt (the existence cycle fits its prompt
// budget to Window; the tool loop compacts its history) and tries again.
type ContextLengthError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// Model is the model the request was for.
	Model string
	// Window is the context window in tokens the prompt must fit: the
	// limit the server stated, the window it was seen to grant, or the
	// operator's ceiling; 0 when unknown.
	Window int
	// Prompt is the prompt's size in tokens: the server's count when it
	// gave one, else the adapter's estimate.
	Prompt int
	// Kept is, for a prompt the server cut silently (HTTP 200), the tokens
	// it kept (Ollama's prompt_eval_count); 0 when the prompt was refused.
	Kept int
	// Message is the server's error message, when it refused the prompt.
	Message string
	// Response is the reply to a prompt the server cut, whose tokens were
	// spent; nil when the prompt was refused. It answers a prompt that
	// lost its beginning: don't use it as if it answered the request.
	Response *Response
}

// Error says which prompt did not fit which window, or how far the server
// cut it: "ollama: model \"m\": the server cut the prompt from about N to K
// tokens (its context window)".
func (e *ContextLengthError) Error() string {
	var s string
	switch {
	case e.Kept > 0:
		s = fmt.Sprintf("%s: model %q: the server cut the prompt from about %d to %d tokens (its context window)", e.Provider, e.Model, e.Prompt, e.Kept)
	case e.Window > 0 && e.Prompt > 0:
		s = fmt.Sprintf("%s: model %q: a prompt of about %d tokens does not fit the context window of %d tokens", e.Provider, e.Model, e.Prompt, e.Window)
	default:
		s = fmt.Sprintf("%s: model %q: the prompt does not fit the context window", e.Provider, e.Model)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is [ErrContextLength].
func (e *ContextLengthError) Is(target error) bool { return target == ErrContextLength }

// Windowed is implemented by models that know the context window they are
// served with: the Ollama and OpenAI-compatible adapters and llmtest's
// stand-in servers' clients. Middleware passes it through ([Unwrapper]);
// use [ContextWindowOf] rather than a type assertion.
type Windowed interface {
	// ContextWindow returns the context window in tokens that a prompt
	// and its reply must fit together (what the server grants, as far as
	// the model knows; 0 when unknown) and the model's calibrated token
	// estimator. The first call may ask the server (Ollama's /api/show);
	// its errors are the adapter's classified errors.
	ContextWindow(ctx context.Context) (tokens int, est *TokenEstimator, err error)
}

// Unwrapper is implemented by middleware: Unwrap returns the model it
// wraps, so that [ContextWindowOf] finds the adapter below.
type Unwrapper interface {
	Unwrap() Model
}

// ContextWindowOf returns the context window of m in tokens and its token
// estimator, looking through middleware ([Unwrapper]) for a [Windowed]
// model. It returns 0 and an uncalibrated estimator (nil, which estimates
// characters / 4) when no model in the chain knows its window.
func ContextWindowOf(ctx context.Context, m Model) (tokens int, est *TokenEstimator, err error) {
	for range 32 { // middleware chains are short; a cycle must not hang
		if w, ok := m.(Windowed); ok {
			return w.ContextWindow(ctx)
		}
		u, ok := m.(Unwrapper)
		if !ok {
			return 0, nil, nil
		}
		m = u.Unwrap()
	}
	return 0, nil, nil
}

// Context window defaults.
const (
	// DefaultResponseReserve is the tokens kept free in the window for the
	// reply when a request sets no MaxTokens.
	DefaultResponseReserve = 1024
	// DefaultMaxWindow caps the window an adapter asks for when the
	// operator sets no ceiling: KV-cache memory grows with the window.
	DefaultMaxWindow = 32768
	// cutBelowCold and cutBelow: a server that reports fewer prompt tokens
	// than this share of the estimate cut the prompt; the looser share
	// holds until the estimator has 3 observations.
	cutBelowCold, cutBelow = 0.75, 0.85
	calibratedAfter        = 3
	// edgeSlack: a server that reports within this many tokens of the
	// whole window kept exactly a window's worth: it cut the prompt.
	edgeSlack = 16
	// minWindow: no server in use grants a window below this many tokens
	// (Ollama's smallest default was 2048), so a smaller count is never
	// taken for a cut, and no learned window goes below it: a false alarm
	// must not leave an agent a window too small for its prompt.
	minWindow = 1024
)

// windowSteps are the windows [ContextTracker] asks for (see
// [WindowSteps]).
var windowSteps = [...]int{4096, 8192, 16384, 32768, 65536, 131072, 262144}

// WindowSteps returns the windows, in tokens, that [ContextTracker] asks
// for, smallest first: 4096, 8192, … 262144. Ollama reloads a model
// whenever num_ctx changes, so a few fixed steps keep reloads rare. The
// slice is a copy.
func WindowSteps() []int { return slices.Clone(windowSteps[:]) }

// ContextTracker keeps what an adapter knows of one model's context window
// on one server: the model's trained length, the operator's ceiling, the
// window the server has been seen to grant, the step in use, and a
// calibrated [TokenEstimator]. Adapters call [ContextTracker.Plan] before
// each request and [ContextTracker.Observe] or [ContextTracker.Refused]
// after it. It is safe for concurrent use.
type ContextTracker struct {
	// Ceiling is the largest window the operator allows, in tokens; 0
	// means the model's length capped at [DefaultMaxWindow].
	Ceiling int
	// Default is the window assumed when neither the ceiling, the model's
	// length nor the server says: the Ollama adapter assumes
	// [DefaultMaxWindow]; 0 means unknown, and then [ContextTracker.Plan]
	// refuses nothing and asks for no window until a server states one.
	Default int
	// Est is the calibrated estimator; nil means a new one.
	Est *TokenEstimator

	mu        sync.Mutex
	length    int // the model's trained context length; 0 unknown
	granted   int // the window the server was seen to grant; 0 unknown
	step      int // the window last asked for; never lowered but by granted
	overflows int
	// topKept and topRaw are the largest prompt count a whole prompt got
	// and its raw estimate: a larger prompt counted the same hit a
	// plateau, the granted window.
	topKept, topRaw int
}

// SetLength records the model's trained context length in tokens (for
// example from Ollama's /api/show); 0 means unknown.
func (t *ContextTracker) SetLength(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.length = max(n, 0)
}

// Estimator returns the tracker's estimator, creating it on first use.
func (t *ContextTracker) Estimator() *TokenEstimator {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Est == nil {
		t.Est = NewTokenEstimator()
	}
	return t.Est
}

// Window returns the usable window in tokens: the ceiling and the model's
// length, whichever is smaller (the length capped at [DefaultMaxWindow]
// when there is no ceiling; Default when neither is known), lowered to what
// the server was seen to grant; 0 when nothing is known.
func (t *ContextTracker) Window() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.windowLocked()
}

func (t *ContextTracker) windowLocked() int {
	w := max(t.Ceiling, 0)
	if t.length > 0 {
		l := t.length
		if w == 0 {
			l = min(l, DefaultMaxWindow)
		}
		w = minKnown(w, l)
	}
	if w == 0 {
		w = t.Default
	}
	return minKnown(w, t.granted)
}

// minKnown is the smaller of a and b, where 0 means unknown.
func minKnown(a, b int) int {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Overflows returns how many prompts were refused or cut so far.
func (t *ContextTracker) Overflows() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.overflows
}

// Plan is the context decision for one request.
type Plan struct {
	// Raw is the request's [RawRequestTokens]; Tokens the calibrated
	// estimate of its prompt.
	Raw, Tokens int
	// Reserve is the tokens kept for the reply.
	Reserve int
	// Window is the window to ask the server for (Ollama's num_ctx): the
	// smallest of [WindowSteps] that holds Tokens + Reserve, never smaller
	// than one asked for before (a change reloads the model), and never
	// more than the usable window.
	Window int
}

// Plan estimates req and picks the window to ask for. reserve is the
// tokens to keep for the reply (0 means req.MaxTokens, else
// [DefaultResponseReserve] or a quarter of the usable window, whichever
// is smaller). When the prompt and the reserve cannot fit
// the usable window, it returns a [*ContextLengthError] without Kept: the
// request must not be sent, since the server would cut its beginning.
func (t *ContextTracker) Plan(provider, model string, req *Request, reserve int) (Plan, error) {
	est := t.Estimator()
	p := Plan{Raw: RawRequestTokens(req)}
	p.Tokens = est.Scale(p.Raw)
	t.mu.Lock()
	defer t.mu.Unlock()
	usable := t.windowLocked()
	p.Reserve = Reserve(req, reserve, usable)
	if usable == 0 {
		return p, nil // nothing known: the server decides
	}
	need := p.Tokens + p.Reserve
	if need > usable {
		t.overflows++
		return p, &ContextLengthError{Provider: provider, Model: model, Window: usable, Prompt: p.Tokens}
	}
	w := usable
	for _, s := range windowSteps {
		if s >= need {
			w = min(s, usable)
			break
		}
	}
	if t.step > w {
		w = min(t.step, usable)
	}
	t.step = w
	p.Window = w
	return p, nil
}

// Reserve returns the tokens to keep for the reply in a window of window
// tokens: reserve when positive, else req.MaxTokens when set, else
// [DefaultResponseReserve] or a quarter of the window, whichever is
// smaller.
func Reserve(req *Request, reserve, window int) int {
	switch {
	case reserve > 0:
		return reserve
	case req != nil && req.MaxTokens > 0:
		return req.MaxTokens
	case window > 0:
		return min(DefaultResponseReserve, window/4)
	}
	return DefaultResponseReserve
}

// Observe learns from a reply: reported is the prompt tokens the server
// counted (0 when it reports none). It reports whether the server cut the
// prompt. A count under 1024 tokens is never a cut (no server in use
// grants less).
// Otherwise the server cut the prompt when it counted:
//   - less than 75 % of the estimate (85 % once the estimator has 3
//     observations);
//   - a whole window's worth: within 16 tokens of the window asked for,
//     which the plan left room in;
//   - within 4 tokens of a multiple of 1024 from 2048 up, and less than
//     95 % of the estimate: a window's worth of a window the server
//     granted instead (1024 itself is too common a prompt size to tell);
//   - the same as the largest count seen so far, within 1 %, for a prompt
//     at least 3 % larger: a plateau, the granted window. The estimator's
//     calibration, which that earlier count misled, starts over.
//
// A cut prompt teaches the window the server really grants: what it kept.
// A whole one calibrates the estimator, unless it strays more than 40 %
// from a ratio learned over 3 observations (such a count is more likely a
// cut the rules missed than the tokenizer).
func (t *ContextTracker) Observe(p Plan, reported int) (cut bool) {
	if reported <= 0 {
		return false
	}
	est := t.Estimator()
	if reported < minWindow {
		est.Observe(p.Raw, reported)
		return false
	}
	ratio, samples := est.Ratio()
	below := cutBelowCold
	if samples >= calibratedAfter {
		below = cutBelow
	}
	tokens := float64(p.Tokens)
	rem := reported % 1024
	t.mu.Lock()
	plateau := t.topKept > 0 && abs(reported-t.topKept) <= max(t.topKept/100, 1) && p.Raw*100 >= t.topRaw*103
	t.mu.Unlock()
	cut = float64(reported) < below*tokens ||
		(p.Window > 0 && reported >= p.Window-edgeSlack) ||
		(reported >= 2*1024-4 && (rem <= 4 || rem >= 1020) && float64(reported) < 0.95*tokens) ||
		plateau
	if !cut {
		if obs := float64(reported) / float64(max(p.Raw, 1)); samples < calibratedAfter || (obs > 0.6*ratio && obs < 1.4*ratio) {
			est.Observe(p.Raw, reported)
		}
		t.mu.Lock()
		if reported > t.topKept {
			t.topKept, t.topRaw = reported, p.Raw
		}
		t.mu.Unlock()
		return false
	}
	if plateau {
		est.reset()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overflows++
	t.learnLocked(reported)
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Refused learns from a prompt the server refused as too long. limit is
// the window the server stated (0 when it did not say): the usable window
// drops to it; without one, it drops below the refused prompt's estimate,
// so that the next prompt is made smaller.
func (t *ContextTracker) Refused(p Plan, limit int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overflows++
	switch {
	case limit > 0:
		t.learnLocked(limit)
	case p.Tokens > 0:
		t.learnLocked((p.Tokens + p.Reserve) * 4 / 5)
	}
}

// learnLocked lowers the granted window to n tokens (never below 1024),
// and the step in use with it.
func (t *ContextTracker) learnLocked(n int) {
	n = max(n, minWindow)
	if t.granted == 0 || n < t.granted {
		t.granted = n
	}
	t.step = min(t.step, t.granted)
}

// Granted records a window the server stated without refusing anything
// (for example a limit an OpenAI-compatible server reports), in tokens.
func (t *ContextTracker) Granted(n int) {
	if n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.learnLocked(n)
}
