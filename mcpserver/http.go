package mcpserver

import (
	"errors"
	"net/http"

	"github.com/existence-loop/sdk/monitor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoToken is returned by [Server.Handler] when neither a token nor a
// monitor.Auth is configured: the HTTP transport always needs one.
var ErrNoToken = errors.New("mcpserver: the HTTP transport needs a bearer token")

// HTTPConfig configures [Server.Handler].
type HTTPConfig struct {
	// Auth, when set, is the monitor's checks (allowed hosts, bearer
	// token; see [monitor.Auth]) to share with a
	// monitor served by the same process; Token and AllowedHosts are then
	// ignored.
	Auth *monitor.Auth
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); required unless Auth is set.
	Token string
	// AllowedHosts are the host names a request's Host header may name
	// beyond localhost, *.localhost and IP addresses (see
	// monitor.AuthConfig).
	AllowedHosts []string
}

// Handler serves the MCP streamable HTTP transport (mount it at one path,
// e.g. /mcp) behind the monitor's checks (monitor.Auth): every request must
// name an allowed host in its Host header (421 otherwise, against DNS
// rebinding) and carry the bearer token, compared in constant time (401
// with a WWW-Authenticate challenge otherwise). Errors: [ErrNoToken].
func (s *Server) Handler(cfg HTTPConfig) (http.Handler, error) {
	auth := cfg.Auth
	if auth == nil {
		if cfg.Token == "" {
			return nil, ErrNoToken
		}
		auth = monitor.NewAuth(monitor.AuthConfig{Token: cfg.Token, AllowedHosts: cfg.AllowedHosts})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.cfg.Logger})
	return auth.Middleware(h), nil
}
