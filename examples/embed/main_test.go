package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/filestore"
)

// clearEnv empties the variables the flags read.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OLLAMA_HOST", "OPENAI_BASE_URL", "EXISTENCE_TOKEN"} {
		t.Setenv(k, "")
	}
}

func TestParseFlagsDefaults(t *testing.T) {
	clearEnv(t)
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, &options{
		addr:       "127.0.0.1:8080",
		provider:   "ollama",
		model:      "qwen3.5:9b",
		llmTimeout: 180 * time.Second,
		state:      "./embed-state",
		workspace:  "./embed-workspace",
		heartbeat:  6 * time.Second,
		id:         "agent",
		name:       "Wren",
	}, o)
}

// resolvedURL returns the server URL the adapter resolves for o.
func resolvedURL(t *testing.T, o *options) string {
	t.Helper()
	_, url, err := newModel(o)
	require.NoError(t, err)
	return url
}

func TestParseFlagsDefaultURL(t *testing.T) {
	clearEnv(t)
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:11434", resolvedURL(t, o))
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, o *options)
	}{
		{"all flags", nil,
			[]string{"-http", ":9000", "-provider", "openai", "-llm-url", "http://gpu:8000/v1", "-model", "m", "-llm-timeout", "1m",
				"-store", "s", "-workspace", "w", "-heartbeat", "2s", "-http-token", "tok", "-id", "scout", "-name", "Cedar", "-v"},
			func(t *testing.T, o *options) {
				assert.Equal(t, &options{addr: ":9000", provider: "openai", llmURL: "http://gpu:8000/v1", model: "m", llmTimeout: time.Minute,
					state: "s", workspace: "w", heartbeat: 2 * time.Second, token: "tok", id: "scout", name: "Cedar", verbose: true}, o)
			}},
		{"OLLAMA_HOST", map[string]string{"OLLAMA_HOST": "http://gpu:11434"}, nil,
			func(t *testing.T, o *options) { assert.Equal(t, "http://gpu:11434", resolvedURL(t, o)) }},
		{"-llm-url beats OLLAMA_HOST", map[string]string{"OLLAMA_HOST": "http://gpu:11434"}, []string{"-llm-url", "http://cpu:11434"},
			func(t *testing.T, o *options) { assert.Equal(t, "http://cpu:11434", resolvedURL(t, o)) }},
		{"OPENAI_BASE_URL", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, []string{"-provider", "openai"},
			func(t *testing.T, o *options) { assert.Equal(t, "http://127.0.0.1:8080/v1", resolvedURL(t, o)) }},
		{"EXISTENCE_TOKEN", map[string]string{"EXISTENCE_TOKEN": "from-env"}, nil,
			func(t *testing.T, o *options) { assert.Equal(t, "from-env", o.token) }},
		{"-http-token beats EXISTENCE_TOKEN", map[string]string{"EXISTENCE_TOKEN": "from-env"}, []string{"-http-token", "from-flag"},
			func(t *testing.T, o *options) { assert.Equal(t, "from-flag", o.token) }},
		{"-http-token= turns authentication off", map[string]string{"EXISTENCE_TOKEN": "from-env"}, []string{"-http-token="},
			func(t *testing.T, o *options) { assert.Empty(t, o.token) }},
		// The old names (-addr, -state, -token) still work for one release.
		{"old names", map[string]string{"EXISTENCE_TOKEN": "from-env"}, []string{"-addr", ":9001", "-state", "old", "-token="},
			func(t *testing.T, o *options) {
				assert.Equal(t, ":9001", o.addr)
				assert.Equal(t, "old", o.state)
				assert.Empty(t, o.token, "-token= still turns authentication off")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			o, err := parseFlags(tc.args, io.Discard)
			require.NoError(t, err)
			tc.check(t, o)
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-provider", "anthropic"}, `-provider "anthropic": want ollama or openai`},
		{[]string{"-provider", "openai"}, "-provider openai needs -llm-url"},
		{[]string{"-heartbeat", "0s"}, "-heartbeat and -llm-timeout must be positive"},
		{[]string{"-llm-timeout", "-1s"}, "-heartbeat and -llm-timeout must be positive"},
		{[]string{"-id", "../x"}, "-id:"},
		{[]string{"-name", "  "}, "-name must not be blank"},
		{[]string{"-http", "8080"}, `-http "8080"`},
		{[]string{"-http-token", "two words"}, "-http-token (or $EXISTENCE_TOKEN) must not contain white space"},
		{[]string{"-store", ""}, "-store and -workspace must not be empty"},
		{[]string{"serve"}, "unexpected arguments: [serve]"},
		{[]string{"-port", "1"}, "flag provided but not defined: -port"},
		{[]string{"-heartbeat", "soon"}, `invalid value "soon" for flag -heartbeat`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			clearEnv(t)
			_, err := parseFlags(tc.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestRunBadFlags(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{{"-provider", "nope"}, {"-bogus"}, {"-heartbeat", "-6s"}, {"extra"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		assert.Equal(t, 2, code, "%v", args)
		assert.NotEmpty(t, stderr.String(), "%v: says why", args)
		assert.Empty(t, stdout.String())
	}
}

func TestRunHelp(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, io.Discard, &stderr))
	for _, name := range []string{"-http ", "-llm-url", "-provider", "-model", "-store", "-workspace", "-heartbeat", "-http-token", "$EXISTENCE_TOKEN"} {
		assert.Contains(t, stderr.String(), name)
	}
	for _, old := range []string{"\n  -addr ", "\n  -state ", "\n  -token "} {
		assert.NotContains(t, stderr.String(), old, "help lists the current names only")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers; it signals
// the URL of the "listening on http://..." line on listening.
type lockedBuffer struct {
	listening chan string // set before the first Write, never changed

	mu       sync.Mutex
	buf      bytes.Buffer
	signaled bool
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, rest, ok := strings.Cut(string(p), "listening on "); ok && b.listening != nil && !b.signaled {
		url, _, _ := strings.Cut(rest, ";")
		b.listening <- url
		b.signaled = true
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fakeOllama answers every /api/chat request with goal as the reply text:
// a valid existence-cycle reply, and a non-empty final answer for the tool
// loop.
func fakeOllama(t *testing.T, goal string) *httptest.Server {
	text, err := json.Marshal(map[string]string{"action": "goal", "content": goal, "reasoning": "it is useful"})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"model":             "fake",
			"created_at":        "2026-04-13T12:00:00Z",
			"message":           map[string]string{"role": "assistant", "content": string(text)},
			"done":              true,
			"done_reason":       "stop",
			"prompt_eval_count": 900,
			"eval_count":        40,
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunServesAndShutsDown runs the whole command against a fake Ollama
// server: it serves the API with a token, streams a goal chosen after a
// host message, and on cancellation ends the stream, saves the state and
// exits 0.
func TestRunServesAndShutsDown(t *testing.T) {
	clearEnv(t)
	const goal = "write notes/answer.md for the person"
	llmSrv := fakeOllama(t, goal)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, stdout, stderr := startRun(t, ctx, "-http", "127.0.0.1:0", "-llm-url", llmSrv.URL, "-model", "fake",
		"-store", dir+"/state", "-workspace", dir+"/ws", "-http-token", "tok")

	resp := authed(t, http.MethodGet, base+"/api/agents/agent", "")
	var v monitor.AgentDetail
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	resp.Body.Close()
	assert.Equal(t, "agent", v.Status.ID)
	assert.Equal(t, "Wren", v.Status.Name)
	resp = authed(t, http.MethodGet, base+"/healthz", "")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// Subscribed first, then a host message: a goal is chosen after it,
	// whatever the agent was doing.
	sctx, scancel := context.WithTimeout(context.Background(), streamTimeout)
	defer scancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, base+"/api/events?kind=goal_chosen", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)
	c := &sseClient{t: t, resp: stream, r: bufio.NewReader(stream.Body)}
	require.Equal(t, sseMessage{Comment: "connected"}, c.next())

	resp = authed(t, http.MethodPost, base+"/api/messages", `{"text": "please write me an answer"}`)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	e := c.until(event.GoalChosen)
	assert.Equal(t, goal, e.Text)

	cancel()
	for {
		// Another goal may have been chosen meanwhile; then the stream ends.
		if _, err = c.read(); err != nil {
			break
		}
	}
	assert.ErrorIs(t, err, io.EOF, "shutdown ends the stream")
	assert.Equal(t, 0, <-done, "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "embed: shutting down")
	assert.NotContains(t, stderr.String(), "warning")
	assert.Contains(t, stdout.String(), "🎯 "+goal)
	checkSaved(t, dir+"/state", goal)
}

// startRun runs the command with args until ctx ends and returns the base
// URL it listens on, once it does, with the channel of its exit code and
// its outputs.
func startRun(t *testing.T, ctx context.Context, args ...string) (base string, done chan int, stdout, stderr *lockedBuffer) {
	t.Helper()
	stderr = &lockedBuffer{listening: make(chan string, 1)}
	stdout = &lockedBuffer{}
	done = make(chan int, 1)
	go func() { done <- run(ctx, args, stdout, stderr) }()
	select {
	case base = <-stderr.listening:
	case code := <-done:
		t.Fatalf("run exited with %d: %s", code, stderr.String())
	}
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)
	return base, done, stdout, stderr
}

// authed sends a request with the token "tok" (and a JSON body when body
// is not empty).
func authed(t *testing.T, method, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// checkSaved: the state in dir was saved, with goal last, and its lock
// released.
func checkSaved(t *testing.T, dir, goal string) {
	t.Helper()
	store, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	unlock, err := store.Lock("agent")
	require.NoError(t, err, "the agent's lock is released")
	require.NoError(t, unlock())
	st, err := store.Load(context.Background(), "agent")
	require.NoError(t, err)
	assert.NotEmpty(t, st.Identity.Goals)
	assert.Equal(t, goal, st.Identity.Goals[len(st.Identity.Goals)-1].Objective)
}

func TestRunListenError(t *testing.T) {
	clearEnv(t)
	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	dir := t.TempDir()
	var stderr lockedBuffer
	code := run(context.Background(), []string{
		"-http", strings.TrimPrefix(busy.URL, "http://"), "-llm-url", "http://127.0.0.1:1",
		"-store", dir + "/state", "-workspace", dir + "/ws",
	}, io.Discard, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "listen tcp")
}

// TestPublicAddressNeedsToken: the service refuses a non-loopback -http
// without a token, naming the flag, before it starts anything.
func TestPublicAddressNeedsToken(t *testing.T) {
	t.Setenv("EXISTENCE_TOKEN", "")
	dir := t.TempDir()
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"-http", "0.0.0.0:0", "-store", dir + "/state", "-workspace", dir + "/ws", "-llm-url", "http://127.0.0.1:1"}, io.Discard, &stderr)
	assert.Equal(t, 1, code, stderr.String())
	assert.Contains(t, stderr.String(), "set -http-token")
}
