package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/existence-loop/sdk/hostaccess"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoToken is returned by [Server.Handler] when neither a token nor a
// hostaccess.Auth is configured: the HTTP transport always needs one.
var ErrNoToken = errors.New("mcpserver: the HTTP transport needs a bearer token")

// Defaults of [HTTPConfig].
const (
	// DefaultIdleTimeout closes an HTTP session that has received no
	// request for 30 minutes.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the HTTP sessions open at once. A session
	// holds about 12.5 KB, so 1,000 hold about 12.5 MB.
	DefaultMaxSessions = 1000
)

// HTTPConfig configures [Server.Handler].
type HTTPConfig struct {
	// Auth, when set, is the monitor's checks (allowed hosts, bearer
	// token; see [hostaccess.Auth]) to share with a monitor served by the
	// same process; Token, Addr and AllowedHosts are then ignored.
	Auth *hostaccess.Auth
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); required unless Auth is set. On an
	// Addr that is not a loopback address it must pass hostaccess.CheckToken
	// (16 characters other than white space, 8 of them different, not
	// mostly a run).
	Token string
	// Addr is the address the handler is served on ("0.0.0.0:8081"): its
	// host passes the Host check (see hostaccess.AuthConfig.Addr).
	Addr string
	// AllowedHosts are the host names a request's Host header may name
	// beyond localhost, the loopback addresses and Addr (see
	// hostaccess.AuthConfig).
	AllowedHosts []string
	// IdleTimeout closes a session that has received no request for this
	// long, with the go-sdk's own mechanism
	// (mcp.StreamableHTTPOptions.SessionTimeout): its memory is freed, and
	// a client that comes back gets 404 "session not found" and
	// initializes again. Default [DefaultIdleTimeout] (30 minutes);
	// negative: sessions never expire.
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions open at once over streamable HTTP
	// (this Server's, through every Handler). A request that would open
	// one more (a POST without an Mcp-Session-Id header) gets 503 Service
	// Unavailable with a JSON-RPC error that says so and a Retry-After
	// header; requests of open sessions are unaffected. Default
	// [DefaultMaxSessions] (1,000); negative: no bound.
	MaxSessions int
}

// withDefaults fills in the defaults of the zero fields.
func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c
}

// streamableOptions are the go-sdk handler's options for c.
func (c HTTPConfig) streamableOptions(s *Server) *mcp.StreamableHTTPOptions {
	// The Host check is hostaccess.Auth's, the one rule (localhost in any
	// case, with a trailing dot, and *.localhost pass): the go-sdk's own,
	// stricter localhost check would answer 403 to names that rule and
	// the docs allow.
	o := &mcp.StreamableHTTPOptions{Logger: s.cfg.Logger, DisableLocalhostProtection: true}
	if c.IdleTimeout > 0 {
		o.SessionTimeout = c.IdleTimeout
	}
	return o
}

// Handler serves the MCP streamable HTTP transport (mount it at one path,
// e.g. /mcp) behind the monitor's checks (hostaccess.Auth): every request must
// name an allowed host in its Host header (421 otherwise, against DNS
// rebinding) and carry the bearer token, compared in constant time (401
// with a WWW-Authenticate challenge otherwise). Sessions expire after
// cfg.IdleTimeout without a request and at most cfg.MaxSessions are open
// at once (503 beyond). Serve it with monitor.NewServer, which sets safe
// timeouts. Errors: [ErrNoToken]; hostaccess.ErrWeakToken for a token too
// short for a non-loopback cfg.Addr (see hostaccess.CheckToken).
func (s *Server) Handler(cfg HTTPConfig) (http.Handler, error) {
	cfg = cfg.withDefaults()
	auth := cfg.Auth
	if auth == nil {
		if cfg.Token == "" {
			return nil, ErrNoToken
		}
		if cfg.Addr != "" && !hostaccess.Loopback(cfg.Addr) {
			if err := hostaccess.CheckToken(cfg.Token); err != nil {
				return nil, fmt.Errorf("mcpserver: HTTPConfig.Addr %q is not a loopback address: %w", cfg.Addr, err)
			}
		}
		auth = hostaccess.NewAuth(hostaccess.AuthConfig{Token: cfg.Token, Addr: cfg.Addr, AllowedHosts: cfg.AllowedHosts})
	}
	get := func(*http.Request) *mcp.Server { return s.mcp }
	h := mcp.NewStreamableHTTPHandler(get, cfg.streamableOptions(s))
	var stateful http.Handler = h
	if cfg.MaxSessions > 0 {
		stateful = &sessionCap{s: s, max: cfg.MaxSessions, idle: cfg.IdleTimeout, next: h}
	}
	so := cfg.streamableOptions(s)
	so.Stateless = true
	// The Tasks extension is a layer in front of the stateless handler
	// (tasks.go): the go-sdk does not implement it.
	stateless := &tasksLayer{s: s, next: mcp.NewStreamableHTTPHandler(get, so)}
	return auth.Middleware(versionRouter{stateful: stateful, stateless: stateless}), nil
}

// StatelessVersion is the first MCP protocol version whose core is
// stateless (no initialize, no session id; version and capabilities in
// each request's _meta; server/discover): 2026-07-28.
const StatelessVersion = "2026-07-28"

// versionRouter serves both generations of clients on one endpoint: a
// request that names StatelessVersion or a later one in its
// Mcp-Protocol-Version header, without an Mcp-Session-Id, goes to the
// go-sdk's stateless handler (which accepts that wire format only when
// stateless); everything else (initialize, the requests of a 2025-11-25
// session, GET and DELETE) to the stateful one, with its session cap.
// Versions are dates, so they compare as strings.
type versionRouter struct{ stateful, stateless http.Handler }

func (v versionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= StatelessVersion {
		v.stateless.ServeHTTP(w, r)
		return
	}
	v.stateful.ServeHTTP(w, r)
}

// HTTPSessions returns how many sessions are open over streamable HTTP.
func (s *Server) HTTPSessions() int {
	n := 0
	for ss := range s.mcp.Sessions() {
		if ss.ID() != "" { // only streamable sessions have an id
			n++
		}
	}
	return n
}

// sessionCap refuses a new session when max are open or being opened.
type sessionCap struct {
	s       *Server
	max     int
	idle    time.Duration
	next    http.Handler
	mu      sync.Mutex
	opening int // new-session requests in flight
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	// A session being opened counts while its request runs, and once it
	// is open it is listed too: briefly counted twice, never missed.
	open := c.s.HTTPSessions() + c.opening
	if open >= c.max {
		c.mu.Unlock()
		c.refuse(w, open)
		return
	}
	c.opening++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.opening--
		c.mu.Unlock()
	}()
	c.next.ServeHTTP(w, r)
}

// refuse answers 503 with a JSON-RPC error (id null: the request was not
// read) that MCP clients show.
func (c *sessionCap) refuse(w http.ResponseWriter, open int) {
	msg := fmt.Sprintf("mcpserver: too many MCP sessions: %d are open and the limit is %d (HTTPConfig.MaxSessions); "+
		"close a session (DELETE with its Mcp-Session-Id) or retry once idle ones expire", open, c.max)
	retry := time.Minute
	if c.idle > 0 && c.idle < retry {
		retry = c.idle
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32000, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(append(body, '\n'))
}
