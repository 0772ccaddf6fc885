package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	a2aproto "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/existence-loop/sdk/a2aserver"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/task"
)

// serveMonitor serves the trio's monitor (dashboard, API, metrics), A2A
// and MCP (see withProtocols) on o.http and prints its address. The
// returned stop shuts the server down.
func serveMonitor(o *runOptions, rn *runner.Runner, tasks task.Queue, reqs *requests.Queue, mem *memory.Memory, events *mcpserver.EventLog, profile func(*existence.Agent) a2aserver.Profile, log *slog.Logger, stderr io.Writer) (stop func(), err error) {
	tok := o.httpToken.String()
	mon, err := monitor.New(monitor.Config{Runner: rn, Tasks: tasks, Requests: reqs, Memory: mem, Token: tok, Logger: log,
		Addr: o.http, InsecureNoTokenBehindProxy: o.httpOptOut})
	if err != nil {
		return nil, err
	}
	h, err := withProtocols(mon, protocolConfig{Agents: rn, Tasks: tasks, Requests: reqs, Events: events, Profile: profile, Name: "existence-loop-trio", Logger: log})
	if err != nil {
		return nil, err
	}
	cancel := rn.Subscribe(mon.Observe)
	_, stopServing, err := listenMonitor(mon, h, o.http, o.httpToken, "trio", log, stderr)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { stopServing(); cancel() }, nil
}

// protocolConfig is what withProtocols serves.
type protocolConfig struct {
	Agents   hostaccess.Agents
	Tasks    task.Queue      // nil: no A2A (it needs the task queue)
	Requests *requests.Queue // nil: MCP's request tools answer "not configured"
	Events   *mcpserver.EventLog
	Profile  func(*existence.Agent) a2aserver.Profile
	Name     string // the MCP server's name
	Logger   *slog.Logger
}

// withProtocols returns mon with, behind its checks (hostaccess.Auth: the
// same token and Host rules), A2A at /a2a and the agent card at
// /.well-known/agent-card.json (a2aserver; only with a task queue), and
// MCP over streamable HTTP at /mcp (mcpserver).
func withProtocols(mon *monitor.Monitor, cfg protocolConfig) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/", mon)
	if cfg.Tasks != nil {
		a2a, err := a2aserver.New(a2aserver.Config{Agents: cfg.Agents, Tasks: cfg.Tasks, Profile: cfg.Profile, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		a2a.Mount(mux, mon.Auth())
	}
	srv, err := mcpserver.New(mcpserver.Config{Agents: cfg.Agents, Tasks: cfg.Tasks, Requests: mcpRequests(cfg.Requests), Events: cfg.Events, Name: cfg.Name, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	mh, err := srv.Handler(mcpserver.HTTPConfig{Auth: mon.Auth()})
	if err != nil {
		return nil, err
	}
	mux.Handle("/mcp", mh)
	return mux, nil
}

// mcpRequests is q as mcpserver.Requests, nil when q is nil (a typed nil
// would not read as "not configured").
func mcpRequests(q *requests.Queue) mcpserver.Requests {
	if q == nil {
		return nil
	}
	return q
}

// toolSkills describes tools as A2A skills, one per tool.
func toolSkills(tools []toolloop.Tool) []a2aproto.AgentSkill {
	out := make([]a2aproto.AgentSkill, 0, len(tools))
	for _, t := range tools {
		out = append(out, a2aproto.AgentSkill{ID: t.Name(), Name: t.Name(), Description: t.Description(), Tags: []string{"tool"}})
	}
	return out
}

// listenMonitor serves h (mon, or mon with the protocols: withProtocols) on addr (monitor.Serve: safe timeouts, a
// graceful shutdown of 5 s, then a close), prints "{who}: dashboard at
// URL" on stderr, never with the token (logs are read by others), but
// saying where to find it: the -http-token given, or, for "auto", the file
// it is written to (see writeTokenFile). It returns the monitor's base URL,
// "http://HOST:PORT", with what shuts it down. Errors: the listen's,
// writing the token's file.
func listenMonitor(mon *monitor.Monitor, h http.Handler, addr string, token envToken, who string, log *slog.Logger, stderr io.Writer) (base string, stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		defer mon.Close() // ends the event streams, which a graceful shutdown waits for
		serveErr = monitor.Serve(ctx, addr, h, monitor.ServeConfig{Ready: func(a net.Addr) { ready <- a }, ShutdownTimeout: 5 * time.Second, Logger: log})
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
	protocols := ""
	if h != http.Handler(mon) {
		protocols = ", A2A at /a2a with the agent card at /.well-known/agent-card.json, MCP at /mcp"
	}
	fmt.Fprintf(stderr, "%s: dashboard at %s/ (API under /api/, metrics at /metrics%s%s)\n", who, base, protocols, signIn)
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
