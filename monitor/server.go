package monitor

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/existence-loop/sdk/hostaccess"
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

// checkExposure refuses, or warns about, a monitor served on a
// non-loopback address without a token.
func checkExposure(cfg Config, log *slog.Logger) error {
	if cfg.Addr == "" || hostaccess.Loopback(cfg.Addr) {
		return nil
	}
	if cfg.Token != "" {
		if err := hostaccess.CheckToken(cfg.Token); err != nil {
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
