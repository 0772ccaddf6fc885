package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// testRunner returns the trio with fake models that have nothing queued.
func testRunner(t *testing.T, obs event.Observer) *runner.Runner {
	t.Helper()
	r, err := runner.New(runner.Config{Store: memstore.New(), Observer: obs, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, m := range members {
		_, err := r.Add(context.Background(), existence.Config{ID: m.id, Name: m.name, Model: llmtest.NewFake()})
		require.NoError(t, err)
	}
	return r
}

func TestRequestCommandsOnStdin(t *testing.T) {
	ctx := context.Background()
	r := testRunner(t, nil)
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	reqs := requests.NewMemory(requests.Options{Now: func() time.Time { return now }})
	for _, s := range []struct {
		agent string
		kind  requests.Kind
		text  string
	}{{"builder", requests.Approval, "publish design/pump.md"}, {"scout", requests.Question, "which folder is mine?"}, {"analyst", requests.BuildRequest, "install graphviz"}} {
		_, err := reqs.Submit(ctx, s.agent, s.kind, s.text)
		require.NoError(t, err)
	}
	var out bytes.Buffer
	listen(ctx, strings.NewReader("/requests\n/approve 1\n/answer 2 scout/, it is yours\n/reject 3 no installs here\n/approve 1\n/answer 9 x\n/answer\n/frobnicate\nhello\n/requests\n"), r, reqs, &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`trio: #1 from Vault: req-000001 (approval, pending for 0s): "publish design/pump.md"`,
		`trio: #2 from Cedar: req-000002 (question, pending for 0s): "which folder is mine?"`,
		`trio: #3 from Cipher: req-000003 (build_request, pending for 0s): "install graphviz"`,
		"trio: req-000001 approved; Vault reads it at its next cycle",
		"trio: req-000002 answered; Cedar reads it at its next cycle",
		"trio: req-000003 rejected; Cipher reads it at its next cycle",
		"trio: requests: request already answered: req-000001 is approved",
		`trio: requests: no such request: "req-000009"`,
		"trio: usage: /answer N text",
		"trio: unknown command /frobnicate; " + commandHelp,
		"trio: no open requests",
	}
	assert.Equal(t, want, lines)
	inbox := func(id string) string { return r.Agent(id).State().Inbox[0].Text }
	assert.Equal(t, `your request req-000001 (approval: "publish design/pump.md") was approved`, inbox("builder"))
	assert.Equal(t, `your request req-000002 (question: "which folder is mine?") was answered: scout/, it is yours`, inbox("scout"))
	assert.Equal(t, `your request req-000003 (build_request: "install graphviz") was rejected: no installs here`, inbox("analyst"))
	assert.Equal(t, "hello", r.Agent("scout").State().Host[0].Text, "other lines stay host messages")
}

func TestHTTPServesTheMonitor(t *testing.T) {
	r := testRunner(t, nil)
	reqs := requests.NewMemory(requests.Options{})
	tasks := taskqueue.NewMemory(taskqueue.Options{})
	var stderr bytes.Buffer
	stop, err := serveMonitor(&runOptions{http: "127.0.0.1:0", httpToken: envToken{value: "tok", set: true}}, r, tasks, reqs, nil, nil, nil, slog.New(slog.DiscardHandler), &stderr)
	require.NoError(t, err)
	defer stop()
	m := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+/) .*sign in with the -http-token`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, "the dashboard's address is printed, and where its token is: %s", stderr.String())
	assert.NotContains(t, stderr.String(), "tok ", "never the token itself")
	base := m[1]

	resp, err := http.Get(base + "healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	req, err := http.NewRequest("GET", base+"api/agents", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var page monitor.AgentsPage
	require.NoError(t, json.Unmarshal(body, &page))
	assert.Equal(t, 3, page.Total)

	// Events reach the monitor through its subscription.
	require.NoError(t, r.Agent("scout").Tick(context.Background())) // no reply queued: a fallback
	req, _ = http.NewRequest("GET", base+"metrics", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), "existence_cycles_total 1")
}
