package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/taskqueue"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// streamTimeout bounds every test's reads of an event stream, so that a
// missing event fails the test instead of hanging it.
const streamTimeout = 10 * time.Second

// goalReply is a valid existence-cycle reply choosing goal.
func goalReply(t testing.TB, goal string) llmtest.Reply {
	t.Helper()
	b, err := json.Marshal(map[string]any{"action": "goal", "content": goal, "reasoning": "because a person may need it"})
	require.NoError(t, err)
	return llmtest.Reply{Text: string(b), PromptTokens: 900, OutputTokens: 120}
}

// fixture is a real agent on fakes (a scripted model, a memory store, a
// memory task queue, a manual clock) behind the HTTP API on a loopback
// httptest server.
type fixture struct {
	clock *existencetest.Clock
	model *llmtest.Fake
	store *identity.MemoryStore
	agent *existence.Agent
	tasks *taskqueue.Queue
	hub   *hub
	srv   *server
	ts    *httptest.Server
	token string
}

type fixtureOptions struct {
	token   string
	replies []llmtest.Reply
	// seed, when set, is saved in the store before the agent starts.
	seed *identity.State
	// maxSubscribers limits the event streams (0: the default).
	maxSubscribers int
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{
		clock: existencetest.NewClock(t0),
		model: llmtest.NewFake(o.replies...),
		store: identity.NewMemoryStore(),
		hub:   newHub(0, o.maxSubscribers),
		token: o.token,
	}
	f.model.Repeat = true
	ctx := context.Background()
	if o.seed != nil {
		require.NoError(t, f.store.Save(ctx, o.seed))
	}
	f.tasks = taskqueue.NewMemory(taskqueue.Options{Now: f.clock.Now})
	a, err := existence.New(ctx, existence.Config{
		ID:       "agent",
		Name:     "Wren",
		Traits:   []string{"helpful"},
		Domains:  []string{"writing"},
		Model:    f.model,
		Store:    f.store,
		Tasks:    f.tasks,
		Clock:    f.clock,
		Retry:    llm.RetryPolicy{Attempts: 1},
		Observer: f.hub.publish,
	})
	require.NoError(t, err)
	f.agent = a
	f.srv = newServer(serverConfig{Agent: a, Tasks: f.tasks, Events: f.hub, Token: o.token, Clock: f.clock})
	f.ts = httptest.NewServer(f.srv)
	// Cleanups run last-in first-out: end the streams, then wait for the
	// handlers, then stop the agent.
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	t.Cleanup(f.ts.Close)
	t.Cleanup(f.hub.close)
	return f
}

// request builds a request to the fixture's server with the fixture's
// token, and Content-Type application/json when there is a body.
func (f *fixture) request(t *testing.T, method, path, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, r)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	return req
}

// do sends req and returns the response with its body read.
func (f *fixture) do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := f.ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// call sends method path with body and decodes the JSON answer into out
// (when not nil), requiring status want.
func (f *fixture) call(t *testing.T, method, path, body string, want int, out any) *http.Response {
	t.Helper()
	resp, b := f.do(t, f.request(t, method, path, body))
	require.Equal(t, want, resp.StatusCode, "body: %s", b)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), "body: %s", b)
	}
	return resp
}

// sseMessage is one server-sent event or comment.
type sseMessage struct {
	Event   string
	Data    string
	Comment string
}

// sseClient reads an event stream.
type sseClient struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// openStream opens GET path (an /events URL) with a deadline and reads the
// opening ": connected" comment, after which the stream is subscribed.
func (f *fixture) openStream(t *testing.T, ctx context.Context, path string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	t.Cleanup(cancel)
	req := f.request(t, http.MethodGet, path, "").WithContext(ctx)
	resp, err := f.ts.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	c := &sseClient{t: t, resp: resp, r: bufio.NewReader(resp.Body)}
	require.Equal(t, sseMessage{Comment: "connected"}, c.next())
	return c
}

// read returns the next message, or the read error (io.EOF at the end).
func (c *sseClient) read() (sseMessage, error) {
	var m sseMessage
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return m, nil
		case strings.HasPrefix(line, ": "):
			m.Comment = strings.TrimPrefix(line, ": ")
		case strings.HasPrefix(line, "event: "):
			m.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.Empty(c.t, m.Data, "one data line per event")
			m.Data = strings.TrimPrefix(line, "data: ")
		default:
			c.t.Fatalf("unexpected event-stream line %q", line)
		}
	}
}

// next returns the next message and fails the test on a read error.
func (c *sseClient) next() sseMessage {
	c.t.Helper()
	m, err := c.read()
	require.NoError(c.t, err)
	return m
}

// until returns the next event of kind, skipping others.
func (c *sseClient) until(kind existence.EventKind) existence.Event {
	c.t.Helper()
	for {
		m := c.next()
		if m.Event != string(kind) {
			continue
		}
		var e existence.Event
		require.NoError(c.t, json.Unmarshal([]byte(m.Data), &e), "data: %s", m.Data)
		return e
	}
}
