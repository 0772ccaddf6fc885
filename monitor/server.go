package monitor

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"
)

// The timeouts and limits of [NewServer].
const (
	// ServerReadHeaderTimeout bounds reading a request's headers: a
	// client that trickles them (slowloris) is disconnected after 10 s.
	ServerReadHeaderTimeout = 10 * time.Second
	// ServerReadTimeout bounds reading a whole request, body included
	// (request bodies are at most a few kilobytes; [Config].MaxBody).
	ServerReadTimeout = 30 * time.Second
	// ServerIdleTimeout closes a keep-alive connection with no request
	// for 2 minutes.
	ServerIdleTimeout = 2 * time.Minute
	// ServerMaxHeaderBytes bounds a request's headers: 16 KiB (431
	// Request Header Fields Too Large beyond).
	ServerMaxHeaderBytes = 16 << 10
)

// NewServer returns an *http.Server for h on addr with safe timeouts:
// [ServerReadHeaderTimeout], [ServerReadTimeout], [ServerIdleTimeout] and
// [ServerMaxHeaderBytes]. It sets no WriteTimeout, so that event streams
// (the monitor's /api/events, which bounds each write itself, and MCP's
// streamable HTTP) can last. When h is a *[Monitor], its Close is
// registered with RegisterOnShutdown, so that Shutdown also ends the event
// streams. Serve the monitor (or an mcpserver handler) with it rather than
// a bare http.Server, whose zero timeouts let a client hold a connection
// open for ever by sending its headers slowly:
//
//	mon, err := monitor.New(monitor.Config{Runner: runner, Token: token, Addr: addr})
//	srv := monitor.NewServer(addr, mon)
//	go srv.ListenAndServe()
//	defer srv.Shutdown(ctx)
//
// Set ErrorLog on the result to route net/http's own messages.
func NewServer(addr string, h http.Handler) *http.Server {
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ServerReadHeaderTimeout,
		ReadTimeout:       ServerReadTimeout,
		IdleTimeout:       ServerIdleTimeout,
		MaxHeaderBytes:    ServerMaxHeaderBytes,
	}
	if m, ok := h.(*Monitor); ok {
		srv.RegisterOnShutdown(m.Close)
	}
	return srv
}

// ErrNoToken is the error of [New] for a monitor that would be served on
// an address other machines can reach ([Config].Addr is not a loopback
// address) without a [Config].Token, unless
// [Config].InsecureNoTokenBehindProxy says that a proxy in front
// authenticates every request.
var ErrNoToken = errors.New("monitor: a monitor on a non-loopback address needs a token")

// MinTokenLength is the least number of characters other than white
// space a [Config].Token must have for a monitor on a non-loopback
// address: 16. [GenerateToken] makes one of 43.
const MinTokenLength = 16

// MinTokenDistinct is the least number of different characters (code
// points, white space aside) such a token must have: 8. Sixteen of one
// letter, or "abababab…", is guessed at once whatever its length.
const MinTokenDistinct = 8

// ErrWeakToken is the error of [New] and [CheckToken] for a token too
// short or too plain to guard a monitor other machines can reach.
var ErrWeakToken = errors.New("monitor: token too weak for a non-loopback address")

// CheckToken returns an error matching [ErrWeakToken], saying which rule
// failed, when token, white space aside, has fewer than [MinTokenLength]
// characters (code points), fewer than [MinTokenDistinct] different ones,
// or is mostly a run of repeated or consecutive characters (more than half
// of its neighbouring pairs the same character or one code point apart:
// "aaaa…", "abcdefgh…", "12345678…"); nil otherwise. A random token of
// the same length passes these rules almost surely ([GenerateToken]'s
// always do). A monitor on a non-loopback address needs such a token; on
// loopback any token is accepted.
func CheckToken(token string) error {
	var rs []rune
	distinct := map[rune]bool{}
	for _, r := range token {
		if !unicode.IsSpace(r) {
			rs = append(rs, r)
			distinct[r] = true
		}
	}
	const better = "generate one instead: GenerateToken (in `existence`, -http-token auto) makes 43 random characters, 256 bits; or `openssl rand -hex 16`"
	if len(rs) < MinTokenLength {
		return fmt.Errorf("%w: it has %d characters other than white space, want at least %d (%s)", ErrWeakToken, len(rs), MinTokenLength, better)
	}
	if len(distinct) < MinTokenDistinct {
		return fmt.Errorf("%w: it has %d different characters, want at least %d: a token of few characters is guessed at once whatever its length (%s)", ErrWeakToken, len(distinct), MinTokenDistinct, better)
	}
	steps := 0
	for i := 1; i < len(rs); i++ {
		if d := rs[i] - rs[i-1]; d >= -1 && d <= 1 {
			steps++
		}
	}
	if 2*steps > len(rs)-1 {
		return fmt.Errorf("%w: it is mostly a run of repeated or consecutive characters (%d of its %d neighbouring pairs), which is guessed at once (%s)", ErrWeakToken, steps, len(rs)-1, better)
	}
	return nil
}

// GenerateToken returns a new random token: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func GenerateToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Loopback reports whether the listen address addr ("host:port") accepts
// connections only from this machine: its host is "localhost" or a
// loopback IP address (127.0.0.0/8, ::1). An empty host, 0.0.0.0 and ::
// mean every interface, and any other name may resolve to a public
// address, so they are not loopback; neither is an address that does not
// parse.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkExposure refuses, or warns about, a monitor served on a
// non-loopback address without a token.
func checkExposure(cfg Config, log *slog.Logger) error {
	if cfg.Addr == "" || Loopback(cfg.Addr) {
		return nil
	}
	if cfg.Token != "" {
		if err := CheckToken(cfg.Token); err != nil {
			return fmt.Errorf("Config.Addr %q is not a loopback address: %w", cfg.Addr, err)
		}
		return nil
	}
	if !cfg.InsecureNoTokenBehindProxy {
		return fmt.Errorf("%w: Config.Addr %q is not a loopback address and Config.Token is empty, so anyone who can reach it "+
			"could read every agent's state and send host messages and tasks; set Config.Token, bind a loopback address "+
			"such as 127.0.0.1:8080, or, only behind a proxy that authenticates every request, set Config.InsecureNoTokenBehindProxy",
			ErrNoToken, cfg.Addr)
	}
	log.Warn("monitor: serving WITHOUT AUTHENTICATION on a non-loopback address: Config.InsecureNoTokenBehindProxy says "+
		"a proxy in front authenticates every request; anyone who reaches the address directly controls the agents",
		"addr", cfg.Addr)
	return nil
}
