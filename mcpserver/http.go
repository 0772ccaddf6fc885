package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoToken is returned by [Server.Handler] when no token is configured:
// the HTTP transport always needs one.
var ErrNoToken = errors.New("mcpserver: the HTTP transport needs a bearer token")

// HTTPConfig configures [Server.Handler].
type HTTPConfig struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); required.
	Token string
	// Hosts are the Host header values accepted (a name or address,
	// without the port), against DNS rebinding. Empty means loopback
	// only: "localhost", "127.0.0.1" and "::1".
	Hosts []string
}

// Handler serves the MCP streamable HTTP transport (mount it at one path,
// e.g. /mcp). Every request must carry the bearer token (RFC 6750, compared
// in constant time; 401 with a WWW-Authenticate challenge otherwise) and a
// Host header in cfg.Hosts (403 otherwise): the same checks as the
// monitor's. Errors: [ErrNoToken].
func (s *Server) Handler(cfg HTTPConfig) (http.Handler, error) {
	if cfg.Token == "" {
		return nil, ErrNoToken
	}
	hosts := cfg.Hosts
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	sum := sha256.Sum256([]byte(cfg.Token))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.cfg.Logger})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if !slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(h, host) }) {
			http.Error(w, "host not allowed: "+r.Host, http.StatusForbidden)
			return
		}
		scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		cred = strings.TrimSpace(cred)
		if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="existence"`)
			http.Error(w, `missing bearer token: send "Authorization: Bearer TOKEN"`, http.StatusUnauthorized)
			return
		}
		got := sha256.Sum256([]byte(cred))
		if subtle.ConstantTimeCompare(got[:], sum[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="existence", error="invalid_token"`)
			http.Error(w, "invalid bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}
