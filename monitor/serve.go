package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// DefaultShutdownTimeout bounds the graceful shutdown of [Serve]: 10 s.
const DefaultShutdownTimeout = 10 * time.Second

// ServeConfig configures [Serve]. The zero value gives the defaults.
type ServeConfig struct {
	// Ready, when set, is called once with the address Serve listens on,
	// before it serves the first request: useful with port 0, and for
	// printing where the dashboard is.
	Ready func(addr net.Addr)
	// ShutdownTimeout bounds the graceful shutdown once ctx ends; zero or
	// negative means [DefaultShutdownTimeout]. Connections still open
	// then are closed.
	ShutdownTimeout time.Duration
	// Logger receives net/http's own messages (level Warn); nil means
	// [slog.Default].
	Logger *slog.Logger
}

// Serve listens on addr ("host:port"; port 0 picks one) and serves h —
// a *[Monitor], an mcpserver handler, or both behind one mux — through
// [NewServer]'s safe timeouts until ctx ends. It then shuts the server
// down gracefully (bounded by [ServeConfig].ShutdownTimeout, then closing
// what is left), which also closes a *Monitor and so ends its event
// streams, and returns nil. It owns the listener and the server, so that
// a program needs no shutdown code of its own:
//
//	err := monitor.Serve(ctx, "127.0.0.1:8080", mon, monitor.ServeConfig{})
//
// Errors: the listen's, wrapped with addr; the server's when it stops
// before ctx ends.
func Serve(ctx context.Context, addr string, h http.Handler, cfg ServeConfig) error {
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("monitor: listen on %s: %w", addr, err)
	}
	srv := NewServer(addr, h)
	srv.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done: // stopped on its own: ctx has not ended
		if m, ok := h.(*Monitor); ok {
			m.Close()
		}
		return fmt.Errorf("monitor: serving on %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("monitor: serving on %s: %w", addr, err)
	}
	return nil
}
