package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// env is a monitor over a runner of fake agents.
type env struct {
	rnr    *runner.Runner
	mon    *monitor.Monitor
	tasks  *taskqueue.Queue
	reqs   *requests.Queue
	clock  *existencetest.Clock
	models map[string]*llmtest.Fake
}

var trio = [][2]string{{"scout", "Cedar"}, {"analyst", "Cipher"}, {"builder", "Vault"}}

// newEnv builds n agents (the trio's first, then agent-00003, …) with fake
// models that have no reply queued (add them per test), and a monitor with
// cfg's security settings.
func newEnv(t testing.TB, n int, cfg monitor.Config, opts ...func(*runner.Config)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{clock: existencetest.NewClock(t0), models: map[string]*llmtest.Fake{}}
	e.tasks = taskqueue.NewMemory(taskqueue.Options{Now: e.clock.Now})
	e.reqs = requests.NewMemory(requests.Options{Now: e.clock.Now})
	var mon *monitor.Monitor
	rc := runner.Config{
		Store:    memstore.New(),
		Clock:    e.clock,
		Observer: func(ev event.Event) { mon.Observe(ev) },
		Logger:   slog.New(slog.DiscardHandler),
		// The board the agents share (POST /api/slots).
		SharedSlots: identity.NewSharedBoard(identity.NewMemoryDocument("slots"), identity.BoardOptions{Now: e.clock.Now}),
	}
	for _, o := range opts {
		o(&rc)
	}
	r, err := runner.New(rc)
	require.NoError(t, err)
	e.rnr = r
	for i := range n {
		id, name := fmt.Sprintf("agent-%05d", i), fmt.Sprintf("Agent %05d", i)
		if i < len(trio) {
			id, name = trio[i][0], trio[i][1]
		}
		m := llmtest.NewFake()
		e.models[id] = m
		_, err := r.Add(ctx, existence.Config{ID: id, Name: name, Model: m, Tasks: e.tasks, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
	}
	cfg.Runner, cfg.Tasks, cfg.Requests, cfg.Clock = r, e.tasks, e.reqs, e.clock
	cfg.Logger = slog.New(slog.DiscardHandler)
	mon, err = monitor.New(cfg)
	require.NoError(t, err)
	e.mon = mon
	t.Cleanup(func() { mon.Close(); _ = r.Close() })
	return e
}

// stressorReply is a model reply choosing goal and reporting one stressor.
func stressorReply(t testing.TB, goal, typ string) llmtest.Reply {
	b, err := json.Marshal(map[string]any{
		"action": "goal", "content": goal, "reasoning": "because",
		"suffering_assessment": map[string]any{"new_stressors": []map[string]string{{"type": typ, "description": "nobody reads my notes", "condition": "a peer cites one"}}},
	})
	require.NoError(t, err)
	return llmtest.Reply{Text: string(b), PromptTokens: 900, OutputTokens: 120}
}

// do sends a request to the monitor and returns the status and body.
func do(t testing.TB, h http.Handler, method, target, body string, headers map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Host = "127.0.0.1:8080" // httptest's example.com is not an allowed host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// browser opens the monitor's page as a browser does and returns the
// headers its script sends with a POST: the session cookie and the
// session's CSRF token.
func browser(t testing.TB, h http.Handler) map[string]string {
	t.Helper()
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	cs := rec.Result().Cookies()
	require.Len(t, cs, 1, "the page opens a session")
	cookie := cs[0].Name + "=" + cs[0].Value
	return map[string]string{"Cookie": cookie, hostaccess.CSRFHeader: pageCSRF(t, h, map[string]string{"Cookie": cookie})}
}
