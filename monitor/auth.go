package monitor

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
)

// Header and cookie names of the [Auth] checks.
const (
	// CSRFHeader carries the page's CSRF token on requests that change
	// something, when they are not authenticated by a bearer token.
	CSRFHeader = "X-CSRF-Token"
	// SessionCookie holds the page's session after it was opened with
	// ?token=TOKEN: HttpOnly, SameSite=Strict.
	SessionCookie = "existence_monitor"
)

// AuthConfig configures [NewAuth].
type AuthConfig struct {
	// Token, when not empty, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"), or the session cookie a page gets
	// by opening any page with ?token=TOKEN. Empty: no authentication (fit
	// only for a loopback address).
	Token string
	// AllowedHosts are the host names (without port) a request's Host
	// header may name, beyond the defaults: "localhost", any *.localhost
	// name, and any IP address literal. Names are compared
	// case-insensitively; "*" allows every host (turns the DNS-rebinding
	// protection off). Requests naming another host get 421 Misdirected
	// Request.
	AllowedHosts []string
}

// Auth holds the checks that keep a monitor (or any handler, such as an
// MCP endpoint over HTTP) from being driven by someone else:
//
//   - the Host header must name an allowed host, so that a page on
//     attacker.example whose name was rebound to 127.0.0.1 cannot reach a
//     loopback service (DNS rebinding);
//   - with a token, every request must carry it as a bearer token
//     (compared in constant time, on SHA-256 digests so that even its
//     length does not leak) or as the session cookie;
//   - a request that changes something (any method but GET, HEAD and
//     OPTIONS) authenticated by the cookie, or sent with no token
//     configured, must also carry the CSRF token in [CSRFHeader]: another
//     origin's page can neither read it nor set the header.
//
// Create it with [NewAuth]; it is safe for concurrent use.
type Auth struct {
	token   *[sha256.Size]byte // nil: no authentication
	session string             // the cookie value: hex of a digest of the token
	csrf    string
	hosts   map[string]bool
	any     bool
}

// NewAuth returns the checks for cfg, with a fresh random CSRF token.
func NewAuth(cfg AuthConfig) *Auth {
	a := &Auth{hosts: map[string]bool{}}
	if cfg.Token != "" {
		sum := sha256.Sum256([]byte(cfg.Token))
		a.token = &sum
		s := sha256.Sum256([]byte("existence-monitor-session\x00" + cfg.Token))
		a.session = hex.EncodeToString(s[:])
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	a.csrf = hex.EncodeToString(b[:])
	for _, h := range cfg.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			a.any = true
		}
		a.hosts[h] = true
	}
	return a
}

// CSRFToken returns the token pages must echo in [CSRFHeader].
func (a *Auth) CSRFToken() string { return a.csrf }

// HostAllowed reports whether the Host header value host (with or without a
// port) names an allowed host.
func (a *Auth) HostAllowed(host string) bool {
	if a.any {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || net.ParseIP(h) != nil {
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
		return http.StatusMisdirectedRequest, "host " + quote(r.Host) + " is not allowed: open the monitor by IP address or localhost, or add the name to the allowed hosts"
	}
	bearer := false
	if a.token != nil {
		switch scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " "); {
		case ok && strings.EqualFold(scheme, "Bearer"):
			sum := sha256.Sum256([]byte(strings.TrimSpace(cred)))
			if subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 {
				return http.StatusUnauthorized, "invalid bearer token"
			}
			bearer = true
		case a.cookieOK(r):
		default:
			return http.StatusUnauthorized, `missing bearer token: send "Authorization: Bearer TOKEN", or open the page with ?token=TOKEN`
		}
	}
	if !bearer && !safeMethod(r.Method) {
		got := r.Header.Get(CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(a.csrf)) != 1 {
			return http.StatusForbidden, "missing or invalid CSRF token: send the page's token in " + CSRFHeader + ", or authenticate with a bearer token"
		}
	}
	return 0, ""
}

func (a *Auth) cookieOK(r *http.Request) bool {
	c, err := r.Cookie(SessionCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(a.session)) == 1
}

// Login handles ?token=TOKEN on a page request: with the right token it
// sets the session cookie and reports true (the caller then redirects to
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
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: a.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
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
			writeError(w, status, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
