package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/internal/atomicfile"
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
	_, stopServing, err := listenMonitor(mon, o.http, o.httpToken, "trio", log, stderr)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { stopServing(); cancel() }, nil
}

// listenMonitor serves mon on addr (monitor.Serve: safe timeouts, a
// graceful shutdown of 5 s, then a close), prints "{who}: dashboard at
// URL" on stderr, never with the token (logs are read by others), but
// saying where to find it: the -http-token given, or, for "auto", the file
// it is written to (see writeTokenFile). It returns the monitor's base URL,
// "http://HOST:PORT", with what shuts it down. Errors: the listen's,
// writing the token's file.
func listenMonitor(mon *monitor.Monitor, addr string, token envToken, who string, log *slog.Logger, stderr io.Writer) (base string, stop func(), err error) {
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
	var bound net.Addr
	select {
	case <-done:
		cancel()
		return "", nil, fmt.Errorf("-http: %w", serveErr)
	case bound = <-ready:
	}
	stop = func() { cancel(); <-done }
	base = "http://" + bound.String()
	signIn := ""
	switch {
	case token.auto:
		path, werr := writeTokenFile(bound, token.String())
		if werr != nil {
			stop()
			return "", nil, fmt.Errorf("-http-token auto: %w", werr)
		}
		signIn = "; sign in with the generated token in " + path + " (readable by you only), as ?token=TOKEN or Authorization: Bearer TOKEN"
	case token.String() != "":
		signIn = "; sign in with the -http-token (or $EXISTENCE_TOKEN) token, as ?token=TOKEN or Authorization: Bearer TOKEN"
	}
	fmt.Fprintf(stderr, "%s: dashboard at %s/ (API under /api/, metrics at /metrics%s)\n", who, base, signIn)
	return base, stop, nil
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
