package hostaccess

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"strings"
)

// Header and cookie names of the [Auth] checks.
const (
	// CSRFHeader carries the page's CSRF token on requests that change
	// something, when they are not authenticated by a bearer token.
	CSRFHeader = "X-CSRF-Token"
	// SessionCookie holds the page's session: HttpOnly, SameSite=Strict,
	// Secure over TLS. With a token it is set when the page is opened with
	// ?token=TOKEN; without one, when the page is first opened.
	SessionCookie = "existence_monitor"
)

// AuthConfig configures [NewAuth].
type AuthConfig struct {
	// Token, when not empty, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"), or the session cookie a page gets
	// by opening any page with ?token=TOKEN. Empty: no authentication (fit
	// only for a loopback address; monitor.New and the MCP and A2A
	// handlers refuse one on another address without a token).
	Token string
	// Addr is the address the handler is served on, as given to
	// net.Listen or monitor.NewServer ("127.0.0.1:8080", "0.0.0.0:8080",
	// ":8080"). Its host is an allowed Host header; a host that binds every
	// interface ("", "0.0.0.0", "::") allows the addresses of this
	// machine's interfaces instead. Empty: only the defaults and
	// AllowedHosts.
	Addr string
	// AllowedHosts are the host names or addresses (without port) a
	// request's Host header may name, beyond the defaults: "localhost",
	// any *.localhost name, the loopback addresses (127.0.0.0/8, ::1) and
	// Addr's host. Other IP addresses are not allowed unless listed here
	// or bound. Names are compared case-insensitively; "*" allows every
	// host (turns the DNS-rebinding protection off). Requests naming
	// another host get 421 Misdirected Request.
	AllowedHosts []string
}

// Auth holds the checks that keep a monitor (or any handler, such as an
// MCP endpoint over HTTP) from being driven by someone else:
//
//   - the Host header must name an allowed host (see
//     [AuthConfig].AllowedHosts), so that a page on attacker.example
//     whose name was rebound to 127.0.0.1 cannot reach a loopback service
//     (DNS rebinding);
//   - with a token, every request must carry it as a bearer token
//     (compared in constant time, on SHA-256 digests so that even its
//     length does not leak) or carry a session cookie, which only a
//     client that presented the token gets;
//   - a request that changes something (any method but GET, HEAD and
//     OPTIONS) that is not authenticated by a bearer token must carry its
//     session's CSRF token in [CSRFHeader]. Each session (each login with
//     ?token=, or, without a token, each browser that opened the page)
//     has its own CSRF token, derived from the session with an HMAC keyed
//     by the token (by a random key when there is none), and it is only
//     ever served to that session: another origin's page can neither read
//     it nor set the header, and one client's token is worth nothing to
//     another.
//
// Create it with [NewAuth]; it is safe for concurrent use.
type Auth struct {
	token *[sha256.Size]byte // nil: no authentication
	key   []byte             // signs sessions and derives CSRF tokens
	hosts map[string]bool
	any   bool
}

// NewAuth returns the checks for cfg. With a token, sessions survive a
// restart of the process (their key derives from the token) and end when
// the token changes; without one, they last as long as the process.
func NewAuth(cfg AuthConfig) *Auth {
	a := &Auth{hosts: map[string]bool{}}
	if cfg.Token != "" {
		sum := sha256.Sum256([]byte(cfg.Token))
		a.token = &sum
		k := hmac.New(sha256.New, []byte("existence-monitor session key"))
		k.Write([]byte(cfg.Token))
		a.key = k.Sum(nil)
	} else {
		a.key = make([]byte, 32)
		_, _ = rand.Read(a.key) // crypto/rand.Read never fails (Go 1.24)
	}
	for _, h := range cfg.AllowedHosts {
		h = normalHost(h)
		if h == "*" {
			a.any = true
		}
		a.hosts[h] = true
	}
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			for _, ip := range interfaceAddrs() {
				a.hosts[ip] = true
			}
		} else {
			a.hosts[normalHost(host)] = true
		}
	}
	return a
}

// interfaceAddrs returns the addresses of this machine's interfaces, as
// Host header values compare them.
func interfaceAddrs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil // only loopback and AllowedHosts then: safe
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, normalHost(n.IP.String()))
		}
	}
	return out
}

// normalHost lower-cases a host, drops IPv6 brackets and a trailing dot,
// and writes IP addresses in their canonical form.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(strings.TrimSpace(h), "[]"), "."))
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}

// HostAllowed reports whether the Host header value host (with or without a
// port) names an allowed host: "localhost", a *.localhost name, a loopback
// address, the bound address ([AuthConfig].Addr) or an allowed host.
func (a *Auth) HostAllowed(host string) bool {
	if a.any {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = normalHost(h)
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	return a.hosts[h]
}

// Check applies the checks to r. It returns 0 when r may proceed; otherwise
// the HTTP status and a message for the client (421 for a host not
// allowed, 401 for a missing or wrong token, 403 for a missing or wrong
// CSRF token).
func (a *Auth) Check(r *http.Request) (status int, msg string) {
	if !a.HostAllowed(r.Host) {
		return http.StatusMisdirectedRequest, "host " + quote(r.Host) + " is not allowed: open the monitor by localhost, a loopback address or the address it is bound to, or add the name to the allowed hosts"
	}
	bearer := false
	session, hasSession := a.session(r)
	if a.token != nil {
		switch scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " "); {
		case ok && strings.EqualFold(scheme, "Bearer"):
			sum := sha256.Sum256([]byte(strings.TrimSpace(cred)))
			if subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 {
				return http.StatusUnauthorized, "invalid bearer token"
			}
			bearer = true
		case hasSession:
		default:
			return http.StatusUnauthorized, `missing bearer token: send "Authorization: Bearer TOKEN", or open the page with ?token=TOKEN`
		}
	}
	if !bearer && !safeMethod(r.Method) {
		got := r.Header.Get(CSRFHeader)
		if !hasSession || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(a.csrf(session))) != 1 {
			return http.StatusForbidden, "missing or invalid CSRF token: send the token of your session's page in " + CSRFHeader + ", or authenticate with a bearer token"
		}
	}
	return 0, ""
}

// session returns the id of r's session when its cookie is present and
// signed by a's key.
func (a *Auth) session(r *http.Request) (string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return "", false
	}
	id, sig, ok := strings.Cut(c.Value, ".")
	if !ok || len(id) != 32 {
		return "", false
	}
	return id, subtle.ConstantTimeCompare([]byte(sig), []byte(a.mac("session", id))) == 1
}

// mac is the hex HMAC of purpose and id under a's key.
func (a *Auth) mac(purpose, id string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}

// csrf is the CSRF token of the session id.
func (a *Auth) csrf(id string) string { return a.mac("csrf", id) }

// newSession sets a fresh session cookie on w and returns its id.
func (a *Auth) newSession(w http.ResponseWriter, r *http.Request) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: id + "." + a.mac("session", id), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return id
}

// CSRFToken returns the CSRF token of r's session, or "" when r carries no
// valid session cookie.
func (a *Auth) CSRFToken(r *http.Request) string {
	if id, ok := a.session(r); ok {
		return a.csrf(id)
	}
	return ""
}

// Session returns the CSRF token for the page served in answer to r, which
// must have passed [Auth.Check]: that of r's session, or of a new session
// whose cookie it sets on w (so call it before writing the body). With a
// token, only an authenticated request reaches it, so the CSRF token is
// never served to a client that did not present the token.
func (a *Auth) Session(w http.ResponseWriter, r *http.Request) string {
	if id, ok := a.session(r); ok {
		return a.csrf(id)
	}
	return a.csrf(a.newSession(w, r))
}

// Login handles ?token=TOKEN on a page request: with the right token it
// sets a new session cookie and reports true (the caller then redirects to
// the page without the token in its address). It reports false when the
// query has no token, or a wrong one.
func (a *Auth) Login(w http.ResponseWriter, r *http.Request) bool {
	tok := r.URL.Query().Get("token")
	if a.token == nil || tok == "" {
		return false
	}
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 {
		return false
	}
	a.newSession(w, r)
	return true
}

// Middleware returns next behind the checks: a request that fails them gets
// a JSON error ({"error": "..."}) with the status [Auth.Check] returned,
// and a WWW-Authenticate challenge on 401.
func (a *Auth) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, msg := a.Check(r); status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="existence"`)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			b, _ := json.Marshal(ErrorBody{Error: msg}) // a struct of one string always encodes
			_, _ = w.Write(append(b, '\n'))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ErrorBody is the JSON body of an answer [Auth.Middleware] refuses:
// {"error": "..."}, the same shape as the monitor's error answers.
type ErrorBody struct {
	Error string `json:"error"`
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// quote quotes s for an error message, cut to 100 bytes.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
