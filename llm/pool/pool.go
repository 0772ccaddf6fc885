package pool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/internal/callnote"
	"github.com/existence-loop/sdk/llm/middleware"
)

// Defaults of [Config].
const (
	// DefaultFailures is how many failures in a row mark a server
	// down.
	DefaultFailures = 3
	// DefaultProbe is how long a server stays down before one call
	// probes it.
	DefaultProbe = 10 * time.Second
)

// ErrNoServer is returned by [Pool] when it has no server to call: every
// server is down and none is due for a probe, or the pool is empty.
var ErrNoServer = errors.New("llm: no model server available in the pool")

// agentKey carries the id of the agent a call is made for.
type agentKey struct{}

// WithAgent returns ctx carrying the id of the agent whose call it is:
// a [Pool] pins each agent to one server by it. existence.Agent marks
// every call of its model stack.
func WithAgent(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentKey{}, id)
}

// AgentFrom returns the agent id [WithAgent] put in ctx, or "".
func AgentFrom(ctx context.Context) string {
	id, _ := ctx.Value(agentKey{}).(string)
	return id
}

// Server is one model server of a [Pool].
type Server struct {
	// Name identifies the server in the ranking, the stats and the
	// report: its URL, say. Names must be unique and not empty; renaming
	// a server moves its agents.
	Name string
	// Model calls the server: an adapter (ollama.New, openai.New),
	// innermost, without retries (the pool's caller retries).
	Model llm.Model
}

// Config configures a [Pool].
type Config struct {
	// Servers are the model servers, at least one.
	Servers []Server
	// Adaptive configures each server's own [middleware.AdaptiveLimit], which
	// measures every call made to it (see [Pool.Stats]).
	Adaptive middleware.AdaptiveConfig
	// Failures is how many failures in a row ([IsServerFailure]: the
	// server unreachable, an HTTP 5xx other than an overload's 503, a
	// call or window lookup whose per-call deadline fired, a reply that
	// breaks the protocol, a redirect to another origin) mark a server
	// down; 0
	// means DefaultFailures (3). An overload (503
	// "busy", 429) is the server's concurrency limit speaking, not a
	// failure.
	Failures int
	// Probe is how long a server stays down before the next call routed
	// to it is sent there again as a probe: a success brings it (and its
	// agents) back, a failure keeps it down for another Probe. 0 means
	// DefaultProbe (10 s).
	Probe time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Pool is a [llm.Model] that spreads calls over several model servers, the way
// a client-side load balancer for inference should: each agent (the id
// [WithAgent] put in the call's context) is pinned to one server by
// rendezvous hashing (highest random weight: the server maximising
// FNV-1a(agent id, server name)), so that its prompts keep hitting the
// same server's KV cache, and adding or removing a server moves only the
// agents it gains or loses. A call without an agent id is pinned by its
// first message's text.
//
// Each server has its health and its own [middleware.AdaptiveLimit]. A server that
// fails Failures calls in a row is down: its agents move to the next
// server in their ranking until, Probe later, a call probes it and
// succeeds; they then move back. A call that could not reach its server
// ([llm.ErrUnavailable]) is sent at once to the next healthy server in the
// ranking, since the request never arrived; any other error is returned
// (a [middleware.WithRetry] above the pool retries it, on the agent's server, or on
// the next one once its server is down).
//
// A server that hangs is one that times out: a call whose per-call
// deadline fired (a [middleware.WithTimeout] above the pool, whose deadline has the
// cause [llm.ErrTimeout]) counts as a failure, so its agents move after
// Failures such calls; the caller's cancellation, or a longer deadline
// of its own, says nothing of the server.
//
// A reply names the server that answered ([llm.Response].Server), and
// [Pool.Stats] counts each server's calls, failures and tokens.
//
// It is safe for concurrent use.
type Pool struct {
	cfg     Config
	servers []*poolServer
}

type poolServer struct {
	name  string
	model llm.Model // the server's model, measured by limit
	limit *middleware.AdaptiveLimit
	health
	prompt int64 // tokens, as the server reported them; under health.mu
	output int64
}

// health is a pooled server's health, shared by [Pool] and [EmbedPool]:
// up, or down until a probe after failures in a row.
type health struct {
	mu        sync.Mutex
	fails     int       // failures in a row
	downUntil time.Time // zero while up
	probing   bool      // a probe is in flight
	calls     int64
	errs      int64
	downs     int64
	downed    chan struct{} // closed when marked down; nil until asked for
}

// spent counts the tokens of r, a reply of s (nil: none).
func (s *poolServer) spent(r *llm.Response) {
	if r == nil {
		return
	}
	s.mu.Lock()
	s.prompt += int64(r.PromptTokens)
	s.output += int64(r.OutputTokens)
	s.mu.Unlock()
}

// New returns a pool of cfg.Servers. Errors: no server, a server
// without a name or model, or two of one name.
func New(cfg Config) (*Pool, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("llm: a pool needs at least one server")
	}
	healthDefaults(&cfg.Failures, &cfg.Probe, &cfg.Now)
	p := &Pool{cfg: cfg}
	seen := map[string]bool{}
	for i, s := range cfg.Servers {
		if err := checkServer("pool", i, s.Name, s.Model != nil, seen); err != nil {
			return nil, err
		}
		l := middleware.NewAdaptiveLimit(cfg.Adaptive)
		p.servers = append(p.servers, &poolServer{name: s.Name, model: l.Observe(s.Model, cfg.Now), limit: l})
	}
	return p, nil
}

// healthDefaults fills in the health rules' defaults ([Config]).
func healthDefaults(failures *int, probe *time.Duration, now *func() time.Time) {
	if *failures <= 0 {
		*failures = DefaultFailures
	}
	if *probe <= 0 {
		*probe = DefaultProbe
	}
	if *now == nil {
		*now = time.Now
	}
}

// checkServer checks server i of a pool of kind: a name, not seen
// before, and a client (has).
func checkServer(kind string, i int, name string, has bool, seen map[string]bool) error {
	if name == "" || !has {
		return fmt.Errorf("llm: %s server %d needs a name and a client", kind, i)
	}
	if seen[name] {
		return fmt.Errorf("llm: %s server %q given twice", kind, name)
	}
	seen[name] = true
	return nil
}

var _ llm.Model = (*Pool)(nil)

// Name returns "pool".
func (p *Pool) Name() string { return "pool" }

// Rank returns the servers' names in key's rendezvous order: the server
// it is pinned to first, then where it moves when that one is down.
func (p *Pool) Rank(key string) []string {
	order := p.rank(key)
	out := make([]string, len(order))
	for i, s := range order {
		out[i] = s.name
	}
	return out
}

func (p *Pool) rank(key string) []*poolServer {
	type scored struct {
		s *poolServer
		w uint64
	}
	sc := make([]scored, len(p.servers))
	for i, s := range p.servers {
		h := fnv.New64a()
		_, _ = h.Write([]byte(key))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(s.name))
		sc[i] = scored{s, mix(h.Sum64())}
	}
	slices.SortStableFunc(sc, func(a, b scored) int { return cmp.Compare(b.w, a.w) }) // highest weight first
	out := make([]*poolServer, len(sc))
	for i, x := range sc {
		out[i] = x.s
	}
	return out
}

// mix finalises a hash (SplitMix64's), so that keys differing in their
// last bytes spread over every server.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Server returns the name of the server a call for key goes to now: the
// first of its ranking that is up or due for a probe; "" when none is.
func (p *Pool) Server(key string) string {
	now := p.cfg.Now()
	for _, s := range p.rank(key) {
		if s.usable(now) {
			return s.name
		}
	}
	return ""
}

// usable reports whether s may take a call at now: up, or down with its
// probe due and none in flight.
func (s *health) usable(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downUntil.IsZero() || (!now.Before(s.downUntil) && !s.probing)
}

// take claims s for a call at now; probe reports that the call probes a
// down server. ok is false when s may not take it.
func (s *health) take(now time.Time) (probe, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downUntil.IsZero() {
		s.calls++
		return false, true
	}
	if now.Before(s.downUntil) || s.probing {
		return false, false
	}
	s.probing = true
	s.calls++
	return true, true
}

// done records the end of a call of s at now; gone reports that the
// caller's context ended first, which says nothing of the server.
// failures in a row mark it down for probeAfter.
func (s *health) done(now time.Time, err error, probe, gone bool, failures int, probeAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if probe {
		s.probing = false
	}
	if gone {
		return
	}
	if !IsServerFailure(err) {
		if s.downUntil.IsZero() || probe {
			// A server marked down comes back through its probe only: a
			// call sent before the mark that ends well (or busy) after it
			// says nothing of the server now.
			s.fails, s.downUntil = 0, time.Time{}
			if s.downed != nil {
				select {
				case <-s.downed: // back up: a new signal for the next mark
					s.downed = nil
				default:
				}
			}
		}
		return
	}
	s.errs++
	s.fails++
	if probe || s.fails >= failures {
		if s.downUntil.IsZero() {
			s.downs++
		}
		s.downUntil = now.Add(probeAfter)
		if s.downed == nil {
			s.downed = make(chan struct{})
		}
		select {
		case <-s.downed:
		default:
			close(s.downed)
		}
	}
}

// downSignal returns a channel closed once s is marked down (at once if
// it is down now).
func (s *health) downSignal() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downed == nil {
		s.downed = make(chan struct{})
		if !s.downUntil.IsZero() {
			close(s.downed)
		}
	}
	return s.downed
}

// judge is what a pool learns of its server from a call that returned
// err under ctx: gone reports that the caller ended the call, which says
// nothing of the server. A call whose per-call deadline fired (a
// deadline whose cause is [llm.ErrTimeout], as [middleware.WithTimeout] sets; with
// anyDeadline, any deadline) waited for a server that did not answer in
// time: verdict is then a [*middleware.TimeoutError], a server failure, so that a
// server that hangs is marked down like one that refuses connections.
// Another deadline (a cycle's, a goal's) spans more than the call and
// says nothing of the server.
func judge(ctx context.Context, err error, anyDeadline bool) (verdict error, gone bool) {
	if err == nil || ctx.Err() == nil {
		return err, false
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, llm.ErrTimeout) || (anyDeadline && errors.Is(cause, context.DeadlineExceeded)) {
		if errors.Is(err, llm.ErrTimeout) {
			return err, false
		}
		return &middleware.TimeoutError{Err: err}, false
	}
	return err, true
}

// IsServerFailure reports whether err, returned by a call to one model
// server, says the server is unwell: not reached ([llm.ErrUnavailable]), a
// 5xx that is not an overload, a per-call timeout ([llm.ErrTimeout]), a 2xx
// reply that breaks the protocol ([llm.ErrProtocol]: not JSON, the wrong
// shape), or a redirect to another origin ([llm.ErrRedirect]). A
// [Pool] counts these towards marking a server down. The caller's
// cancellation, an overload (503 "busy", 429: [middleware.Overloaded]) and the
// request's own faults (a 4xx, invalid output, a prompt over the window)
// say nothing of the server. A caller whose own context ended should not
// ask: the pool ignores such calls, except that a per-call deadline that
// fired (its cause [llm.ErrTimeout], as [middleware.WithTimeout] sets) counts as a
// timeout.
func IsServerFailure(err error) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled), middleware.Overloaded(err):
		return false
	case errors.Is(err, llm.ErrUnavailable), errors.Is(err, llm.ErrTimeout), errors.Is(err, llm.ErrProtocol), errors.Is(err, llm.ErrRedirect):
		return true
	}
	if se, ok := asStatus(err); ok {
		return se.StatusCode >= 500
	}
	return middleware.Classify(err) == middleware.OutcomeTimeout || middleware.Classify(err) == middleware.OutcomeUnavailable
}

// Generate sends req to the agent's server (see [Pool]). Errors: the
// server's, or [ErrNoServer] when no server may take the call; a call
// that reached no server wraps the last [llm.ErrUnavailable].
func (p *Pool) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	key := AgentFrom(ctx)
	if key == "" && len(req.Messages) > 0 {
		key = req.Messages[0].Content
	}
	var last error
	for _, s := range p.rank(key) {
		probe, ok := s.take(p.cfg.Now())
		if !ok {
			continue
		}
		callnote.Server(ctx, s.name)
		resp, err := s.model.Generate(ctx, req)
		verdict, gone := judge(ctx, err, false)
		s.done(p.cfg.Now(), verdict, probe, gone, p.cfg.Failures, p.cfg.Probe)
		if IsServerFailure(verdict) && !gone {
			// A retry above need not wait its backoff once the agent's
			// next call goes to another server.
			from := s.name
			callnote.NoteFailover(ctx, s.downSignal(), func() bool {
				next := p.Server(key)
				return next != "" && next != from
			})
		}
		if err != nil && errors.Is(err, llm.ErrUnavailable) && ctx.Err() == nil {
			last = fmt.Errorf("%s: %w", s.name, err)
			continue // never reached: the next server may take it
		}
		s.spent(middleware.RepliedTo(resp, err))
		if resp != nil {
			named := *resp // the server's reply may be shared (a fake's): name a copy
			named.Server = s.name
			resp = &named
		}
		return resp, err
	}
	if last != nil {
		return nil, last
	}
	return nil, ErrNoServer
}

// ServerStats are one server's counters in a [Pool].
type ServerStats struct {
	// Name is the server's name.
	Name string
	// Calls counts the calls sent to it, Errors those that failed as a
	// server failure, Downs the times it was marked down.
	Calls, Errors, Downs int64
	// PromptTokens and OutputTokens total the tokens of its replies (a
	// cut reply's too, see [middleware.RepliedTo]) as the server reported them
	// ([llm.Response].PromptTokens and OutputTokens; not estimated, so a
	// server that reports none counts 0). A server that keeps a KV cache
	// may leave the cached prefix out of its prompt count, as Ollama does.
	PromptTokens, OutputTokens int64
	// Down reports that it is down now; Until is when it will be probed.
	Down  bool
	Until time.Time
	// Limit is its adaptive limit's state ([middleware.AdaptiveLimit.Stats]).
	Limit middleware.AdaptiveStats
}

// Stats returns each server's counters, in the order of Config.Servers.
func (p *Pool) Stats() []ServerStats {
	out := make([]ServerStats, len(p.servers))
	for i, s := range p.servers {
		s.mu.Lock()
		out[i] = ServerStats{Name: s.name, Calls: s.calls, Errors: s.errs, Downs: s.downs, PromptTokens: s.prompt, OutputTokens: s.output,
			Down: !s.downUntil.IsZero(), Until: s.downUntil}
		s.mu.Unlock()
		out[i].Limit = s.limit.Stats()
	}
	return out
}

var _ llm.Windowed = (*Pool)(nil)

// ContextWindow implements [llm.Windowed]: the smallest window of the servers
// that are up and know theirs ([llm.ContextWindowOf] of each, asked
// concurrently), with that server's estimator, so that a prompt fitted to
// it fits whichever server the agent is on. A server that is down is not
// asked (its window is asked again once a probe brings it back), and a
// lookup that fails as a server failure ([IsServerFailure]: unreachable,
// timed out) counts towards marking its server down, as a call's would.
// When ctx has a deadline and names an agent ([WithAgent]), the caller
// waits for its own server's answer only: the others' lookups go on in
// the background, to that deadline, and count when they end (an adapter
// keeps a window it has read, so a healthy server answers at once), so a
// server that hangs holds up only the agents pinned to it. 0 when none
// knows; the first error when none answered.
func (p *Pool) ContextWindow(ctx context.Context) (tokens int, est *llm.TokenEstimator, err error) {
	type answer struct {
		tokens int
		est    *llm.TokenEstimator
		err    error
	}
	own := ""
	deadline, bounded := ctx.Deadline()
	if key := AgentFrom(ctx); key != "" && bounded {
		own = p.Server(key)
	}
	answers := make([]chan answer, len(p.servers))
	ownUp := false
	for i, s := range p.servers {
		if !s.down() {
			answers[i] = make(chan answer, 1)
			ownUp = ownUp || s.name == own
		}
	}
	if !ownUp {
		own = "" // its server is down (due for a probe): wait for those that are up
	}
	for i, s := range p.servers {
		if answers[i] == nil {
			continue
		}
		lctx, cancel := ctx, context.CancelFunc(func() {})
		if own != "" && s.name != own {
			// Not waited for: its own context, to the caller's deadline.
			lctx, cancel = context.WithDeadlineCause(context.WithoutCancel(ctx), deadline, llm.ErrTimeout)
		}
		go func() {
			defer cancel()
			var a answer
			a.tokens, a.est, a.err = llm.ContextWindowOf(lctx, s.model)
			if a.err != nil {
				if verdict, gone := judge(lctx, a.err, false); IsServerFailure(verdict) {
					s.done(p.cfg.Now(), verdict, false, gone, p.cfg.Failures, p.cfg.Probe)
				}
			}
			answers[i] <- a
		}()
	}
	var errs []error
	take := func(a answer) {
		switch {
		case a.err != nil:
			errs = append(errs, a.err)
		case a.tokens > 0 && (tokens == 0 || a.tokens < tokens):
			tokens, est = a.tokens, a.est
		}
	}
	for i, s := range p.servers { // the caller's own server first, waited for
		if answers[i] != nil && (own == "" || s.name == own) {
			take(<-answers[i])
		}
	}
	for i, s := range p.servers { // the others, when they have answered
		if answers[i] == nil || own == "" || s.name == own {
			continue
		}
		select {
		case a := <-answers[i]:
			take(a)
		default:
		}
	}
	if tokens == 0 && len(errs) > 0 {
		return 0, nil, errs[0]
	}
	return tokens, est, nil
}

// down reports whether s is marked down.
func (s *health) down() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.downUntil.IsZero()
}

// asStatus finds a [llm.StatusError] (value or pointer) in err's chain.
func asStatus(err error) (llm.StatusError, bool) {
	var v llm.StatusError
	if errors.As(err, &v) {
		return v, true
	}
	var p *llm.StatusError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return llm.StatusError{}, false
}
