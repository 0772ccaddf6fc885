package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/pool"
)

// swarmPool is the pool of model servers of a swarm run with several
// -llm-url.
type swarmPool struct {
	pool    *pool.Pool
	servers []*swarmServer
	track   *pinTracker
}

// poolModel builds one adapter per -llm-url (starting stand-ins) and an
// pool.Pool over them, named by their URLs. stop closes the stand-ins.
func poolModel(o *swarmOptions, counts *simModel) (*swarmPool, func(), error) {
	p := &swarmPool{track: newPinTracker(len(o.llmURLs))}
	var stops []func()
	stop := func() {
		for _, f := range stops {
			f()
		}
	}
	var servers []pool.Server
	for _, u := range o.llmURLs {
		oi := *o
		oi.llmURL = u
		m, srv, s, err := serverModel(&oi, counts)
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, s)
		p.servers = append(p.servers, srv)
		servers = append(servers, pool.Server{Name: srv.URL, Model: &trackedModel{Model: m, server: len(servers), track: p.track}})
	}
	pl, err := pool.New(pool.Config{Servers: servers})
	if err != nil {
		stop()
		return nil, nil, err
	}
	p.pool = pl
	return p, stop, nil
}

// start marks the start of the timed run on every server.
func (p *swarmPool) start() {
	if p == nil {
		return
	}
	for _, s := range p.servers {
		s.start()
	}
	p.track.begin(time.Now())
}

// finish records every server's counters and the pool's.
func (p *swarmPool) finish(elapsed time.Duration) []*swarmServer {
	if p == nil {
		return nil
	}
	for i, st := range p.pool.Stats() {
		s := p.servers[i]
		if i > 0 {
			s.finish(elapsed) // the first is the run's Server, finished with it
		}
		s.Pool = &swarmPoolServer{Calls: st.Calls, Errors: st.Errors, Downs: st.Downs, Down: st.Down, Limit: st.Limit.Limit,
			PromptTokens: st.PromptTokens, OutputTokens: st.OutputTokens, Failover: p.track.failover(i)}
	}
	return p.servers
}

// pinning returns how well the pool kept each agent on one server.
func (p *swarmPool) pinning() *swarmPinning {
	if p == nil {
		return nil
	}
	return p.track.pinning()
}

// swarmPoolServer is what the pool counted of one server.
type swarmPoolServer struct {
	// Calls counts the calls sent to it, Errors those that failed as a
	// server failure, Downs the times it was marked down; Down reports it
	// down at the end and Limit is its adaptive limit then.
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	Downs  int64 `json:"downs"`
	Down   bool  `json:"down"`
	Limit  int   `json:"limit"`
	// PromptTokens and OutputTokens are the tokens of its replies, as
	// the server reported them (pool.ServerStats).
	PromptTokens int64 `json:"prompt_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// Failover, for a server that failed during the run, is how its
	// agents carried on elsewhere.
	Failover *swarmFailover `json:"failover,omitempty"`
}

// printPool writes one line per server of the pool.
func (res *swarmResult) printPool(w io.Writer) {
	for _, s := range res.Servers {
		if s.Pool == nil {
			continue
		}
		fmt.Fprintf(w, "pool server   %s: %d calls, %d failed, down %d times (down at the end: %v), limit %d, tokens %d in + %d out",
			s.URL, s.Pool.Calls, s.Pool.Errors, s.Pool.Downs, s.Pool.Down, s.Pool.Limit, s.Pool.PromptTokens, s.Pool.OutputTokens)
		if st := s.Standin; st != nil {
			fmt.Fprintf(w, "; stand-in: %d requests, %.1f%% of cycle prompt tokens from its KV cache", st.Requests, 100*st.CycleCachedShare)
		}
		fmt.Fprintln(w)
		if f := s.Pool.Failover; f != nil {
			fmt.Fprintf(w, "  failed first at %.2f s into the run; %d of its %d agents carried on elsewhere, the first success after that failure came p50 %.0f ms, p99 %.0f ms, max %.0f ms later\n",
				f.FirstFailureS, f.Moved, f.Agents, f.CarryOn.P50, f.CarryOn.P99, f.CarryOn.Max)
		}
	}
	if p := res.Pinning; p != nil {
		fmt.Fprintf(w, "pinning       %d of %d agents (%.1f%%) sent at least %.0f%% of their calls to one server; the least pinned agent %.1f%% (calls in the first %.2f s, before any server failed)\n",
			p.Pinned, p.Agents, 100*p.Share, 100*pinnedShare, 100*p.Worst, p.WindowS)
	}
}

// trioModel builds the run's model: the adapter of -llm-url (starting the
// stand-in first for "standin:..."), or with several -llm-url a pool.Pool
// of one adapter each. It points o.llmURL at what it resolved (the URLs,
// comma-separated, for a pool); stop closes the stand-ins.
func trioModel(o *runOptions) (m llm.Model, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range stops {
			f()
		}
	}
	one := func(oi *runOptions) (llm.Model, error) {
		if isStandin(oi.llmURL) {
			if o.cacheCounts == nil {
				o.cacheCounts = &cacheCounts{}
			}
			oi.cacheCounts = o.cacheCounts
			s, err := startStandin(oi, true) // the trio's: scripted, it uses the tools
			if err != nil {
				return nil, err
			}
			stops = append(stops, s)
		}
		m, url, err := newModel(oi)
		oi.llmURL = url
		return m, err
	}
	if len(o.llmURLs) <= 1 {
		m, err := one(o)
		if err != nil {
			stop()
			return nil, nil, err
		}
		return m, stop, nil
	}
	var servers []pool.Server
	var urls []string
	for _, u := range o.llmURLs {
		oi := *o
		oi.llmURL = u
		m, err := one(&oi)
		if err != nil {
			stop()
			return nil, nil, err
		}
		if oi.model != o.model && o.model == "" {
			o.model = oi.model // a stand-in's default model
		}
		servers = append(servers, pool.Server{Name: oi.llmURL, Model: m})
		urls = append(urls, oi.llmURL)
	}
	pl, err := pool.New(pool.Config{Servers: servers})
	if err != nil {
		stop()
		return nil, nil, err
	}
	o.llmURL = strings.Join(urls, ", ")
	return pl, stop, nil
}

// pinnedShare is the share of its calls an agent must send to one server
// to count as pinned.
const pinnedShare = 0.95

// swarmPinning is how well a pool kept each agent on one server, over the
// calls started before any server failed (the whole run when none did).
type swarmPinning struct {
	// Agents counts the agents with at least one such call; Pinned those
	// that sent at least 95 % of them to one server, Share = Pinned /
	// Agents (0–1). Worst is the lowest share of an agent's calls that
	// went to its most used server (0–1).
	Agents int     `json:"agents"`
	Pinned int     `json:"pinned"`
	Share  float64 `json:"pinned_share"`
	Worst  float64 `json:"worst_agent_share"`
	// WindowS is the span counted, in seconds from the run's start: until
	// the first server failure, or the whole run.
	WindowS float64 `json:"window_s"`
}

// swarmFailover is how the agents of a server that failed carried on.
type swarmFailover struct {
	// FirstFailureS is when the server first failed (pool.IsServerFailure),
	// in seconds from the run's start. Agents counts its agents (those
	// that called it before then), Moved those that had a successful call
	// on another server after it, and CarryOn the time from its first
	// failure to each one's first such success (milliseconds): the
	// pool's failover plus the wait for the agent's next call.
	FirstFailureS float64   `json:"first_failure_s"`
	Agents        int       `json:"agents"`
	Moved         int       `json:"moved"`
	CarryOn       quantiles `json:"carry_on_ms"`
}

// pinTracker records, for each agent, which pool server took its calls,
// and when each server first failed.
type pinTracker struct {
	mu        sync.Mutex
	start     time.Time
	firstFail []time.Time // by server; zero while it has not failed
	anyFail   time.Time   // the first failure of any server
	agents    map[string]*agentCalls
}

// agentCalls is one agent's calls by server.
type agentCalls struct {
	healthy []int64         // calls started before any server failed
	first   []time.Time     // its first call to each server
	carried []time.Duration // by failed server: first failure to the agent's first success elsewhere; 0 until then
}

func newPinTracker(servers int) *pinTracker {
	return &pinTracker{firstFail: make([]time.Time, servers), agents: map[string]*agentCalls{}}
}

// begin marks the start of the timed run: calls before it are setup's.
func (t *pinTracker) begin(now time.Time) {
	t.mu.Lock()
	t.start = now
	t.mu.Unlock()
}

// record counts a call of agent to server, started at start and ended at
// end with err; gone reports that the caller's context ended first.
func (t *pinTracker) record(agent string, server int, start, end time.Time, err error, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() || agent == "" {
		return
	}
	n := len(t.firstFail)
	a := t.agents[agent]
	if a == nil {
		a = &agentCalls{healthy: make([]int64, n), first: make([]time.Time, n), carried: make([]time.Duration, n)}
		t.agents[agent] = a
	}
	if a.first[server].IsZero() {
		a.first[server] = start
	}
	if t.anyFail.IsZero() || start.Before(t.anyFail) {
		a.healthy[server]++
	}
	switch {
	case gone:
	case err != nil && pool.IsServerFailure(err):
		if t.firstFail[server].IsZero() {
			t.firstFail[server] = end
			if t.anyFail.IsZero() {
				t.anyFail = end
			}
		}
	case err == nil:
		for i, f := range t.firstFail {
			if i != server && !f.IsZero() && a.carried[i] == 0 && !a.first[i].IsZero() && a.first[i].Before(f) && end.After(f) {
				a.carried[i] = end.Sub(f)
			}
		}
	}
}

// pinning returns the pinning over the calls before the first failure.
func (t *pinTracker) pinning() *swarmPinning {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := &swarmPinning{Worst: 1}
	if !t.anyFail.IsZero() {
		p.WindowS = t.anyFail.Sub(t.start).Seconds()
	} else {
		p.WindowS = time.Since(t.start).Seconds()
	}
	for _, a := range t.agents {
		var sum, top int64
		for _, c := range a.healthy {
			sum += c
			top = max(top, c)
		}
		if sum == 0 {
			continue
		}
		p.Agents++
		share := float64(top) / float64(sum)
		if share >= pinnedShare {
			p.Pinned++
		}
		p.Worst = min(p.Worst, share)
	}
	if p.Agents == 0 {
		return nil
	}
	p.Share = float64(p.Pinned) / float64(p.Agents)
	return p
}

// failover returns how the agents of server carried on after it failed,
// nil when it did not fail.
func (t *pinTracker) failover(server int) *swarmFailover {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.firstFail[server]
	if f.IsZero() {
		return nil
	}
	out := &swarmFailover{FirstFailureS: f.Sub(t.start).Seconds()}
	var carried []time.Duration
	for _, a := range t.agents {
		if a.first[server].IsZero() || !a.first[server].Before(f) {
			continue
		}
		out.Agents++
		if d := a.carried[server]; d > 0 {
			out.Moved++
			carried = append(carried, d)
		}
	}
	out.CarryOn = quantilesOf(carried)
	return out
}

// trackedModel is one pool server's model, reporting each call to the
// pinTracker.
type trackedModel struct {
	llm.Model
	server int
	track  *pinTracker
}

func (m *trackedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := m.Model.Generate(ctx, req)
	// As the pool judges a call (pool.IsServerFailure): one whose per-call
	// deadline fired (its cause llm.ErrTimeout) waited for a server that
	// did not answer, a failure; one the caller ended says nothing of the
	// server.
	verdict, gone := err, err != nil && ctx.Err() != nil
	if gone && errors.Is(context.Cause(ctx), llm.ErrTimeout) {
		verdict, gone = &middleware.TimeoutError{Err: err}, false
	}
	m.track.record(pool.AgentFrom(ctx), m.server, start, time.Now(), verdict, gone)
	return resp, err
}

// Unwrap returns the server's model (llm.Unwrapper): its context window
// is found through it.
func (m *trackedModel) Unwrap() llm.Model { return m.Model }

// Name returns the server model's name.
func (m *trackedModel) Name() string {
	if n, ok := m.Model.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
