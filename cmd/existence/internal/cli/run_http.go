package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/task"
)

// serveMonitor serves the trio's monitor (dashboard, API, metrics) on
// o.http and prints its address. The returned stop shuts the server down.
func serveMonitor(o *runOptions, runner *existence.Runner, tasks task.Queue, reqs *requests.Queue, mem *memory.Memory, log *slog.Logger, stderr io.Writer) (stop func(), err error) {
	tok := o.httpToken.String()
	mon, err := monitor.New(monitor.Config{Runner: runner, Tasks: tasks, Requests: reqs, Memory: mem, Token: tok, Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.httpOptOut})
	if err != nil {
		return nil, err
	}
	cancel := runner.Subscribe(mon.Observe)
	_, stopServing, err := listenMonitor(mon, o.http, tok, "trio", log, stderr)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { stopServing(); cancel() }, nil
}

// listenMonitor serves mon on addr (monitor.Serve: safe timeouts, a
// graceful shutdown of 5 s, then a close), prints "{who}: dashboard at
// URL" on stderr (with ?token= when there is a token) and returns the
// monitor's base URL, "http://HOST:PORT", with what shuts it down.
// Errors: the listen's.
func listenMonitor(mon *monitor.Monitor, addr, token, who string, log *slog.Logger, stderr io.Writer) (base string, stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = monitor.Serve(ctx, addr, mon, monitor.ServeConfig{Ready: func(a net.Addr) { ready <- a }, ShutdownTimeout: 5 * time.Second, Logger: log})
		if serveErr != nil && ctx.Err() == nil {
			log.Error(who+": the monitor stopped", "err", serveErr)
		}
	}()
	select {
	case <-done:
		cancel()
		return "", nil, fmt.Errorf("-http: %w", serveErr)
	case a := <-ready:
		base = "http://" + a.String()
	}
	u := base + "/"
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	fmt.Fprintf(stderr, "%s: dashboard at %s (API under /api/, metrics at /metrics)\n", who, u)
	return base, func() { cancel(); <-done }, nil
}
