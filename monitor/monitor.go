package monitor

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/task"
)

// Requests is what the monitor needs of the requests queue:
// *requests.Queue satisfies it.
type Requests interface {
	List(ctx context.Context, f requests.Filter) ([]requests.Request, error)
	Answer(ctx context.Context, id string, status requests.Status, answer string) (requests.Request, error)
}

var _ Requests = (*requests.Queue)(nil)

// Defaults of [Config].
const (
	// DefaultHistory is how many load samples are kept per agent for the
	// chart (one per goal chosen and per stressor change).
	DefaultHistory = 120
	// DefaultMaxBody limits request bodies, in bytes.
	DefaultMaxBody = 64 << 10
	// DefaultPageSize and MaxPageSize bound GET /api/agents pages.
	DefaultPageSize = 24
	MaxPageSize     = 500
)

// Config configures [New]. Runner or Source is required, not both.
type Config struct {
	// Runner gives the agents of this process: an *runner.Runner, or
	// [hostaccess.Single]. The monitor reads and reaches them through
	// [RunnerSource].
	Runner hostaccess.Agents
	// Source gives agents that run elsewhere, for example loaded from
	// their store by a process that runs none (see [Source]). When it is
	// also a [Scheduler], its lanes are shown.
	Source Source
	// Tasks is the task queue to list and assign (optional: without it
	// the task endpoints answer 404).
	Tasks task.Queue
	// Requests is the queue of requests to the human (optional: without
	// it the request endpoints answer 404).
	Requests Requests
	// Memory is the agents' long-term memory (optional): with it, GET
	// /api/agents shows each agent's memory counts and GET
	// /api/agents/{id}/memories?q= lists or recalls its memories (without,
	// that endpoint answers 501).
	Memory *memory.Memory
	// Token, Addr, AllowedHosts: see [hostaccess.AuthConfig]. Token is the bearer
	// token every request but /healthz must carry.
	Token string
	// Addr is the address the monitor is served on ("127.0.0.1:8080",
	// "0.0.0.0:8080", as given to [NewServer]). [New] refuses an Addr that
	// is not a loopback address ([hostaccess.Loopback]) when Token is empty, with
	// [ErrNoToken], and one whose Token fails [hostaccess.CheckToken] (fewer than
	// [hostaccess.MinTokenLength] characters other than white space, fewer than
	// [hostaccess.MinTokenDistinct] different ones, mostly a run) with
	// [hostaccess.ErrWeakToken]; the Host
	// check allows its host (see [hostaccess.AuthConfig].Addr).
	// Empty: unknown, so no refusal, and only loopback names and
	// AllowedHosts pass the Host check.
	Addr string
	// AllowedHosts are further host names (without a port) that the Host
	// check accepts, such as the name a reverse proxy forwards
	// ("agents.example.com"); any other Host gets 421 (see
	// [hostaccess.AuthConfig].AllowedHosts).
	AllowedHosts []string
	// InsecureNoTokenBehindProxy lets [New] serve a non-loopback Addr
	// without a Token, for a monitor behind a reverse proxy that
	// authenticates every request itself. New logs a warning when it is
	// used. Anyone who reaches Addr directly, around the proxy, controls
	// the agents.
	InsecureNoTokenBehindProxy bool
	// Registry receives the monitor's Prometheus metrics; default a fresh
	// registry with the Go and process collectors. /metrics serves
	// Gatherer (default the Registry when it is also a Gatherer).
	Registry prometheus.Registerer
	Gatherer prometheus.Gatherer
	// Clock drives the event streams' keep-alive; default
	// clock.System. KeepAlive is their interval, default 15 s.
	Clock     clock.Clock
	KeepAlive time.Duration
	// History is how many load samples are kept per agent; default 120.
	History int
	// MaxBody limits request bodies in bytes; default 64 KiB.
	MaxBody int64
	// MaxSubscribers bounds the concurrent event streams; default 32.
	MaxSubscribers int
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Monitor is the monitor: an http.Handler serving the dashboard, the JSON
// API, the event stream, /healthz and /metrics (see the package
// documentation). Feed it every agent's events with [Monitor.Observe].
type Monitor struct {
	cfg       Config
	auth      *hostaccess.Auth
	hub       *hub
	hist      *history
	met       *metrics
	clock     clock.Clock
	keepAlive time.Duration
	log       *slog.Logger
	mux       *http.ServeMux
	src       Source    // the agents: cfg.Source, or cfg.Runner adapted
	sched     Scheduler // the lanes shown, or nil
	page      *template.Template
	started   time.Time
}

//go:embed web
var webFS embed.FS

// New returns a monitor over cfg.Runner or cfg.Source. Errors: neither or
// both of them; [hostaccess.ErrWeakToken] for a non-loopback cfg.Addr with a
// cfg.Token that fails [hostaccess.CheckToken]; [ErrNoToken] for a non-loopback cfg.Addr without a cfg.Token (unless cfg.InsecureNoTokenBehindProxy, which is logged as a
// warning); a metrics registration error (for example the same Registry
// used twice).
func New(cfg Config) (*Monitor, error) {
	if (cfg.Runner == nil) == (cfg.Source == nil) {
		return nil, errors.New("monitor: set one of Config.Runner and Config.Source")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.History <= 0 {
		cfg.History = DefaultHistory
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := checkExposure(cfg, cfg.Logger); err != nil {
		return nil, err
	}
	if cfg.Registry == nil {
		r := defaultRegistry()
		cfg.Registry = r
		if cfg.Gatherer == nil {
			cfg.Gatherer = r
		}
	}
	if cfg.Gatherer == nil {
		g, ok := cfg.Registry.(prometheus.Gatherer)
		if !ok {
			return nil, errors.New("monitor: Config.Gatherer is required with a Registry that is not a Gatherer")
		}
		cfg.Gatherer = g
	}
	m := &Monitor{
		cfg:       cfg,
		auth:      hostaccess.NewAuth(hostaccess.AuthConfig{Token: cfg.Token, Addr: cfg.Addr, AllowedHosts: cfg.AllowedHosts}),
		hub:       newHub(0, cfg.MaxSubscribers),
		hist:      newHistory(cfg.History, 5, 200),
		clock:     cfg.Clock,
		keepAlive: cfg.KeepAlive,
		log:       cfg.Logger,
		started:   cfg.Clock.Now(),
		src:       cfg.Source,
	}
	if cfg.Runner != nil {
		m.src = RunnerSource(cfg.Runner)
		m.sched, _ = cfg.Runner.(Scheduler)
	} else {
		m.sched, _ = cfg.Source.(Scheduler)
	}
	met, err := newMetrics(cfg.Registry, m)
	if err != nil {
		return nil, fmt.Errorf("monitor: metrics: %w", err)
	}
	m.met = met
	m.page = template.Must(template.ParseFS(webFS, "web/index.html"))
	m.routes()
	return m, nil
}

// Observe feeds one event to the monitor (the event stream, the charts'
// history, the thoughts and the metrics). It is an [event.Observer]:
// pass it as (or with [event.Observers], next to) the Runner's or
// Agent's Observer. It never blocks.
func (m *Monitor) Observe(e event.Event) {
	m.met.observe(e)
	m.hist.observe(e)
	m.hub.publish(e)
}

// Auth returns the monitor's checks, to guard other handlers of the same
// application with the same token and hosts (see [hostaccess.Auth.Middleware]).
func (m *Monitor) Auth() *hostaccess.Auth { return m.auth }

// Close ends every event stream (http.Server.Shutdown does not end
// streaming responses); call it from http.Server.RegisterOnShutdown. It is
// idempotent.
func (m *Monitor) Close() { m.hub.close() }

// ServeHTTP serves the monitor, behind the [hostaccess.Auth] checks (except /healthz,
// which only checks the Host header).
func (m *Monitor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	if r.URL.Path == "/healthz" {
		if !m.auth.HostAllowed(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, "host "+quote(r.Host)+" is not allowed")
			return
		}
		m.mux.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/" && r.Method == http.MethodGet && m.auth.HostAllowed(r.Host) && m.auth.Login(w, r) {
		// Drop the token from the address; a relative Location keeps a
		// prefix the monitor is mounted under.
		w.Header().Set("Location", "./")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	m.auth.Middleware(m.mux).ServeHTTP(w, r)
}

func (m *Monitor) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFS, "web")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", m.handlePage)
	// Browsers ask for /favicon.ico whatever the page says.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		http.ServeFileFS(w, r, static, "favicon.svg")
	})
	mux.HandleFunc("GET /healthz", m.handleHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.cfg.Gatherer, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn)}))
	mux.HandleFunc("GET /api/agents", m.handleAgents)
	mux.HandleFunc("GET /api/agents/{id}", m.handleAgent)
	mux.HandleFunc("GET /api/agents/{id}/memories", m.handleMemories)
	mux.HandleFunc("GET /api/events", m.handleEvents)
	mux.HandleFunc("GET /api/thoughts", m.handleThoughts)
	mux.HandleFunc("POST /api/messages", m.handleMessage)
	mux.HandleFunc("GET /api/tasks", m.handleTasks)
	mux.HandleFunc("POST /api/tasks", m.handleSubmitTask)
	mux.HandleFunc("GET /api/requests", m.handleRequests)
	mux.HandleFunc("POST /api/requests/{id}/answer", m.handleAnswer)
	mux.HandleFunc("POST /api/agents/{id}/slots", m.handlePostSlot)
	mux.HandleFunc("GET /api/slots", m.handleSharedSlots)
	mux.HandleFunc("POST /api/slots", m.handlePostSharedSlot)
	mux.HandleFunc("DELETE /api/agents/{id}/slots/{slot}", m.handleRemoveSlot)
	mux.HandleFunc("DELETE /api/slots/{slot}", m.handleRemoveSharedSlot)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s (see GET /api/agents, /api/events, /api/tasks, /api/requests, /api/slots, POST /api/messages, /api/agents/{id}/slots)", r.Method, quote(r.URL.Path)))
	})
	m.mux = mux
}

func (m *Monitor) handlePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	if err := m.page.Execute(w, map[string]any{"CSRF": m.auth.Session(w, r)}); err != nil {
		m.log.Warn("monitor: rendering the page failed", "err", err)
	}
}
