package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/task"
)

// lateObservers forwards events to observers added after the runner was
// built (the monitor and the terminal view need the runner first).
type lateObservers struct {
	obs atomic.Pointer[[]existence.Observer]
}

func (l *lateObservers) add(o existence.Observer) {
	for {
		old := l.obs.Load()
		var next []existence.Observer
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, o)
		if l.obs.CompareAndSwap(old, &next) {
			return
		}
	}
}

func (l *lateObservers) observe(e existence.Event) {
	if p := l.obs.Load(); p != nil {
		for _, o := range *p {
			o(e)
		}
	}
}

// serveMonitor serves the trio's monitor (dashboard, API, metrics) on
// o.http and prints its address. The returned stop shuts the server down.
func serveMonitor(o *runOptions, runner *existence.Runner, tasks task.Queue, reqs *requests.Queue, mem *memory.Memory, late *lateObservers, log *slog.Logger, stderr io.Writer) (stop func(), err error) {
	tok := o.httpToken.String()
	mon, err := monitor.New(monitor.Config{Runner: runner, Tasks: tasks, Requests: reqs, Memory: mem, Token: tok, Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.httpOptOut})
	if err != nil {
		return nil, err
	}
	late.add(mon.Observe)
	_, stop, err = listenMonitor(mon, o.http, tok, "trio", log, stderr)
	return stop, err
}

// listenMonitor serves mon on addr, prints "{who}: dashboard at URL" on
// stderr (with ?token= when there is a token) and returns what shuts it
// down (a graceful shutdown of 5 s, then a close) with the monitor's base
// URL, "http://HOST:PORT". Errors: the listen's.
func listenMonitor(mon *monitor.Monitor, addr, token, who string, log *slog.Logger, stderr io.Writer) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-http: %w", err)
	}
	srv := monitor.NewServer(addr, mon) // safe timeouts; closes mon on shutdown
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(who+": the monitor stopped", "err", err)
		}
	}()
	base = "http://" + ln.Addr().String()
	u := base + "/"
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	fmt.Fprintf(stderr, "%s: dashboard at %s (API under /api/, metrics at /metrics)\n", who, u)
	return base, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}
