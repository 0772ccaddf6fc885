package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
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
func serveMonitor(o *runOptions, runner *existence.Runner, tasks monitor.Tasks, reqs *requests.Queue, mem *memory.Memory, late *lateObservers, log *slog.Logger, stderr io.Writer) (stop func(), err error) {
	tok := o.httpToken.String()
	mon, err := monitor.New(monitor.Config{Runner: runner, Tasks: tasks, Requests: reqs, Memory: mem, Token: tok, Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.httpOptOut})
	if err != nil {
		return nil, err
	}
	late.add(mon.Observe)
	_, stop, err = listenMonitor(mon, o.http, o.httpToken, "trio", log, stderr)
	return stop, err
}

// listenMonitor serves mon on addr, prints "{who}: dashboard at URL" on
// stderr, never with the token (logs are read by others), but saying
// where to find it: the -http-token given, or, for "auto", the file it is
// written to (see writeTokenFile). It returns what shuts the server down
// (a graceful shutdown of 5 s, then a close) with the monitor's base URL,
// "http://HOST:PORT". Errors: the listen's, writing the token's file.
func listenMonitor(mon *monitor.Monitor, addr string, token envToken, who string, log *slog.Logger, stderr io.Writer) (base string, stop func(), err error) {
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
	signIn := ""
	switch {
	case token.auto:
		path, werr := writeTokenFile(ln.Addr(), token.String())
		if werr != nil {
			_ = ln.Close()
			<-done
			return "", nil, fmt.Errorf("-http-token auto: %w", werr)
		}
		signIn = "; sign in with the generated token in " + path + " (readable by you only), as ?token=TOKEN or Authorization: Bearer TOKEN"
	case token.String() != "":
		signIn = "; sign in with the -http-token (or $EXISTENCE_TOKEN) token, as ?token=TOKEN or Authorization: Bearer TOKEN"
	}
	fmt.Fprintf(stderr, "%s: dashboard at %s/ (API under /api/, metrics at /metrics%s)\n", who, base, signIn)
	return base, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}

// writeTokenFile writes a generated monitor token to
// $XDG_CONFIG_HOME/existence/monitor-PORT.token (os.UserConfigDir), mode
// 0600 in a directory of mode 0700, and returns its path.
func writeTokenFile(addr net.Addr, token string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "existence")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	port := "0"
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	}
	name := "monitor-" + port + ".token"
	if err := atomicfile.WriteFile(dir, name, []byte(token+"\n"), 0o600); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
