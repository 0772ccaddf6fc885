package a2aserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/task"
)

// Defaults of [Config].
const (
	// DefaultMaxBody bounds a request body: 64 KiB, far above the longest
	// task description (task.DefaultMaxDescription, 2,000 characters of
	// up to 4 bytes each) with its JSON envelope.
	DefaultMaxBody = 64 << 10
	// DefaultMaxStreams bounds the streams (SendStreamingMessage,
	// SubscribeToTask) open at once: 1,000.
	DefaultMaxStreams = 1000
	// DefaultPollInterval is how often an open stream reads its task from
	// the queue when no event of the agent wakes it first (a task
	// finished by another process, or expired): 2 s.
	DefaultPollInterval = 2 * time.Second
	// DefaultPageSize and MaxPageSize bound ListTasks' pages.
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// CanceledResult is the result CancelTask gives a task it ends
// (task.CanceledResult, shared with MCP's tasks/cancel); a failed task with
// this result is shown as TASK_STATE_CANCELED.
const CanceledResult = task.CanceledResult

// Errors of [New] and [Server.Handler].
var (
	// ErrConfig: a required field of [Config] is missing.
	ErrConfig = errors.New("a2aserver: invalid configuration")
	// ErrNoToken: neither a token nor a hostaccess.Auth is configured; the
	// HTTP endpoint always needs one.
	ErrNoToken = errors.New("a2aserver: the A2A endpoint needs a bearer token")
)

// Profile is what an agent's card says of it beyond its name.
type Profile struct {
	// Description is the agent's role in one or two sentences; default:
	// "{Name}, an existence-loop agent (id {ID}) ...".
	Description string
	// Skills are what the agent can do, typically one per tool; default:
	// one skill, "task".
	Skills []a2a.AgentSkill
}

// Config configures a [Server].
type Config struct {
	// Agents are the agents served (required): an *runner.Runner, or
	// one agent through hostaccess.Single.
	Agents hostaccess.Agents
	// Tasks is the task queue A2A tasks are kept in (required): the queue
	// the agents draw from (existence.Config.Tasks), shared with the
	// monitor and the MCP server.
	Tasks task.Queue
	// BaseURL is the URL the endpoint is reached at, without a trailing
	// slash, e.g. "https://agents.example/a2a"; the cards name it. Empty:
	// "http://" + the request's Host + "/a2a".
	BaseURL string
	// Profile returns an agent's description and skills; nil gives the
	// defaults of [Profile].
	Profile func(a *existence.Agent) Profile
	// MaxBody bounds a request body in bytes; default [DefaultMaxBody].
	MaxBody int64
	// MaxStreams bounds the streams open at once; default
	// [DefaultMaxStreams]; negative: no bound.
	MaxStreams int
	// PollInterval is how often a stream rereads its task without a
	// wake-up; default [DefaultPollInterval].
	PollInterval time.Duration
	// MaxMessageChars is the longest message text accepted, in
	// characters (code points); default task.DefaultMaxDescription. A
	// longer text is refused rather than cut.
	MaxMessageChars int
	// Version is the agents' version on their cards; default "1".
	Version string
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Server serves A2A for a set of agents. Create it with [New] and mount
// [Server.Handler] at /a2a; it is safe for concurrent use.
type Server struct {
	cfg     Config
	handler *handler
	jsonrpc http.Handler
	rest    http.Handler // tenant in the first path segment
	plain   http.Handler // no tenant
	streams atomic.Int64
}

// New returns a Server for cfg. Errors: [ErrConfig] when Agents or Tasks
// is nil.
func New(cfg Config) (*Server, error) {
	if cfg.Agents == nil || cfg.Tasks == nil {
		return nil, fmt.Errorf("%w: Config.Agents and Config.Tasks are required", ErrConfig)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxMessageChars <= 0 {
		cfg.MaxMessageChars = task.DefaultMaxDescription
	}
	if cfg.Version == "" {
		cfg.Version = "1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg}
	s.handler = &handler{s: s}
	s.jsonrpc = a2asrv.NewJSONRPCHandler(s.handler)
	s.rest = a2asrv.NewTenantRESTHandler("/{*}", s.handler)
	s.plain = a2asrv.NewRESTHandler(s.handler)
	return s, nil
}

// HTTPConfig configures [Server.Handler]: the monitor's checks, as for
// mcpserver.HTTPConfig.
type HTTPConfig struct {
	// Auth, when set, is the monitor's checks to share with a monitor
	// served by the same process; Token, Addr and AllowedHosts are then
	// ignored.
	Auth *hostaccess.Auth
	// Token is the bearer token every request must carry; required
	// unless Auth is set. On an Addr that is not a loopback address it
	// needs hostaccess.MinTokenLength (16) characters other than white
	// space.
	Token string
	// Addr is the address the handler is served on; its host passes the
	// Host check (see hostaccess.AuthConfig.Addr).
	Addr string
	// AllowedHosts are further host names a request's Host header may
	// name (see hostaccess.AuthConfig).
	AllowedHosts []string
}

// Handler returns the A2A endpoint behind the monitor's checks, to mount
// at /a2a with http.StripPrefix("/a2a", ...) or [Server.Mount]:
//
//	POST /                            JSON-RPC (tenant in params)
//	/rest/{agent}/...                 HTTP+JSON, tenant in the path
//	/rest/...                         HTTP+JSON for a single agent
//	GET /{agent}/agent-card.json      the agent's card
//	GET /agent-card.json              the card of /.well-known
//
// Errors: [ErrNoToken]; hostaccess.ErrWeakToken for a token too short for a
// non-loopback cfg.Addr.
func (s *Server) Handler(cfg HTTPConfig) (http.Handler, error) {
	auth := cfg.Auth
	if auth == nil {
		if cfg.Token == "" {
			return nil, ErrNoToken
		}
		if cfg.Addr != "" && !hostaccess.Loopback(cfg.Addr) {
			if err := hostaccess.CheckToken(cfg.Token); err != nil {
				return nil, fmt.Errorf("a2aserver: HTTPConfig.Addr %q is not a loopback address: %w", cfg.Addr, err)
			}
		}
		auth = hostaccess.NewAuth(hostaccess.AuthConfig{Token: cfg.Token, Addr: cfg.Addr, AllowedHosts: cfg.AllowedHosts})
	}
	return auth.Middleware(http.HandlerFunc(s.serve)), nil
}

// Mount registers the endpoint on mux behind auth: /a2a and /a2a/ (see
// [Server.Handler]) and GET /.well-known/agent-card.json.
func (s *Server) Mount(mux *http.ServeMux, auth *hostaccess.Auth) {
	h := auth.Middleware(http.HandlerFunc(s.serve))
	mux.Handle("/a2a", http.StripPrefix("/a2a", h))
	mux.Handle("/a2a/", http.StripPrefix("/a2a", h))
	mux.Handle("/.well-known/agent-card.json", auth.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveCard(w, r, "")
	})))
}

// Streams returns how many streams are open.
func (s *Server) Streams() int { return int(s.streams.Load()) }

// serve routes a request whose path is relative to the mount point.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "" || path == "/":
		s.serveJSONRPC(w, r)
	case path == "/agent-card.json":
		s.serveCard(w, r, "")
	case strings.HasPrefix(path, "/rest/") || path == "/rest":
		s.serveREST(w, r, strings.TrimPrefix(path, "/rest"))
	default:
		id, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if rest == "agent-card.json" || rest == ".well-known/agent-card.json" {
			s.serveCard(w, r, id)
			return
		}
		writeHTTPError(w, http.StatusNotFound, "no A2A resource at "+quote(r.URL.Path)+": JSON-RPC is POST /a2a, HTTP+JSON under /a2a/rest/{agent}/, an agent's card at /a2a/{agent}/agent-card.json")
	}
}

// body reads r's body, at most s.cfg.MaxBody bytes; it answers 413 itself
// and reports false when the body is larger.
func (s *Server) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > s.cfg.MaxBody {
		s.tooLarge(w, r.ContentLength)
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.tooLarge(w, -1)
		} else {
			writeHTTPError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		}
		return nil, false
	}
	return b, true
}

func (s *Server) tooLarge(w http.ResponseWriter, n int64) {
	size := "more than the limit"
	if n > 0 {
		size = fmt.Sprintf("%d bytes", n)
	}
	writeJSONRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600,
		fmt.Sprintf("request body too large: %s, the limit is %d bytes (a message's text is at most %d characters)", size, s.cfg.MaxBody, s.cfg.MaxMessageChars))
}

// envelope is the part of a JSON-RPC request the router reads.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Tenant string `json:"tenant"`
	} `json:"params"`
}

// serveJSONRPC checks the body (size, JSON, tenant) and the stream cap,
// then hands the request to a2asrv's JSON-RPC binding.
func (s *Server) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSONRPCError(w, http.StatusMethodNotAllowed, nil, -32600, "A2A JSON-RPC requests are POSTed to this address")
		return
	}
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		writeJSONRPCError(w, http.StatusBadRequest, nil, -32700, "parse error: the body is not a JSON-RPC 2.0 request object: "+err.Error())
		return
	}
	var id any
	_ = json.Unmarshal(env.ID, &id)
	if env.Params.Tenant != "" || env.Method != "GetExtendedAgentCard" {
		if _, err := s.handler.agent(env.Params.Tenant); err != nil {
			writeJSONRPCError(w, http.StatusNotFound, id, -32001, err.Error())
			return
		}
	}
	if env.Method == "SendStreamingMessage" || env.Method == "SubscribeToTask" {
		release, ok := s.acquireStream(w, id)
		if !ok {
			return
		}
		defer release()
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	s.jsonrpc.ServeHTTP(w, r)
}

// reserved are the first path segments of the HTTP+JSON binding, which are
// never read as a tenant.
var reserved = map[string]bool{"message:send": true, "message:stream": true, "tasks": true, "extendedAgentCard": true}

// serveREST serves the HTTP+JSON binding at path (relative to /rest).
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, path string) {
	first, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	tenant := ""
	if !reserved[first] {
		tenant = first
		path = "/" + rest
	}
	if _, err := s.handler.agent(tenant); err != nil {
		writeHTTPError(w, http.StatusNotFound, err.Error())
		return
	}
	if r.Body != nil && r.Method != http.MethodGet {
		b, ok := s.body(w, r)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
	}
	if path == "/message:stream" || strings.HasSuffix(path, ":subscribe") {
		release, ok := s.acquireStream(w, nil)
		if !ok {
			return
		}
		defer release()
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = path
	r2.URL.RawPath = ""
	if tenant != "" {
		r2.URL.Path = "/" + tenant + path
		s.rest.ServeHTTP(w, r2)
		return
	}
	s.plain.ServeHTTP(w, r2)
}

// acquireStream counts a stream against MaxStreams; it answers 503 itself
// and reports false when the cap is reached.
func (s *Server) acquireStream(w http.ResponseWriter, id any) (release func(), ok bool) {
	n := s.streams.Add(1)
	if s.cfg.MaxStreams > 0 && n > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "60")
		writeJSONRPCError(w, http.StatusServiceUnavailable, id, -32000,
			fmt.Sprintf("too many open A2A streams: the limit is %d (Config.MaxStreams); close a stream, or poll with GetTask", s.cfg.MaxStreams))
		return nil, false
	}
	return func() { s.streams.Add(-1) }, true
}

// writeJSONRPCError writes a JSON-RPC error response with an HTTP status;
// A2A clients of either binding read the message.
func writeJSONRPCError(w http.ResponseWriter, status int, id any, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeHTTPError writes {"error": {"code", "status", "message"}}, the
// HTTP+JSON binding's error shape.
func writeHTTPError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "status": http.StatusText(status), "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
