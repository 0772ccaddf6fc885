package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// countedModel counts the calls to a real model server as simModel counts
// its own: calls, in flight, the most in flight, and those cancelled.
type countedModel struct {
	next                         llm.Model
	calls, inFlight, maxInFlight *atomic.Int64
	cancelled                    *atomic.Int64
}

func (m *countedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.calls.Add(1)
	f := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxInFlight.Load()
		if f <= old || m.maxInFlight.CompareAndSwap(old, f) {
			break
		}
	}
	resp, err := m.next.Generate(ctx, req)
	if err != nil && ctx.Err() != nil {
		m.cancelled.Add(1)
	}
	return resp, err
}

// Unwrap returns the adapter (llm.Unwrapper): its context window and token
// estimator are found through it.
func (m *countedModel) Unwrap() llm.Model { return m.next }

// Name returns the adapter's model name.
func (m *countedModel) Name() string {
	if n, ok := m.next.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// swarmServer describes the model server of a swarm run with -llm-url,
// in its -json output.
type swarmServer struct {
	// URL is the server's base URL; Provider and Model what was asked of
	// it.
	URL      string `json:"url"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Standin describes the stand-in server started in process, when
	// -llm-url was "standin:...": its slots, queue and latency per call,
	// and what it counted over the run: requests, 503s, the most
	// requests holding a slot and waiting at once, its slots'
	// utilisation (slot time held / (slots × the run's duration), 0–1),
	// and the prompt tokens served from its KV cache and evaluated, with
	// the cached share (0–1; "cache=N" in the spec).
	Standin *swarmStandin `json:"standin,omitempty"`
	// Pool is what a pool.Pool counted of the server, in a run with
	// several -llm-url.
	Pool *swarmPoolServer `json:"pool,omitempty"`
}

// swarmStandin is the stand-in server's settings and counters.
type swarmStandin struct {
	Slots       int     `json:"slots"`
	Queue       int     `json:"queue"`
	LatencyMS   float64 `json:"latency_ms"`
	Requests    int     `json:"requests"`
	Busy        int     `json:"busy_503"`
	MaxInFlight int     `json:"max_in_flight"`
	MaxWaiting  int     `json:"max_waiting"`
	Utilisation float64 `json:"slots_busy"`
	Cached      int     `json:"prompt_tokens_cached"`
	Evaluated   int     `json:"prompt_tokens_evaluated"`
	CachedShare float64 `json:"prompt_cached_share"`
	// CycleCached and CycleEvaluated split the cycle prompts' tokens
	// (structured-output requests) the same way, over the whole run;
	// CycleCachedShare is their cached share (0–1).
	CycleCached      int64   `json:"cycle_prompt_tokens_cached"`
	CycleEvaluated   int64   `json:"cycle_prompt_tokens_evaluated"`
	CycleCachedShare float64 `json:"cycle_prompt_cached_share"`
	// Layout is the prompt layout (-prompt-layout).
	Layout string `json:"prompt_layout"`
	counts *cacheCounts

	srv      *llmtest.Server
	slotTime time.Duration // at the start of the timed run
}

// serverModel builds the adapter of a swarm run with -llm-url (starting
// the stand-in first for "standin:..."), wrapped in the call counters.
// stop closes the stand-in.
func serverModel(o *swarmOptions, counts *simModel) (llm.Model, *swarmServer, func(), error) {
	ro := &runOptions{provider: o.provider, llmURL: o.llmURL, model: o.model, allowRedir: o.allowRedirect}
	if ro.model == "" && ro.provider == "ollama" {
		ro.model = defaultOllamaModel
	}
	srv := &swarmServer{Provider: o.provider}
	stop := func() {}
	if isStandin(o.llmURL) {
		cfg, err := parseStandin(o.llmURL)
		if err != nil {
			return nil, nil, nil, err
		}
		st := &swarmStandin{Slots: cfg.Slots, Queue: max(cfg.Queue, 0), LatencyMS: float64(cfg.Latency.Microseconds()) / 1000}
		ro.standin = func(s *llmtest.Server) { st.srv = s }
		st.counts, st.Layout = &cacheCounts{}, o.layout.String()
		ro.cacheCounts = st.counts
		s, err := startStandin(ro, false)
		if err != nil {
			return nil, nil, nil, err
		}
		stop, srv.Standin = s, st
	}
	keep := time.Duration(-1)
	ro.keepAlive = keep
	// The swarm's agents have no tool loop: their cycle prompts fit
	// Ollama's default window, held for the run.
	ro.holdNumCtx = ctxwindow.OllamaDefaultWindow
	m, url, err := newModel(ro)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	srv.URL, srv.Model = url, ro.model
	return &countedModel{next: m, calls: &counts.calls, inFlight: &counts.inFlight, maxInFlight: &counts.maxInFlight, cancelled: &counts.cancelled}, srv, stop, nil
}

// start marks the start of the timed run.
func (s *swarmServer) start() {
	if s != nil && s.Standin != nil {
		s.Standin.slotTime = s.Standin.srv.Stats().SlotTime
	}
}

// finish records the stand-in's counters over a run of elapsed.
func (s *swarmServer) finish(elapsed time.Duration) {
	if s == nil || s.Standin == nil {
		return
	}
	st := s.Standin
	stats := st.srv.Stats()
	st.Requests, st.Busy, st.MaxInFlight, st.MaxWaiting = stats.Requests, stats.Busy, stats.MaxInFlight, stats.MaxWaiting
	st.Cached, st.Evaluated, st.CachedShare = stats.CachedTokens, stats.EvaluatedTokens, stats.CachedShare()
	st.CycleCached, st.CycleEvaluated = st.counts.cycle()
	st.CycleCachedShare = share(st.CycleCached, st.CycleEvaluated)
	if elapsed > 0 {
		st.Utilisation = float64(stats.SlotTime-st.slotTime) / (float64(st.Slots) * float64(elapsed))
	}
}

// checkServer validates the model server flags of the swarm.
func (o *swarmOptions) checkServer() error {
	if o.llmURL == "" {
		if o.provider != "ollama" || o.model != "" {
			return errors.New("-provider and -model apply with -llm-url only")
		}
		return nil
	}
	switch o.provider {
	case "ollama":
	case "openai":
		if o.model == "" && !isStandin(o.llmURL) {
			return errors.New("-provider openai needs -model: the name the server serves")
		}
	default:
		return fmt.Errorf("-provider %q: want ollama or openai", o.provider)
	}
	for _, u := range append([]string{o.llmURL}, o.llmURLs...) {
		if isStandin(u) {
			if _, err := parseStandin(u); err != nil {
				return err
			}
		}
	}
	return nil
}

// swarmTokens are the tokens the run's model calls used, in its -json
// output: by the server's counts, else estimates (Estimated of them).
type swarmTokens struct {
	Input     int64   `json:"input"`
	Output    int64   `json:"output"`
	Estimated int64   `json:"estimated"`
	PerS      float64 `json:"per_s"`
}

// printServer writes the model server's lines of the report.
func (res *swarmResult) printServer(w io.Writer) {
	c := res.Concurrency
	limit := fmt.Sprintf("%d workers", res.AutonomyWorkers)
	if c.Adaptive {
		limit = "adaptive"
	}
	if s := res.Server; s != nil {
		fmt.Fprintf(w, "server        %s %s, model %s", s.Provider, s.URL, s.Model)
		if st := s.Standin; st != nil {
			fmt.Fprintf(w, " (stand-in: %d slots, a queue of %d, %.0f ms a call)", st.Slots, st.Queue, st.LatencyMS)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "tokens        %d in + %d out (%d estimated), %.0f tokens/s\n", res.Tokens.Input, res.Tokens.Output, res.Tokens.Estimated, res.Tokens.PerS)
	fmt.Fprintf(w, "concurrency   %s: limit %d at the end (the lanes share it), by second %v\n", limit, c.Limit, res.LimitBySecond)
	if c.Adaptive && res.DurationS < 60 {
		fmt.Fprintf(w, "  (the adaptive limit starts at 1 and grows while the latency stays near its no-load value: a run under a minute shows mostly its ramp)\n")
	}
	fmt.Fprintf(w, "  as the SDK sees the server: %.1f calls in flight on average, at most %d; latency %.0f ms (no-load %.0f ms); %d of %d calls refused (503: %.2f%%), %d cuts\n",
		res.CallsInFlightMean, res.CallsInFlightMax, ms(c.RTT), ms(c.MinRTT), c.Overloads, c.Calls, 100*res.OverloadRate, c.Cuts)
	if s := res.Server; s != nil && s.Standin != nil {
		st := s.Standin
		fmt.Fprintf(w, "  the stand-in counted: slots %.1f%% busy, %d requests, %d answered 503, at most %d running and %d waiting\n",
			100*st.Utilisation, st.Requests, st.Busy, st.MaxInFlight, st.MaxWaiting)
		if st.LatencyMS > 0 && res.DurationS > 0 {
			capacity := float64(st.Slots) / (st.LatencyMS / 1000)
			made := float64(st.Requests) / res.DurationS
			fmt.Fprintf(w, "  its capacity: %d slots of %.0f ms, at most %.1f calls/s; this run made %.1f/s", st.Slots, st.LatencyMS, capacity, made)
			if made >= 0.8*capacity {
				fmt.Fprintf(w, ": the stand-in, not the SDK, bounds the throughput (more: 'standin:?slots=%d')", max(8, 4*st.Slots))
			}
			fmt.Fprintln(w)
		}
		if st.Cached > 0 {
			fmt.Fprintf(w, "  prompt tokens: %d from the KV cache, %d evaluated (%.1f%% cached)\n", st.Cached, st.Evaluated, 100*st.CachedShare)
			fmt.Fprintf(w, "  cycle prompts (%s layout): %d from the KV cache, %d evaluated (%.1f%% cached)\n", st.Layout, st.CycleCached, st.CycleEvaluated, 100*st.CycleCachedShare)
		}
	}
	if res.TokenBudget != "" {
		fmt.Fprintf(w, "budget        %s per agent: %d budget_exhausted events, %d cycles held\n", res.TokenBudget, res.BudgetExhausted, res.Held)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// observeUsage counts a model call's tokens.
func (c *swarmCollector) observeUsage(e event.Event) {
	call := e.Call
	c.tokens.Input += int64(call.PromptTokens)
	c.tokens.Output += int64(call.OutputTokens)
	if call.PromptEstimated {
		c.tokens.Estimated += int64(call.PromptTokens)
	}
	if call.OutputEstimated {
		c.tokens.Estimated += int64(call.OutputTokens)
	}
}

// retry is the model retry policy of the swarm's agents: one attempt on
// the simulated model; against a server, the SDK's default (backoff with
// jitter, Retry-After honoured).
func (o *swarmOptions) retry() middleware.RetryPolicy {
	if o.llmURL == "" {
		return middleware.RetryPolicy{Attempts: 1}
	}
	return middleware.RetryPolicy{}
}
