package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools/internal/testserver"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable clock for the backoff.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// events collects a Set's events and lets a test wait for one kind.
type events struct {
	mu   sync.Mutex
	list []mcptools.Event
	ch   chan mcptools.Event
}

func newEvents() *events { return &events{ch: make(chan mcptools.Event, 100)} }

func (e *events) observe(ev mcptools.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
	e.ch <- ev
}

// wait returns the next event of kind k, skipping others; it fails the
// test after 10 s.
func (e *events) wait(t *testing.T, k mcptools.EventKind) mcptools.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if ev.Kind == k {
				return ev
			}
		case <-timeout:
			require.Fail(t, "event missing", "no %s event in 10 s", k)
		}
	}
}

func (e *events) kinds() []mcptools.EventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []mcptools.EventKind
	for _, ev := range e.list {
		out = append(out, ev.Kind)
	}
	return out
}

// inMemory returns a Transport factory serving srv in process.
func inMemory(t testing.TB, srv func() *mcp.Server, wrap func(mcp.Transport) mcp.Transport) func() mcp.Transport {
	return func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv().Connect(context.Background(), st, nil)
		if !assert.NoError(t, err, "server connect") {
			return ct
		}
		t.Cleanup(func() { ss.Close() })
		if wrap != nil {
			return wrap(ct)
		}
		return ct
	}
}

func newServer() *mcp.Server { return testserver.New(false) }

// quiet discards a Set's log; the tests read its events instead.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func connect(t *testing.T, cfg mcptools.Config) *mcptools.Set {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	set, err := mcptools.Connect(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { set.Close() })
	return set
}

func toolByName(t *testing.T, set *mcptools.Set, name string) toolloop.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	require.Fail(t, "tool missing", "no tool %q", name)
	return nil
}

func names(tools []toolloop.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name())
	}
	return out
}

var allTools = []string{"t__big", "t__crash", "t__dotted_name_" /* + hash */, "t__echo", "t__fail", "t__image", "t__pid", "t__set_note", "t__slow"}

func TestInMemoryToolsAndCalls(t *testing.T) {
	ev := newEvents()
	set := connect(t, mcptools.Config{
		Servers:  []mcptools.ServerConfig{{Name: "t", Transport: inMemory(t, newServer, nil)}},
		Observer: ev.observe,
	})
	got := names(set.Tools())
	require.Len(t, got, len(allTools))
	for i, want := range allTools {
		assert.True(t, strings.HasPrefix(got[i], want), "tool %d: %s, want %s...", i, got[i], want)
	}
	echo := toolByName(t, set, "t__echo")
	assert.Equal(t, "[MCP server t] Echo the text.", echo.Description())
	assert.JSONEq(t, `{"type":"object","required":["text"],"properties":{"text":{"type":"string","description":"the text to echo"}},"additionalProperties":false}`, string(echo.Schema()))

	tests := []struct {
		tool, args, want string
		wantErr          error
		errText          string
	}{
		{tool: "t__echo", args: `{"text":"hello"}`, want: "hello"},
		{tool: got[2], args: `{}`, want: "dotted"},
		{tool: "t__image", args: ``, want: "a red dot:\n[image content (image/png, 7 bytes) left out: this agent takes text results only]"},
		{tool: "t__fail", args: `{}`, wantErr: mcptools.ErrToolError, errText: "disk on fire"},
		{tool: "t__echo", args: `{"text":5}`, errText: "validating"}, // the server validates too
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := toolByName(t, set, tc.tool).Call(t.Context(), json.RawMessage(tc.args))
			if tc.errText != "" {
				require.Error(t, err)
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				}
				assert.Contains(t, err.Error(), tc.errText)
				assert.Contains(t, err.Error(), `MCP server "t"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		})
	}
	assert.Equal(t, mcptools.EventConnected, ev.kinds()[0])
	assert.Contains(t, ev.kinds(), mcptools.EventCallFailed)
}

func TestNonTextOptIn(t *testing.T) {
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "t", Transport: inMemory(t, newServer, nil), NonText: true, Allow: []string{"image"}},
	}})
	out, err := toolByName(t, set, "t__image").Call(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, "a red dot:\n[image content: data:image/png;base64,UE5HREFUQQ==]", out)
}

func TestAllowList(t *testing.T) {
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "t", Transport: inMemory(t, newServer, nil), Allow: []string{"pid", "echo", "echo"}},
	}})
	assert.Equal(t, []string{"t__echo", "t__pid"}, names(set.Tools()))

	_, err := mcptools.Connect(t.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "t", Transport: inMemory(t, newServer, nil), Allow: []string{"echo", "rm_rf"}},
	}})
	require.ErrorIs(t, err, mcptools.ErrConfig)
	assert.Contains(t, err.Error(), `"rm_rf"`)
}

func TestNameCollisions(t *testing.T) {
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "one", Transport: inMemory(t, newServer, nil), Allow: []string{"echo"}},
		{Name: "two", Transport: inMemory(t, newServer, nil), Allow: []string{"echo"}},
	}})
	assert.Equal(t, []string{"one__echo", "two__echo"}, names(set.Tools()))
	// They sit next to a local tool of the same bare name in one executor.
	local := toolloop.NewTool("echo", "local echo", func(context.Context, struct{}) (string, error) { return "", nil })
	_, err := toolloop.New(toolloop.Config{Tools: append([]toolloop.Tool{local}, set.Tools()...)})
	require.NoError(t, err)

	for _, bad := range []mcptools.Config{
		{Servers: []mcptools.ServerConfig{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}},
		{Servers: []mcptools.ServerConfig{{Name: "my_fs", Command: "x"}}},
		{Servers: []mcptools.ServerConfig{{Name: "", Command: "x"}}},
		{Servers: []mcptools.ServerConfig{{Name: "a"}}},
		{Servers: []mcptools.ServerConfig{{Name: "a", Command: "x", URL: "http://127.0.0.1/"}}},
		{Servers: []mcptools.ServerConfig{{Name: "a", URL: "ftp://127.0.0.1/"}}},
	} {
		_, err := mcptools.Connect(t.Context(), bad)
		assert.ErrorIs(t, err, mcptools.ErrConfig, "%+v", bad.Servers)
	}
}

func TestTimeout(t *testing.T) {
	ev := newEvents()
	set := connect(t, mcptools.Config{
		Servers:  []mcptools.ServerConfig{{Name: "t", Transport: inMemory(t, newServer, nil), Timeout: mcptools.Duration(250 * time.Millisecond)}},
		Observer: ev.observe,
	})
	_, err := toolByName(t, set, "t__slow").Call(t.Context(), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, `MCP server "t": tool "slow": timed out after 250ms: context deadline exceeded`, err.Error())
	got := ev.wait(t, mcptools.EventCallFailed)
	assert.Equal(t, "slow", got.Tool)
	// The session survives a slow tool.
	out, err := toolByName(t, set, "t__echo").Call(t.Context(), json.RawMessage(`{"text":"still here"}`))
	require.NoError(t, err)
	assert.Equal(t, "still here", out)
}

func TestOversizedResult(t *testing.T) {
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "d", Transport: inMemory(t, newServer, nil), Allow: []string{"big"}},
		{Name: "s", Transport: inMemory(t, newServer, nil), Allow: []string{"big"}, MaxResultBytes: 10},
	}})
	tests := []struct {
		tool  string
		bytes int
		ok    bool
	}{
		{"d__big", 256 << 10, true},
		{"d__big", 256<<10 + 1, false},
		{"s__big", 10, true},
		{"s__big", 11, false},
	}
	for _, tc := range tests {
		out, err := toolByName(t, set, tc.tool).Call(t.Context(), json.RawMessage(`{"bytes":`+itoa(tc.bytes)+`}`))
		if tc.ok {
			require.NoError(t, err)
			assert.Len(t, out, tc.bytes)
			continue
		}
		require.ErrorIs(t, err, mcptools.ErrTooLarge)
		assert.Contains(t, err.Error(), "bytes, the limit is")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// rewriting wraps a client transport and, while on, replaces the result of
// every response that carries tool-call content with raw.
type rewriting struct {
	mcp.Transport
	raw *atomic.Value // string; "" = pass through
}

func (r rewriting) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return rewritingConn{c, r.raw}, err
}

type rewritingConn struct {
	mcp.Connection
	raw *atomic.Value
}

func (c rewritingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
		if raw, _ := c.raw.Load().(string); raw != "" && strings.Contains(string(resp.Result), `"content"`) {
			resp.Result = json.RawMessage(raw)
		}
	}
	return m, err
}

func TestMalformedResult(t *testing.T) {
	raw := &atomic.Value{}
	raw.Store("")
	wrap := func(tr mcp.Transport) mcp.Transport { return rewriting{tr, raw} }
	ev := newEvents()
	set := connect(t, mcptools.Config{
		Servers:  []mcptools.ServerConfig{{Name: "t", Transport: inMemory(t, newServer, wrap), Allow: []string{"echo"}}},
		Observer: ev.observe,
	})
	echo := toolByName(t, set, "t__echo")
	for _, bad := range []string{
		`{"content":[{"type":"hologram"}]}`,
		`{"content":"not a list"}`,
		`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
		`[1,2,3]`,
		`{"content":[null]}`,
	} {
		raw.Store(bad)
		_, err := echo.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `MCP server "t": tool "echo"`, bad)
		ev.wait(t, mcptools.EventCallFailed)
	}
	raw.Store("")
	out, err := echo.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "hi", out)
}

func TestStreamableHTTP(t *testing.T) {
	var auth atomic.Value
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the Set closes its standalone SSE stream
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "web", URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Allow: []string{"echo"}},
	}})
	out, err := toolByName(t, set, "web__echo").Call(t.Context(), json.RawMessage(`{"text":"over http"}`))
	require.NoError(t, err)
	assert.Equal(t, "over http", out)
	assert.Equal(t, "Bearer s3cret", auth.Load())
}

func TestServerDownAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ev := newEvents()
	_, err = mcptools.Connect(t.Context(), mcptools.Config{
		Servers:  []mcptools.ServerConfig{{Name: "gone", URL: "http://" + addr + "/mcp"}},
		Observer: ev.observe,
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "gone": connecting`)
	ev.wait(t, mcptools.EventConnectFailed)
}

// serverDir holds the test server once built (see serverBinary).
var serverDir atomic.Value // string

// serverBinary builds testdata/server once per test run.
var serverBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcptools-test")
	if err != nil {
		return "", err
	}
	serverDir.Store(dir)
	bin := filepath.Join(dir, "server")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/server").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	if os.Getenv(conformanceClientEnv) != "" {
		os.Exit(conformanceClient(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO")))
	}
	code := m.Run()
	if dir, ok := serverDir.Load().(string); ok {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func stdioServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command to build the test server: install Go")
	}
	bin, err := serverBinary()
	require.NoError(t, err)
	return bin
}

func TestStdioSubprocess(t *testing.T) {
	bin := stdioServer(t)
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "sub", Command: bin}}})
	assert.Len(t, set.Tools(), len(allTools))
	out, err := toolByName(t, set, "sub__echo").Call(t.Context(), json.RawMessage(`{"text":"from a subprocess"}`))
	require.NoError(t, err)
	assert.Equal(t, "from a subprocess", out)
	pid, err := toolByName(t, set, "sub__pid").Call(t.Context(), nil)
	require.NoError(t, err)
	assert.NotEqual(t, itoa(os.Getpid()), pid)

	// A command that cannot start is an error from Connect.
	_, err = mcptools.Connect(t.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "nope", Command: bin, Env: map[string]string{"TESTSERVER_FAIL_START": "1"}},
	}})
	require.Error(t, err)
}

func TestStdioCrashAndRestartWithBackoff(t *testing.T) {
	bin := stdioServer(t)
	clk := newClock()
	ev := newEvents()
	failFile := filepath.Join(t.TempDir(), "refuse")
	set := connect(t, mcptools.Config{
		Servers:    []mcptools.ServerConfig{{Name: "sub", Command: bin, Env: map[string]string{"TESTSERVER_FAIL_IF_EXISTS": failFile}}},
		MinBackoff: time.Second, MaxBackoff: 3 * time.Second,
		Now:      clk.Now,
		Observer: ev.observe,
	})
	pid := toolByName(t, set, "sub__pid")
	first, err := pid.Call(t.Context(), nil)
	require.NoError(t, err)

	// The server crashes mid-call: the call fails, it does not hang.
	_, err = toolByName(t, set, "sub__crash").Call(t.Context(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "sub": tool "crash": the connection to the server was lost during the call`)
	ev.wait(t, mcptools.EventCrashed)

	// Within the backoff, calls fail at once.
	_, err = pid.Call(t.Context(), nil)
	var down *mcptools.DownError
	require.ErrorAs(t, err, &down)
	assert.ErrorIs(t, err, mcptools.ErrDown)
	assert.Equal(t, time.Second, down.Retry)
	assert.Contains(t, err.Error(), `MCP server "sub" is down`)

	// After it, the server is started again; a failed start doubles the
	// backoff, up to the maximum.
	require.NoError(t, os.WriteFile(failFile, nil, 0o600))
	for _, wait := range []time.Duration{2 * time.Second, 3 * time.Second, 3 * time.Second} {
		clk.Advance(down.Retry)
		_, err = pid.Call(t.Context(), nil)
		require.Error(t, err)
		ev.wait(t, mcptools.EventConnectFailed)
		_, err = pid.Call(t.Context(), nil)
		require.ErrorAs(t, err, &down)
		assert.Equal(t, wait, down.Retry)
	}
	require.NoError(t, os.Remove(failFile))
	clk.Advance(down.Retry)
	second, err := pid.Call(t.Context(), nil)
	require.NoError(t, err)
	assert.NotEqual(t, first, second, "a new process")
	ev.wait(t, mcptools.EventRestarted)

	// A successful call reset the backoff.
	_, err = toolByName(t, set, "sub__crash").Call(t.Context(), nil)
	require.Error(t, err)
	ev.wait(t, mcptools.EventCrashed)
	_, err = pid.Call(t.Context(), nil)
	require.ErrorAs(t, err, &down)
	assert.Equal(t, time.Second, down.Retry)
}

func TestClosed(t *testing.T) {
	set, err := mcptools.Connect(t.Context(), mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "t", Transport: inMemory(t, newServer, nil), Allow: []string{"echo"}},
	}})
	require.NoError(t, err)
	require.NoError(t, set.Close())
	_, err = set.Tools()[0].Call(t.Context(), json.RawMessage(`{"text":"x"}`))
	assert.ErrorIs(t, err, mcptools.ErrClosed)
}

// TestExecutorNeverHangs runs a goal whose tools time out, fail and
// succeed: the goal ends, the model reads the failures, and each call is
// an event.
func TestExecutorNeverHangs(t *testing.T) {
	// "s" times out its calls after 20 ms (its slow tool never returns);
	// "t" keeps the default timeout, so that a loaded machine cannot turn
	// its quick answers into timeouts.
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{
		{Name: "s", Transport: inMemory(t, newServer, nil), Timeout: mcptools.Duration(20 * time.Millisecond)},
		{Name: "t", Transport: inMemory(t, newServer, nil)},
	}})
	model := llmtest.NewFake(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "s__slow", Arguments: json.RawMessage(`{}`)}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "t__fail", Arguments: json.RawMessage(`{}`)}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "t__echo", Arguments: json.RawMessage(`{"text":"ok"}`)}}},
		llmtest.Reply{Text: "done"},
	)
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: set.Tools()})
	require.NoError(t, err)
	var calls []event.ToolCallInfo
	out, err := exec.Execute(t.Context(), existence.Assignment{
		Goal:   identity.Goal{Objective: "use the tools"},
		Report: func(e event.Event) { calls = append(calls, *e.Tool) },
	})
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	require.Len(t, calls, 3)
	assert.True(t, calls[0].Failed)
	assert.Contains(t, calls[0].Result, "timed out after 20ms")
	assert.True(t, calls[1].Failed)
	assert.Contains(t, calls[1].Result, "Error: MCP server \"t\": tool \"fail\": tool reported an error: disk on fire")
	assert.False(t, calls[2].Failed)
	assert.Equal(t, "ok", calls[2].Result)
}

// TestHTTPServerDownAndBack stops a streamable HTTP server after the
// session started: calls fail and the server is marked down; once it is
// back (a new process that knows nothing of the old session) and the
// backoff has passed, a new session is made.
func TestHTTPServerDownAndBack(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	serve := func(l net.Listener) *http.Server {
		hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)}
		go hs.Serve(l)
		return hs
	}
	hs := serve(l)
	clk := newClock()
	ev := newEvents()
	set := connect(t, mcptools.Config{
		Servers: []mcptools.ServerConfig{{Name: "web", URL: "http://" + addr, Allow: []string{"echo"}}},
		Now:     clk.Now, Observer: ev.observe,
	})
	echo := toolByName(t, set, "web__echo")
	_, err = echo.Call(t.Context(), json.RawMessage(`{"text":"a"}`))
	require.NoError(t, err)

	require.NoError(t, hs.Close())
	_, err = echo.Call(t.Context(), json.RawMessage(`{"text":"b"}`))
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "the connection to the server was lost")
	ev.wait(t, mcptools.EventCrashed)
	_, err = echo.Call(t.Context(), json.RawMessage(`{"text":"c"}`))
	assert.ErrorIs(t, err, mcptools.ErrDown)

	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	hs = serve(l)
	defer hs.Close()
	clk.Advance(time.Minute)
	out, err := echo.Call(t.Context(), json.RawMessage(`{"text":"back"}`))
	require.NoError(t, err)
	assert.Equal(t, "back", out)
	ev.wait(t, mcptools.EventRestarted)

	// A server that restarts between two calls has forgotten the session:
	// the call fails, and the next one after the backoff starts a new one.
	require.NoError(t, hs.Close())
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	hs = serve(l)
	defer hs.Close()
	_, err = echo.Call(t.Context(), json.RawMessage(`{"text":"d"}`))
	require.Error(t, err)
	t.Log(err)
	ev.wait(t, mcptools.EventCrashed)
	clk.Advance(time.Minute)
	out, err = echo.Call(t.Context(), json.RawMessage(`{"text":"again"}`))
	require.NoError(t, err)
	assert.Equal(t, "again", out)
}

// TestDuplicateToolNameRefused: a stdio server that lists two tools with
// one name is refused at connection, naming the tool; the two are never
// merged into one, whichever the allow-list keeps.
func TestDuplicateToolNameRefused(t *testing.T) {
	bin := stdioServer(t)
	for _, allow := range [][]string{nil, {"echo"}, {"pid"}} {
		_, err := mcptools.Connect(t.Context(), mcptools.Config{Logger: quiet, Servers: []mcptools.ServerConfig{
			{Name: "sub", Command: bin, Allow: allow, Env: map[string]string{"TESTSERVER_DUPLICATE_TOOL": "echo"}},
		}})
		require.ErrorIs(t, err, mcptools.ErrDuplicateTool, "allow %v", allow)
		assert.ErrorIs(t, err, mcptools.ErrMalformed)
		assert.Contains(t, err.Error(), `MCP server "sub"`)
		assert.Contains(t, err.Error(), `two tools named "echo" ("Echo the text." and "Another tool with the same name.")`)
	}
	// The same server without the duplicate connects.
	set := connect(t, mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "sub", Command: bin, Allow: []string{"echo"}}}})
	assert.Len(t, set.Tools(), 1)
}
