package ctxwindow

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/existence-loop/sdk/llm"
)

// Context window defaults.
const (
	// DefaultResponseReserve is the tokens kept free in the window for the
	// reply when a request sets no MaxTokens.
	DefaultResponseReserve = 1024
	// DefaultMaxWindow caps the window an adapter asks for when the
	// operator sets no ceiling: KV-cache memory grows with the window.
	DefaultMaxWindow = 32768
	// OllamaDefaultWindow is the window current Ollama servers give a
	// request without num_ctx (OLLAMA_CONTEXT_LENGTH unset, a small GPU),
	// and so the window of their OpenAI-compatible endpoints, which drop
	// num_ctx.
	OllamaDefaultWindow = 4096
	// cutBelowCold and cutBelow: a count under this share of what the
	// prompt must cost is too small for the whole prompt; the looser
	// share holds until the estimator has 3 observations.
	cutBelowCold, cutBelow = 0.75, 0.85
	calibratedAfter        = 3
	// edgeSlack: a server that reports within this many tokens of the
	// window asked for kept exactly a window's worth: it cut the prompt
	// (the plan left room in the window for the reply).
	edgeSlack = 16
	// minWindow: no server in use grants a window below this many tokens
	// (Ollama's smallest default was 2048), so a smaller count is never
	// taken for a cut, and no learned window goes below it.
	minWindow = 1024
	// rememberPrompts is how many recent prompts a tracker keeps to tell
	// what a server's KV cache may hold.
	rememberPrompts = 16
	// soleShare: a prompt that shares at most this share of its tokens
	// with any recent prompt is counted whole by any server, cache or
	// not, and may calibrate the estimator.
	soleShare = 0.05
)

// windowSteps are the windows [Tracker] asks for (see
// [Steps]).
var windowSteps = [...]int{4096, 8192, 16384, 32768, 65536, 131072, 262144}

// Steps returns the windows, in tokens, that [Tracker] asks
// for, smallest first: 4096, 8192, … 262144. Ollama reloads a model
// whenever num_ctx changes, so a few fixed steps keep reloads rare. The
// slice is a copy.
func Steps() []int { return slices.Clone(windowSteps[:]) }

// Tracker keeps what an adapter knows of one model's context window
// on one server: the model's trained length, the operator's ceiling, the
// window the server has been seen to grant, the step in use, whether the
// server refuses or cuts a prompt over its window, the recent prompts (to
// tell a KV-cache hit from a cut) and a calibrated [llm.TokenEstimator].
// Adapters call [Tracker.Plan] before each request and
// [Tracker.Observe], [Tracker.Probed] or
// [Tracker.Refused] after it. It is safe for concurrent use.
//
// The window goes down only on what a server states: a refusal (with the
// window it names, if any) or a count that proves a cut. A count below the
// estimate is not, by itself, a cut: servers that reuse the KV cache of an
// earlier prompt (Ollama, llama.cpp) may count only the tokens after the
// cached prefix.
type Tracker struct {
	// Ceiling is the largest window the operator allows, in tokens; 0
	// means the model's length capped at [DefaultMaxWindow].
	Ceiling int
	// Default is the window assumed when neither the ceiling, the model's
	// length nor the server says: the Ollama adapter assumes
	// [DefaultMaxWindow]; 0 means unknown, and then [Tracker.Plan]
	// refuses nothing and asks for no window until a server states one.
	Default int
	// Floor is the window the server grants any request (Ollama's
	// default, [OllamaDefaultWindow]); 0 means unknown. A refusal that
	// states no window lowers the window to Floor first, and below it
	// only when a prompt that fits Floor is refused too.
	Floor int
	// Est is the calibrated estimator; nil means a new one.
	Est *llm.TokenEstimator

	mu        sync.Mutex
	length    int // the model's trained context length; 0 unknown
	granted   int // the window the server was seen to grant; 0 unknown
	step      int // the window last asked for; never lowered but by granted
	overflows int
	probes    int
	refuses   bool       // the server refuses a prompt over its window: a reply is never cut
	recent    [][]string // recent prompts, as rendered by render, newest last
}

// SetLength records the model's trained context length in tokens (for
// example from Ollama's /api/show); 0 means unknown.
func (t *Tracker) SetLength(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.length = max(n, 0)
}

// Hold makes every later [Tracker.Plan] ask for a window of at
// least n tokens (at most the usable window): the window chosen at start
// for the run's largest request kind, or the one the server already runs
// the model with, so that no request changes it (Ollama reloads the model
// whenever num_ctx changes). n <= 0 changes nothing; a lower n than the
// window held does not lower it.
func (t *Tracker) Hold(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.step = max(t.step, n)
}

// SetRefuses records whether the server refuses a prompt over its window
// instead of cutting it: Ollama from 0.12.6 on /api/chat with "truncate":
// false, llama.cpp's server, vLLM and OpenAI. Then a reply is never taken
// for a cut, whatever its count; counts only calibrate the estimator.
func (t *Tracker) SetRefuses(refuses bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refuses = refuses
}

// Estimator returns the tracker's estimator, creating it on first use.
func (t *Tracker) Estimator() *llm.TokenEstimator {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Est == nil {
		t.Est = llm.NewTokenEstimator()
	}
	return t.Est
}

// Window returns the usable window in tokens: the ceiling and the model's
// length, whichever is smaller (the length capped at [DefaultMaxWindow]
// when there is no ceiling; Default when neither is known), lowered to what
// the server was seen to grant; 0 when nothing is known.
func (t *Tracker) Window() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.windowLocked()
}

func (t *Tracker) windowLocked() int {
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
func (t *Tracker) Overflows() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.overflows
}

// Probes returns how many times a count left the tracker unsure
// ([Unsure]) so far.
func (t *Tracker) Probes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.probes
}

// Plan is the context decision for one request.
type Plan struct {
	// Raw is the request's [llm.RawRequestTokens]; Tokens the calibrated
	// estimate of its prompt.
	Raw, Tokens int
	// Reserve is the tokens kept for the reply.
	Reserve int
	// Window is the window to ask the server for (Ollama's num_ctx): the
	// smallest of [Steps] that holds Tokens + Reserve, never smaller
	// than one asked for before (a change reloads the model), and never
	// more than the usable window.
	Window int

	prompt []string // the prompt as rendered by render
}

// Plan estimates req and picks the window to ask for. reserve is the
// tokens to keep for the reply (0 means req.MaxTokens, else
// [DefaultResponseReserve], at most a quarter of the usable window to
// pick the window and then at most a quarter of the window picked: the
// reply limit sent is a quarter of the num_ctx sent). When the prompt and the reserve cannot fit
// the usable window, it returns a [*llm.ContextLengthError] without Kept: the
// request must not be sent, since the server would cut its beginning.
func (t *Tracker) Plan(provider, model string, req *llm.Request, reserve int) (Plan, error) {
	est := t.Estimator()
	p := Plan{Raw: llm.RawRequestTokens(req), prompt: render(req)}
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
		return p, &llm.ContextLengthError{Provider: provider, Model: model, Window: usable, Prompt: p.Tokens, Reserve: p.Reserve}
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
	// The reply's limit is a quarter of the window sent, not of the
	// usable one: it fits there, since the window holds the prompt and
	// the larger reserve.
	p.Reserve = Reserve(req, reserve, w)
	return p, nil
}

// Reserve returns the tokens to keep for the reply in a window of window
// tokens, which adapters also send as the reply's limit (num_predict,
// max_tokens): reserve when positive, else req.MaxTokens when set, but at
// most a quarter of a known window (the prompt needs the rest), else
// [DefaultResponseReserve] or a quarter of the window, whichever is
// smaller.
func Reserve(req *llm.Request, reserve, window int) int {
	switch {
	case reserve > 0:
		return reserve
	case req != nil && req.MaxTokens > 0 && window > 0:
		return max(min(req.MaxTokens, window/4), 1)
	case req != nil && req.MaxTokens > 0:
		return req.MaxTokens
	case window > 0:
		return min(DefaultResponseReserve, window/4)
	}
	return DefaultResponseReserve
}

// Count is what a server reported of the prompt of a reply.
type Count struct {
	// Prompt is the prompt tokens it counted (Ollama's
	// prompt_eval_count, OpenAI's usage.prompt_tokens); 0 when it said
	// nothing.
	Prompt int
	// Whole reports that Prompt counts the whole prompt the model saw,
	// tokens served from the KV cache included: the server says how many
	// were cached (OpenAI's usage.prompt_tokens_details.cached_tokens,
	// as llama.cpp's server, vLLM and OpenAI report). Without it, Prompt
	// may count only the tokens after a cached prefix.
	Whole bool
}

// Verdict is what a reply's prompt count shows ([Tracker.Observe]).
type Verdict int

const (
	// Kept: the server saw the whole prompt, or nothing shows otherwise.
	Kept Verdict = iota
	// Cut: the count proves the server cut the prompt.
	Cut
	// Unsure: the count is what a cut or a KV-cache hit on part of a
	// recent prompt could give. The adapter asks again so that no cache
	// can serve the prompt ([Tracker.Probed]); it does not lower
	// the window on a guess.
	Unsure
)

// String returns "kept", "cut" or "unsure".
func (v Verdict) String() string {
	switch v {
	case Cut:
		return "cut"
	case Unsure:
		return "unsure"
	}
	return "kept"
}

// Observe learns from a reply to the request planned as p, whose prompt
// the server counted as c. What a count shows:
//   - a server that refuses prompts over its window ([Tracker.SetRefuses])
//     never cut one it answered: [Kept];
//   - a count under 1024 tokens is never a cut (no server in use grants
//     less): [Kept];
//   - a count within 16 tokens of the window asked for is a window's
//     worth, which the plan left room in: [Cut];
//   - a whole count (c.Whole, or the count of a prompt that shares at
//     most 5 % of its tokens with any recent one, which no cache could
//     serve) within 4 tokens of a multiple of 1024 from 2048 up, under
//     95 % of the estimate, is a window's worth of a window the server
//     granted instead: [Cut];
//   - a count of at least the whole prompt's estimate (75 %, or 85 % once
//     the estimator has 3 observations): [Kept];
//   - a lower whole count, or one too low even for the tokens after the
//     longest prefix the prompt shares with a recent prompt (beyond the
//     estimate's error), is more than a KV cache can explain: [Cut];
//   - a count close to the tokens after the prefix a recent prompt
//     shares (what a cache hit on it gives), within the estimate's error
//     (25 %, or 15 % calibrated, of the whole prompt's estimate): [Kept];
//   - anything else, a count between such a cache hit and the whole
//     prompt: [Unsure].
//
// A cut teaches the window the server really grants: what it kept. A
// whole count — c.Whole, or a prompt sharing at most 5 % of its tokens
// with recent ones, counted in full — calibrates the estimator, unless it
// strays more than 40 % from a ratio learned over 3 observations.
func (t *Tracker) Observe(p Plan, c Count) Verdict {
	defer t.remember(p.prompt)
	if c.Prompt <= 0 {
		return Kept
	}
	est := t.Estimator()
	ratio, samples := est.Ratio()
	below := cutBelowCold
	if samples >= calibratedAfter {
		below = cutBelow
	}
	whole := float64(p.Tokens)
	rep := float64(c.Prompt)
	t.mu.Lock()
	refuses := t.refuses
	shares := t.sharesLocked(p.prompt, est)
	t.mu.Unlock()
	sole := c.Whole || len(shares) == 0 || float64(slices.Max(shares)) <= soleShare*whole
	calibrate := func() {
		if !sole || rep < below*whole {
			return
		}
		if obs := rep / float64(max(p.Raw, 1)); samples < calibratedAfter || (obs > 0.6*ratio && obs < 1.4*ratio) {
			est.Observe(p.Raw, c.Prompt)
		}
	}
	v := Kept
	switch {
	case refuses || c.Prompt < minWindow:
	case p.Window > 0 && c.Prompt >= p.Window-edgeSlack:
		v = Cut
	case sole && roundWindow(c.Prompt) && rep < 0.95*whole:
		v = Cut // a window's worth of a window the server granted instead
	case rep >= below*whole:
	case sole:
		v = Cut // no cache could have served more than a few tokens
	default:
		// The tokens after a shared prefix are the difference of two
		// estimates: their error is a share of the whole prompt's.
		tol := (1-below)*whole + edgeSlack
		least := whole
		for _, s := range shares {
			after := max(whole-float64(s), 1)
			least = min(least, after)
			if rep >= after-tol && rep <= after+tol {
				calibrate()
				return Kept // a cache hit on that prefix
			}
		}
		if rep < least-tol {
			v = Cut
		} else {
			v = Unsure
		}
	}
	switch v {
	case Kept:
		calibrate()
	case Cut:
		t.mu.Lock()
		t.overflows++
		t.learnLocked(c.Prompt)
		t.mu.Unlock()
	case Unsure:
		t.mu.Lock()
		t.probes++
		t.mu.Unlock()
	}
	return v
}

// roundWindow reports whether n tokens is within 4 of a whole number of
// 1024-token blocks from 2048 up: a window's worth of a window a server
// grants (1024 itself is too common a prompt size to tell).
func roundWindow(n int) bool {
	rem := n % 1024
	return n >= 2*1024-4 && (rem <= 4 || rem >= 1020)
}

// Probed learns from a probe after an [Unsure] verdict: the prompt of p
// sent again with a different first token, so that no KV cache could
// serve any of it, and counted as reported. It reports whether the server
// cut the prompt: the count is within 16 tokens of the window asked for,
// or at least 1024 and under the share of the estimate [Observe] uses. A
// whole count calibrates the estimator; a cut teaches the window.
func (t *Tracker) Probed(p Plan, reported int) (cut bool) {
	return t.Observe(Plan{Raw: p.Raw, Tokens: p.Tokens, Reserve: p.Reserve, Window: p.Window}, Count{Prompt: reported, Whole: true}) == Cut
}

// Refused learns from a prompt the server refused as too long. limit is
// the window the server stated (0 when it did not say): the usable window
// drops to it. Without one, it drops below the refused prompt's estimate
// (to 80 % of the prompt and its reserve), so that the next prompt is made
// smaller — but not below Floor while the refused prompt needed more than
// Floor.
func (t *Tracker) Refused(p Plan, limit int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overflows++
	switch {
	case limit > 0:
		t.learnLocked(limit)
	case p.Tokens > 0:
		need := p.Tokens + p.Reserve
		n := need * 4 / 5
		if t.Floor > 0 && need > t.Floor {
			n = max(n, t.Floor)
		}
		t.learnLocked(n)
	}
}

// learnLocked lowers the granted window to n tokens (never below 1024),
// and the step in use with it.
func (t *Tracker) learnLocked(n int) {
	n = max(n, minWindow)
	if t.granted == 0 || n < t.granted {
		t.granted = n
	}
	t.step = min(t.step, t.granted)
}

// Granted records a window the server stated without refusing anything
// (for example a limit an OpenAI-compatible server reports), in tokens.
func (t *Tracker) Granted(n int) {
	if n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.learnLocked(n)
}

// remember keeps prompt among the recent prompts.
func (t *Tracker) remember(prompt []string) {
	if len(prompt) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.recent) >= rememberPrompts {
		t.recent = slices.Delete(t.recent, 0, 1)
	}
	t.recent = append(t.recent, prompt)
}

// sharesLocked returns, for each recent prompt that shares a prefix with
// prompt, the estimated tokens of that prefix: what a KV cache holding
// that prompt could serve. The prefix runs over the parts both share and
// into the first part that differs, up to where it differs; a recent
// prompt that is a whole prefix of this one shares the assistant message
// after it too, since a cache keeps the reply it generated.
func (t *Tracker) sharesLocked(prompt []string, est *llm.TokenEstimator) []int {
	var out []int
	for _, r := range t.recent {
		n := 0
		for n < len(r) && n < len(prompt) && r[n] == prompt[n] {
			n++
		}
		raw := 0
		for _, part := range prompt[:n] {
			raw += llm.RawTokens(part)
		}
		switch {
		case n < len(r) && n < len(prompt):
			raw += llm.RawTokens(prompt[n][:commonPrefix(r[n], prompt[n])])
		case n == len(r) && n < len(prompt) && strings.HasPrefix(prompt[n], assistantMark):
			raw += llm.RawTokens(prompt[n])
		}
		if raw > 0 {
			out = append(out, est.Scale(raw))
		}
	}
	return out
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b, backed off to a UTF-8 boundary.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// assistantMark starts an assistant message's part in render's output.
const assistantMark = "\x00assistant\x00"

// render splits a request's prompt into the parts a chat template renders
// in order, each message one part: the leading system messages, the tool
// definitions, then the other messages (the order of common chat
// templates).
func render(req *llm.Request) []string {
	if req == nil {
		return nil
	}
	var out []string
	i := 0
	msg := func(m llm.Message) string {
		var b strings.Builder
		b.WriteString("\x00" + string(m.Role) + "\x00")
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("\x00" + c.Name)
			b.Write(c.Arguments)
		}
		return b.String()
	}
	for ; i < len(req.Messages) && req.Messages[i].Role == llm.RoleSystem; i++ {
		out = append(out, msg(req.Messages[i]))
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		out = append(out, "\x00tools\x00"+string(b))
	}
	for ; i < len(req.Messages); i++ {
		out = append(out, msg(req.Messages[i]))
	}
	return out
}
