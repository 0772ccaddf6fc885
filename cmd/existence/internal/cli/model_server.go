package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// standinScheme starts -llm-url's stand-in server in process:
// "standin:?slots=4&queue=4&latency=500ms".
const standinScheme = "standin:"

// standinHelp documents the stand-in spec in the flags' help.
const standinHelp = `; or "standin:?slots=N&queue=N&latency=D" to start llm/llmtest's stand-in Ollama server in this process
(slots as OLLAMA_NUM_PARALLEL, queue as OLLAMA_MAX_QUEUE beyond which it answers 503, latency per call;
also model=NAME, context=TOKENS (default window), model-context=TOKENS (the model's length), max-context=TOKENS (the most it grants),
cache=N (prompts kept in its KV cache; counts then leave out the cached prefix), cache-slot=multiuser|longest (which entry a prompt takes:
a copy of the longest shared prefix in the least recently used one, as Ollama with OLLAMA_MULTIUSER_CACHE=1, or the free one sharing the longest
prefix, as Ollama's default), overflow=ollama|cut|refuse (a prompt over the window:
cut unless "truncate": false, always cut, always refuse), wording=current|legacy, version=V (/api/version), openai=openai|vllm|llamacpp|ollama
(its /v1 flavor), retry-after=D, stop-after=N|D (the server stops after N chat requests or D: the calls in flight are cut
and its port refuses connections, as a killed server's, to watch a pool move its agents)), for runs without a GPU`

// standinTry says how to run the trio on the scripted stand-in.
const standinTry = "run again with -llm-url standin:"

// isStandin reports whether an -llm-url asks for the stand-in server.
func isStandin(u string) bool { return strings.HasPrefix(u, standinScheme) }

// parseStandin reads a stand-in spec: "standin:" then an optional query of
// slots (default 1), queue (default 4; "none" or 0 for none), latency
// (default 500ms), model (default qwen3.5:9b), context (the default
// window, tokens), model-context (the model's trained length, tokens),
// max-context (the most the server grants, tokens), cache (prompts kept
// in the KV cache: [llmtest.ServerConfig].CacheSlots), overflow ("ollama",
// the default: cut unless the request says "truncate": false; "cut":
// always, as Ollama before 0.12.6; "refuse": always, as llama.cpp's
// server), wording ("current" or "legacy" refusal text), version (what
// /api/version says), openai (the /v1 endpoints' flavor), retry-after
// (a Retry-After sent with each 503) and stop-after (see stopAfter; it is
// applied by startStandin, not carried in the config).
func parseStandin(spec string) (llmtest.ServerConfig, error) {
	rest := strings.TrimPrefix(spec, standinScheme)
	rest = strings.TrimPrefix(rest, "?")
	q, err := url.ParseQuery(rest)
	if err != nil {
		return llmtest.ServerConfig{}, fmt.Errorf("-llm-url %s: %w", spec, err)
	}
	cfg := llmtest.ServerConfig{Slots: 1, Queue: 4, Latency: 500 * time.Millisecond}
	model := defaultOllamaModel
	modelContext := 0
	for k, vs := range q {
		v := vs[len(vs)-1]
		var err error
		switch k {
		case "slots":
			cfg.Slots, err = positive(v)
		case "queue":
			if v == "none" || v == "0" {
				cfg.Queue = -1
			} else {
				cfg.Queue, err = positive(v)
			}
		case "latency":
			cfg.Latency, err = time.ParseDuration(v)
			if err == nil && cfg.Latency < 0 {
				err = errors.New("negative")
			}
		case "retry-after":
			cfg.RetryAfter, err = time.ParseDuration(v)
		case "context":
			cfg.DefaultContext, err = positive(v)
		case "model-context":
			modelContext, err = positive(v)
		case "max-context":
			cfg.MaxContext, err = positive(v)
		case "cache":
			if v != "0" {
				cfg.CacheSlots, err = positive(v)
			}
		case "cache-slot":
			switch v {
			case "multiuser":
			case "longest":
				cfg.CacheLongest = true
			default:
				err = errors.New("want multiuser or longest")
			}
		case "overflow":
			switch v {
			case "ollama":
			case "cut":
				cfg.IgnoreTruncate = true
			case "refuse":
				cfg.RefuseOverflow = true
			default:
				err = errors.New("want ollama, cut or refuse")
			}
		case "wording":
			switch v {
			case "current":
			case "legacy":
				cfg.LegacyRefusal = true
			default:
				err = errors.New("want current or legacy")
			}
		case "version":
			cfg.Version = v
		case "openai":
			switch v {
			case "openai", "vllm", "llamacpp", "ollama":
				cfg.OpenAIFlavor = v
			default:
				err = errors.New("want openai, vllm, llamacpp or ollama")
			}
		case "model":
			model = v
		case "stop-after":
			_, _, err = parseStopAfter(v)
		default:
			return llmtest.ServerConfig{}, fmt.Errorf("-llm-url %s: unknown stand-in setting %q (want slots, queue, latency, model, context, model-context, max-context, cache, overflow, wording, version, openai, retry-after, stop-after)", spec, k)
		}
		if err != nil {
			return llmtest.ServerConfig{}, fmt.Errorf("-llm-url %s: %s=%s: %w", spec, k, v, err)
		}
	}
	cfg.Models = []llmtest.ModelSpec{{Name: model, ContextLength: modelContext}}
	return cfg, nil
}

// parseStopAfter reads a stand-in's stop-after: a whole number of chat
// requests, or a duration from the server's start ("15s").
func parseStopAfter(v string) (requests int, after time.Duration, err error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 {
			return 0, 0, errors.New("want a positive number of requests or a duration")
		}
		return n, 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, 0, errors.New("want a positive number of requests or a duration")
	}
	return 0, d, nil
}

// stopAfter arranges the stop a stand-in spec's stop-after asks for, on a
// server listening on loopback: after that many chat requests (the last
// of them is cut with the others in flight) or that long, the server
// closes, so its port refuses connections as a killed server's does.
// started is called with the server once it exists; cancel stops the
// timer. cfg's LatencyFunc is wrapped to count the requests.
func stopAfter(spec string, cfg *llmtest.ServerConfig) (started func(*llmtest.Server), cancel func(), err error) {
	q, err := url.ParseQuery(strings.TrimPrefix(strings.TrimPrefix(spec, standinScheme), "?"))
	if err != nil {
		return nil, nil, err
	}
	vs := q["stop-after"]
	if len(vs) == 0 {
		return func(*llmtest.Server) {}, func() {}, nil
	}
	n, d, err := parseStopAfter(vs[len(vs)-1])
	if err != nil {
		return nil, nil, fmt.Errorf("-llm-url %s: stop-after: %w", spec, err)
	}
	var srv atomic.Pointer[llmtest.Server]
	if d > 0 {
		var timer *time.Timer
		return func(s *llmtest.Server) { timer = time.AfterFunc(d, s.Close) }, func() {
			if timer != nil {
				timer.Stop()
			}
		}, nil
	}
	var served atomic.Int64
	next, latency := cfg.LatencyFunc, cfg.Latency
	cfg.LatencyFunc = func(c *llmtest.Call) time.Duration {
		if served.Add(1) == int64(n) {
			go srv.Load().Close() // Close waits for the requests in flight, this one too
		}
		if next != nil {
			return next(c)
		}
		return latency
	}
	return func(s *llmtest.Server) { srv.Store(s) }, func() {}, nil
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

// llmTimeoutHelp documents -llm-timeout, shared by run and swarm.
const llmTimeoutHelp = "timeout of one model call, the context window lookup (Ollama's /api/show) included: a server that answers within it neither a call nor a lookup\n" +
	"counts as failed; in a pool (several -llm-url) 3 failures in a row mark it down and its agents move to the next server, so a server that hangs holds\n" +
	"an autonomy worker for at most this long per call"

// modelServerFlags registers the flags run and swarm share for the model
// server: -llm-timeout (the per-call timeout) and -llm-allow-redirect
// (the hosts the model and embedding clients may be redirected to).
func modelServerFlags(fs *flag.FlagSet, timeout *time.Duration, allow *[]string) {
	fs.DurationVar(timeout, "llm-timeout", middleware.DefaultTimeout, llmTimeoutHelp)
	fs.Func("llm-allow-redirect", "a host (name or address, optionally :port) the model and embedding servers may redirect a call to (repeatable);\n"+
		"by default a redirect to another origin (scheme, host and port) than the server's URL is refused and the other host receives nothing", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return errors.New("empty host")
		}
		*allow = append(*allow, s)
		return nil
	})
}

// budgetFlag registers -token-budget on fs.
func budgetFlag(fs *flag.FlagSet, b *budget.Budget) {
	fs.Func("token-budget", "each agent's token budget: TOKENS/DURATION, e.g. 4000/1m or 50000/1h (a sliding window; \"+RESERVE\" adds tokens host messages and tasks may still spend, e.g. 4000/1m+1000). "+
		"When spent, the agent's autonomy waits until the window refills (a budget_exhausted event each time)", func(s string) error {
		v, err := budget.Parse(s)
		if err != nil {
			return err
		}
		*b = v
		return nil
	})
}

// replyFlags registers -reply-tokens (the existence cycle's reply limit)
// and, when tool is not nil, -tool-reply-tokens (each tool-loop turn's)
// on fs.
func replyFlags(fs *flag.FlagSet, cycle, tool *int) {
	fs.IntVar(cycle, "reply-tokens", existence.DefaultMaxTokens, "the longest reply of an existence cycle, in tokens (sent as num_predict or max_tokens; a reply cut at it goes to the repair turn)")
	if tool != nil {
		fs.IntVar(tool, "tool-reply-tokens", toolloop.DefaultMaxTokens, "the longest reply of a tool-loop turn, in tokens")
	}
}

// checkReply validates the reply limits of replyFlags (0 means the
// default).
func checkReply(limits ...int) error {
	for _, n := range limits {
		if n < 0 {
			return fmt.Errorf("-reply-tokens and -tool-reply-tokens must not be negative (got %d): every request bounds its reply", n)
		}
	}
	return nil
}

// workersFlag registers -autonomy-workers on fs: 0 sizes the lane by the
// adaptive concurrency limit.
func workersFlag(fs *flag.FlagSet, n *int) {
	fs.IntVar(n, "autonomy-workers", 0, "autonomy lane workers: ordinary cycles (model calls) at once; 0 finds the model server's capacity by itself\n"+
		"(an adaptive concurrency limit: grows while latency stays near its minimum, shrinks when it climbs or the server answers 503)")
}

// autonomyWorkers maps the -autonomy-workers flag to runner.Config's.
func autonomyWorkers(n int) int {
	if n <= 0 {
		return runner.AdaptiveWorkers
	}
	return n
}

// startStandin starts the stand-in server o.llmURL asks for, serving
// o.model too, and points o.llmURL (and, in process, o.httpClient) at it.
// scripted makes its model llmtest.ScriptedReply, which calls the
// workspace tools, so that the trio's goals end DONE with evidence; else
// it answers every cycle with one goal and pursues none. stop closes it.
func startStandin(o *runOptions, scripted bool) (stop func(), err error) {
	cfg, err := parseStandin(o.llmURL)
	if err != nil {
		return nil, err
	}
	if scripted {
		cfg.Reply = llmtest.ScriptedReply
	}
	if o.model != "" && o.model != cfg.Models[0].Name {
		cfg.Models = append(cfg.Models, llmtest.ModelSpec{Name: o.model, ContextLength: cfg.Models[0].ContextLength})
	}
	if o.model == "" {
		o.model = cfg.Models[0].Name
	}
	o.cacheCounts.hook(&cfg)
	started, cancel, err := stopAfter(o.llmURL, &cfg)
	if err != nil {
		return nil, err
	}
	s := llmtest.NewServer(cfg)
	if o.standin != nil {
		o.standin(s)
	}
	base := "http://standin.invalid"
	if o.standinHTTP {
		o.httpClient = &http.Client{Transport: handlerTransport{s.Handler()}}
	} else {
		base = s.Start()
	}
	started(s)
	if o.provider == "openai" {
		base += "/v1"
	}
	o.llmURL = base
	return func() { cancel(); s.Close() }, nil
}

// handlerTransport serves requests with an http.Handler in process, as if
// over the network.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// tracerProvider returns the provider, nil when tracing is off.
func (t *tracing) tracerProvider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// traceContent reports whether spans carry prompts and tool arguments.
func (t *tracing) traceContent() bool { return t != nil && t.content }
