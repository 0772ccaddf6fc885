package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/internal/backoff"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// Errors of tool calls and of [Connect]; the returned errors wrap them
// (use [errors.Is]).
var (
	// ErrClosed: the [Set] was closed.
	ErrClosed = errors.New("mcptools: closed")
	// ErrTooLarge: a result is above [ServerConfig].MaxResultBytes.
	ErrTooLarge = errors.New("result too large")
	// ErrMalformed: the server's result is not a usable tool result.
	ErrMalformed = errors.New("malformed result")
	// ErrToolError: the server ran the tool and reported an error
	// (isError in the result); the error's text is the server's message.
	ErrToolError = errors.New("tool reported an error")
	// ErrDown: the server crashed or could not be reached and is waiting
	// for its backoff to pass ([*DownError]).
	ErrDown = errors.New("server down")
	// ErrDuplicateTool: a server lists two tools with one name, so that
	// which one a call runs is unknown; [Connect] refuses the server (the
	// tools are never merged). It matches [ErrMalformed] too.
	ErrDuplicateTool = fmt.Errorf("%w: two tools with one name", ErrMalformed)
)

// DownError is the error of a call to a server that crashed or could not be
// reached, made before its backoff passed. It matches [ErrDown].
type DownError struct {
	// Server is the server's name.
	Server string
	// Retry is how long until the next attempt to start it.
	Retry time.Duration
	// Err is the failure that took it down.
	Err error
}

// Error names the server, the failure that took it down and the time
// until the next restart attempt, rounded to the second.
func (e *DownError) Error() string {
	return fmt.Sprintf("MCP server %q is down (%v); next restart attempt in %s",
		e.Server, e.Err, e.Retry.Round(time.Second))
}

// Unwrap returns the failure that took the server down.
func (e *DownError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrDown].
func (e *DownError) Is(target error) bool { return target == ErrDown }

// Set is a connected set of MCP servers whose tools are offered to a
// toolloop.Executor. Create it with [Connect]; pass [Set.Tools] in
// toolloop.Config.Tools; [Set.Close] it when done. It is safe for
// concurrent use: several agents' executors may share one Set.
type Set struct {
	cfg     Config
	servers []*server
	tools   []toolloop.Tool
}

// Connect starts (stdio) or reaches (HTTP) every configured server
// concurrently, performs the MCP initialize handshake, lists each server's
// tools and keeps those its allow-list permits.
//
// It returns an error, having closed whatever it started, when the
// configuration is invalid ([ErrConfig]), when a server cannot be started,
// initialised or listed within Config.ConnectTimeout, when a server lists
// two tools with one name ([ErrDuplicateTool]), when an allow-listed tool
// is not offered, or when a tool's name or input schema is unusable.
// Later failures never come back from Connect: they end the tool call that
// meets them (see [Set.Tools]).
func Connect(ctx context.Context, cfg Config) (*Set, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Set{cfg: cfg}
	for i := range cfg.Servers {
		s.servers = append(s.servers, &server{set: s, cfg: cfg.Servers[i]})
	}
	lists := make([][]*mcp.Tool, len(s.servers))
	var g errgroup.Group
	for i, srv := range s.servers {
		g.Go(func() error {
			sess, err := srv.session(ctx)
			if err != nil {
				return err
			}
			lctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
			defer cancel()
			for t, err := range sess.Tools(lctx, nil) {
				if err != nil {
					return fmt.Errorf("MCP server %q: listing tools: %w", srv.cfg.Name, err)
				}
				lists[i] = append(lists[i], t)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		s.Close()
		return nil, err
	}
	names := map[string]string{} // model name -> server/tool, for collisions
	for i, srv := range s.servers {
		tools, err := srv.offer(lists[i])
		if err != nil {
			s.Close()
			return nil, err
		}
		for _, t := range tools {
			if prev, dup := names[t.Name()]; dup {
				s.Close()
				return nil, fmt.Errorf("%w: tool name %q given to both %s and %s/%s", ErrConfig, t.Name(), prev, t.server.cfg.Name, t.remote)
			}
			names[t.Name()] = t.server.cfg.Name + "/" + t.remote
			s.tools = append(s.tools, t)
		}
	}
	return s, nil
}

// Tools returns the allowed tools of every server, in server order and, within
// a server, sorted by name, as toolloop.Tool values named
// "{server}__{tool}" ([Separator]). Their descriptions and input schemas
// are the server's, cleaned once at listing: every code point of the SDK's
// unsafe-character rule (internal/runes, applied by prompt.Clean) is
// removed from the description and from every string of the schema, and a
// tool whose schema names a member with one is refused at [Connect]
// ([ErrMalformed]). Their Call:
//
//   - calls the server's tool with the arguments (already validated by the
//     executor against the schema), under [ServerConfig].Timeout;
//   - returns the text of the result, other content being rendered or
//     left out as [ServerConfig].NonText says, without the unsafe rule's
//     code points;
//   - returns an error (which the executor shows the model as "Error: ..."
//     and counts as a failed tool call) when the server is down or
//     restarting ([*DownError]), crashes during the call, times out, answers
//     with a protocol error, a malformed result ([ErrMalformed]), a result
//     above MaxResultBytes ([ErrTooLarge]) or a tool error
//     ([ErrToolError]). Each such failure is also an [EventCallFailed].
//
// A call never waits past its timeout or its ctx, whatever the server does.
// A stdio server that exited is started again at the next call after its
// backoff (which doubles after each failure in a row, from
// Config.MinBackoff to Config.MaxBackoff, and resets after a successful
// call).
func (s *Set) Tools() []toolloop.Tool { return append([]toolloop.Tool(nil), s.tools...) }

// Close ends every session and stops every stdio server (closing its
// standard input, then SIGTERM after 5 s). Calls after Close fail with
// [ErrClosed].
func (s *Set) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.close())
	}
	return errors.Join(errs...)
}

func (s *Set) emit(e Event) {
	e.Time = s.cfg.Now()
	level := eventLevel(e.Kind)
	s.cfg.Logger.Log(context.Background(), level, "mcp: "+e.String())
	if s.cfg.Observer != nil {
		s.cfg.Observer(e)
	}
}

// server is one configured server and its current session.
type server struct {
	set *Set
	cfg ServerConfig

	mu       sync.Mutex
	sess     *mcp.ClientSession // nil when not connected
	dialing  chan struct{}      // closed when the dial in progress ends
	failures int                // failures in a row, for the backoff
	nextTry  time.Time          // no new dial before this
	lastErr  error
	closed   bool

	inflight map[string]int // agent id -> tool calls in progress (elicit.go)

	subs     subscriptions // the resources subscribed to (resources.go)
	taskOnly taskOnly      // tools that require task augmentation (tasks.go)
}

// session returns the live session, dialling the server when there is none
// and its backoff has passed. Calls wait for a dial in progress, or ctx.
func (srv *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		srv.mu.Lock()
		switch {
		case srv.closed:
			srv.mu.Unlock()
			return nil, ErrClosed
		case srv.sess != nil:
			s := srv.sess
			srv.mu.Unlock()
			return s, nil
		case srv.dialing != nil:
			ch := srv.dialing
			srv.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if now := srv.set.cfg.Now(); now.Before(srv.nextTry) {
			err := &DownError{Server: srv.cfg.Name, Retry: srv.nextTry.Sub(now), Err: srv.lastErr}
			srv.mu.Unlock()
			return nil, err
		}
		ch := make(chan struct{})
		srv.dialing = ch
		restart := srv.lastErr != nil
		srv.mu.Unlock()

		sess, err := srv.dial(ctx)

		srv.mu.Lock()
		srv.dialing = nil
		close(ch)
		if err == nil && srv.closed {
			sess.Close()
			err = ErrClosed
		}
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				srv.downLocked(err)
			}
			srv.mu.Unlock()
			srv.set.emit(Event{Kind: EventConnectFailed, Server: srv.cfg.Name, Err: err})
			return nil, err
		}
		srv.sess = sess
		srv.mu.Unlock()
		go srv.watch(sess)
		kind := EventConnected
		if restart {
			kind = EventRestarted
		}
		srv.set.emit(Event{Kind: kind, Server: srv.cfg.Name})
		return sess, nil
	}
}

// downLocked records a failure: the backoff doubles with each in a row.
func (srv *server) downLocked(err error) {
	srv.failures++
	wait := backoff.Nth(srv.failures, srv.set.cfg.MinBackoff, srv.set.cfg.MaxBackoff)
	srv.nextTry = srv.set.cfg.Now().Add(wait)
	srv.lastErr = err
}

// dial starts or reaches the server and performs the initialize handshake,
// within ConnectTimeout and ctx.
func (srv *server) dial(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, srv.set.cfg.ConnectTimeout)
	defer cancel()
	var t mcp.Transport
	switch {
	case srv.cfg.Transport != nil:
		t = taskTransport{srv.cfg.Transport(), &srv.taskOnly}
	case srv.cfg.URL != "":
		// The SDK's default retries: a response stream the server closes
		// early is resumed with GET and Last-Event-ID, after the server's
		// SSE retry delay (SEP-1699). A server that is down is not
		// retried here: the POST fails and our backoff decides. The
		// standalone GET stream carries what a server sends outside a
		// response: elicitations, resource updates.
		t = &mcp.StreamableClientTransport{
			Endpoint: srv.cfg.URL,
			HTTPClient: &http.Client{Transport: headers{srv.cfg.Headers, taskSniffer{&srv.taskOnly,
				middleware.LimitReplies(http.DefaultTransport, replyLimit(srv.cfg.MaxResultBytes))}}},
		}
	default:
		// Not exec.CommandContext: the process outlives the dial's ctx.
		cmd := exec.Command(srv.cfg.Command, srv.cfg.Args...)
		cmd.Dir = srv.cfg.Dir
		cmd.Env = os.Environ()
		keys := make([]string, 0, len(srv.cfg.Env))
		for k := range srv.cfg.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd.Env = append(cmd.Env, k+"="+srv.cfg.Env[k])
		}
		cmd.Stderr = srv.cfg.Stderr
		t = taskTransport{&mcp.CommandTransport{Command: cmd}, &srv.taskOnly}
	}
	// Setting ElicitationHandler declares the elicitation capability.
	client := mcp.NewClient(&mcp.Implementation{Name: "existence-loop-mcptools", Version: "1"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ResourceUpdatedHandler: srv.subs.updated,
			ElicitationHandler: srv.elicit})
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: connecting: %w", srv.cfg.Name, err)
	}
	return sess, nil
}

// watch waits for a session to end; an end that Close did not cause is a
// crash, and the next call restarts the server after the backoff.
func (srv *server) watch(sess *mcp.ClientSession) {
	werr := sess.Wait()
	srv.mu.Lock()
	if srv.sess != sess || srv.closed {
		srv.mu.Unlock()
		return
	}
	srv.sess = nil
	err := errors.New("the server ended the session")
	if werr != nil {
		err = fmt.Errorf("the server ended the session: %w", werr)
	}
	srv.downLocked(err)
	retry := srv.nextTry.Sub(srv.set.cfg.Now())
	srv.mu.Unlock()
	srv.set.emit(Event{Kind: EventCrashed, Server: srv.cfg.Name, Err: err,
		Text: fmt.Sprintf("next restart attempt in %s", retry.Round(time.Millisecond))})
}

// lost drops sess after a call found its connection closed (before watch
// noticed), so that the next call restarts the server.
func (srv *server) lost(sess *mcp.ClientSession, err error) {
	srv.mu.Lock()
	if srv.sess != sess || srv.closed {
		srv.mu.Unlock()
		return
	}
	srv.sess = nil
	srv.downLocked(err)
	srv.mu.Unlock()
	sess.Close()
	srv.set.emit(Event{Kind: EventCrashed, Server: srv.cfg.Name, Err: err})
}

// succeeded resets the backoff after a successful call.
func (srv *server) succeeded() {
	srv.mu.Lock()
	srv.failures = 0
	srv.lastErr = nil
	srv.mu.Unlock()
}

func (srv *server) close() error {
	srv.mu.Lock()
	srv.closed = true
	sess := srv.sess
	srv.sess = nil
	srv.mu.Unlock()
	if sess == nil {
		return nil
	}
	if err := sess.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("MCP server %q: closing: %w", srv.cfg.Name, err)
	}
	return nil
}

// replyLimit caps one HTTP reply of a server whose results are capped at
// maxResult bytes (the standalone event stream is off, so each reply
// answers one request): 8 × maxResult (JSON escapes), at least 4 MiB for
// long tool lists, plus middleware.ReplySlack. A longer reply fails the call
// with an llm.ErrReplyTooLarge.
func replyLimit(maxResult int) int64 {
	return max(8*int64(maxResult), 4<<20) + middleware.ReplySlack
}

// headers is an http.RoundTripper that adds fixed headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}
