package a2aserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/a2aserver"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const token = "test-token-0123456789abcdef"

// goalModel chooses a goal every cycle.
func goalModel() llm.Model {
	return llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		b, _ := json.Marshal(map[string]any{"action": "goal", "content": "map the workspace", "reasoning": "nothing is known yet"})
		return &llm.Response{Text: string(b)}, nil
	})
}

// done is an executor that completes every goal with a summary and an
// artifact.
var done = existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
	return existence.Outcome{Status: identity.Done, Summary: "wrote the report on " + asg.Goal.Objective, Artifacts: []string{"notes/report.md"}}, nil
})

type fixture struct {
	rn     *runner.Runner
	tasks  *taskqueue.Queue
	server *a2aserver.Server
	srv    *httptest.Server
}

// newFixture serves agents (ids) that do not run by themselves: a test
// drives them with tick.
func newFixture(t *testing.T, cfg a2aserver.Config, ids ...string) *fixture {
	t.Helper()
	f := &fixture{tasks: taskqueue.NewMemory(taskqueue.Options{})}
	rn, err := runner.New(runner.Config{Store: memstore.New(), Clock: existencetest.NewClock(t0), NoStagger: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rn.Close()) })
	for _, id := range ids {
		_, err := rn.Add(t.Context(), existence.Config{ID: id, Name: strings.ToUpper(id[:1]) + id[1:], Model: goalModel(), Tasks: f.tasks, Executor: done})
		require.NoError(t, err)
	}
	f.rn = rn
	cfg.Agents, cfg.Tasks, cfg.Logger = rn, f.tasks, quiet
	f.server, err = a2aserver.New(cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	f.server.Mount(mux, hostaccess.NewAuth(hostaccess.AuthConfig{Token: token}))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// tick runs one existence cycle of agent id and waits for its goal's
// executor to return.
func (f *fixture) tick(t *testing.T, id string) {
	t.Helper()
	a := f.rn.Agent(id)
	require.NoError(t, a.Tick(t.Context()))
	require.NoError(t, a.WaitGoal(t.Context()))
}

// post sends body to path with the token and returns the status and the
// decoded JSON answer.
func (f *fixture) post(t *testing.T, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	default:
		enc, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+path, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func rpc(method, tenant string, params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	if tenant != "" {
		params["tenant"] = tenant
	}
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
}

func message(text string) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
}

// bearer adds the token to every request.
type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return b.base.RoundTrip(r)
}

// client is an a2a-go client of agent id, built from its card.
func (f *fixture) client(t *testing.T, id string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: bearer{http.DefaultTransport}, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/a2a/"+id+"/agent-card.json", nil)
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var card a2a.AgentCard
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	var ifaces []*a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == binding {
			ifaces = append(ifaces, i)
		}
	}
	c, err := a2aclient.NewFromEndpoints(t.Context(), ifaces, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	require.NoError(t, err)
	return c
}

func TestSendMessageCompletesWithArtifacts(t *testing.T) {
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			f := newFixture(t, a2aserver.Config{}, "scout", "analyst")
			c := f.client(t, "scout", binding)
			res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("count the notes"))})
			require.NoError(t, err)
			tk, ok := res.(*a2a.Task)
			require.True(t, ok, "%T", res)
			assert.Equal(t, a2a.TaskStateSubmitted, tk.Status.State)
			queued, err := f.tasks.Get(t.Context(), string(tk.ID))
			require.NoError(t, err)
			assert.Equal(t, "scout", queued.Agent, "the task is in the agent's queue")
			assert.Equal(t, "count the notes", queued.Description)

			f.tick(t, "scout") // claims the task, pursues it
			got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: tk.ID})
			require.NoError(t, err)
			assert.Equal(t, a2a.TaskStateWorking, got.Status.State)
			f.tick(t, "scout") // records the outcome: the task completes
			got, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: tk.ID})
			require.NoError(t, err)
			assert.Equal(t, a2a.TaskStateCompleted, got.Status.State)
			require.Len(t, got.Artifacts, 2)
			assert.Equal(t, "summary", got.Artifacts[0].Name)
			assert.Equal(t, "wrote the report on count the notes", got.Artifacts[0].Parts[0].Text())
			assert.Equal(t, "notes/report.md", got.Artifacts[1].Parts[0].Text())

			list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{})
			require.NoError(t, err)
			require.Len(t, list.Tasks, 1)
			assert.Equal(t, tk.ID, list.Tasks[0].ID)
			other := f.client(t, "analyst", binding)
			list, err = other.ListTasks(t.Context(), &a2a.ListTasksRequest{})
			require.NoError(t, err)
			assert.Empty(t, list.Tasks, "another agent lists only its own tasks")
		})
	}
}

func TestStreamingFollowsTheTask(t *testing.T) {
	f := newFixture(t, a2aserver.Config{PollInterval: time.Hour}, "scout")
	c := f.client(t, "scout", a2a.TransportProtocolJSONRPC)
	var states []a2a.TaskState
	var artifacts []string
	var ticks sync.WaitGroup
	defer ticks.Wait()
	working := make(chan struct{})
	closeWorking := sync.OnceFunc(func() { close(working) })
	defer closeWorking() // before the Wait, should the stream fail
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tidy the notes"))}) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
			// One cycle claims the task; once the stream shows it
			// working, the next records the goal's end. The stream is
			// woken by the agent's events, never by its poll.
			ticks.Go(func() {
				f.tick(t, "scout")
				<-working
				f.tick(t, "scout")
			})
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
			if e.Status.State == a2a.TaskStateWorking {
				closeWorking()
			}
		case *a2a.TaskArtifactUpdateEvent:
			artifacts = append(artifacts, e.Artifact.Name)
		}
	}
	assert.Equal(t, []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted}, states)
	assert.Equal(t, []string{"summary", "notes/report.md"}, artifacts)
	assert.Zero(t, f.server.Streams(), "the stream is released")
}

func TestCancelTask(t *testing.T) {
	f := newFixture(t, a2aserver.Config{}, "scout")
	c := f.client(t, "scout", a2a.TransportProtocolJSONRPC)
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("a long job"))})
	require.NoError(t, err)
	id := res.(*a2a.Task).ID
	// Submitted: canceled in the queue, it never reaches the agent.
	got, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: id})
	require.NoError(t, err)
	assert.Equal(t, a2a.TaskStateCanceled, got.Status.State)
	claimed, err := f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	assert.Nil(t, claimed, "a canceled task never reaches an agent")

	// Working: ended at once.
	res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("another long job"))})
	require.NoError(t, err)
	id = res.(*a2a.Task).ID
	_, err = f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	got, err = c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: id})
	require.NoError(t, err)
	assert.Equal(t, a2a.TaskStateCanceled, got.Status.State)
	q, err := f.tasks.Get(t.Context(), string(id))
	require.NoError(t, err)
	assert.Equal(t, task.Failed, q.Status, "canceled is a failed task in the queue")
	_, err = c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: id})
	require.ErrorContains(t, err, "has already ended")
}

func TestCards(t *testing.T) {
	f := newFixture(t, a2aserver.Config{BaseURL: "https://agents.example/a2a", Profile: func(a *existence.Agent) a2aserver.Profile {
		return a2aserver.Profile{Description: a.Name() + " maps workspaces.", Skills: []a2a.AgentSkill{{ID: "read_file", Name: "read_file", Description: "reads a file"}}}
	}}, "scout", "analyst")
	get := func(path string) a2a.AgentCard {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		var c a2a.AgentCard
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		return c
	}
	c := get("/a2a/scout/agent-card.json")
	assert.Equal(t, "Scout", c.Name)
	assert.Equal(t, "Scout maps workspaces.", c.Description)
	require.Len(t, c.Skills, 1)
	assert.Equal(t, "read_file", c.Skills[0].ID)
	require.Len(t, c.SupportedInterfaces, 2)
	assert.Equal(t, "https://agents.example/a2a", c.SupportedInterfaces[0].URL)
	assert.Equal(t, "scout", c.SupportedInterfaces[0].Tenant)
	assert.Equal(t, a2a.TransportProtocolHTTPJSON, c.SupportedInterfaces[1].ProtocolBinding)
	assert.Contains(t, c.SecuritySchemes, a2a.SecuritySchemeName(a2aserver.SecurityScheme))
	assert.True(t, c.Capabilities.Streaming)

	swarm := get("/.well-known/agent-card.json")
	require.Len(t, swarm.Skills, 2, "one skill per agent")
	assert.Equal(t, "scout", swarm.Skills[0].ID)
	assert.Contains(t, swarm.Skills[0].Description, "tenant scout")
}

// TestBadInput pins the answer to each kind of bad request, and that the
// agents keep working after them.
func TestBadInput(t *testing.T) {
	f := newFixture(t, a2aserver.Config{}, "scout", "analyst")
	_, other := f.post(t, "/a2a", rpc("SendMessage", "analyst", message("analyst's own task")))
	otherID := other["result"].(map[string]any)["task"].(map[string]any)["id"].(string)

	for _, tc := range []struct {
		name   string
		path   string
		body   any
		hdr    []string
		status int
		msg    string
	}{
		{"no token", "/a2a", rpc("SendMessage", "scout", message("hi")), []string{"Authorization", ""}, 401, "missing bearer token"},
		{"wrong token", "/a2a", rpc("SendMessage", "scout", message("hi")), []string{"Authorization", "Bearer nope"}, 401, "invalid bearer token"},
		{"50 MB message", "/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"` + strings.Repeat("a", 50<<20) + `"}]}}}`), nil, 413, "request body too large"},
		{"unknown agent", "/a2a", rpc("SendMessage", "ghost", message("hi")), nil, 404, `is served here`},
		{"unknown agent, HTTP+JSON", "/a2a/rest/ghost/message:send", message("hi"), nil, 404, `is served here`},
		{"no tenant with several agents", "/a2a", rpc("SendMessage", "", message("hi")), nil, 404, "name one as the request's tenant"},
		{"not JSON", "/a2a", "{not json", nil, 400, "parse error"},
		{"not JSON-RPC", "/a2a", `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"tenant":"scout"}}`, nil, 200, "invalid request"},
		{"unknown method", "/a2a", rpc("Frobnicate", "scout", nil), nil, 200, "method not found"},
		{"another agent's task", "/a2a", rpc("GetTask", "scout", map[string]any{"id": otherID}), nil, 200, "no task"},
		{"cancel another agent's task", "/a2a", rpc("CancelTask", "scout", map[string]any{"id": otherID}), nil, 200, "no task"},
		{"blank message", "/a2a", rpc("SendMessage", "scout", message("  \u200b ")), nil, 200, "has no text"},
		{"too long message", "/a2a", rpc("SendMessage", "scout", message(strings.Repeat("é", 2001))), nil, 200, "the limit is 2000"},
		{"file part", "/a2a", rpc("SendMessage", "scout", map[string]any{"message": map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"url": "file:///etc/passwd"}}}}), nil, 200, "not text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := f.post(t, tc.path, tc.body, tc.hdr...)
			assert.Equal(t, tc.status, status)
			b, _ := json.Marshal(out)
			assert.Contains(t, string(b), tc.msg)
		})
	}
	ts, err := f.tasks.List(t.Context())
	require.NoError(t, err)
	assert.Len(t, ts, 1, "no bad request queued a task")

	// The agents still work.
	status, out := f.post(t, "/a2a", rpc("SendMessage", "scout", message("after all that")))
	require.Equal(t, http.StatusOK, status, out)
	f.tick(t, "scout")
	f.tick(t, "scout")
	ts, err = f.tasks.List(t.Context())
	require.NoError(t, err)
	assert.Equal(t, task.Completed, ts[1].Status)
}

// TestMessageTextIsCleaned: unsafe characters never reach the queue (and
// so the prompt).
func TestMessageTextIsCleaned(t *testing.T) {
	f := newFixture(t, a2aserver.Config{}, "scout")
	status, out := f.post(t, "/a2a", rpc("SendMessage", "", message("do\u202e this\x1b[31m now")))
	require.Equal(t, http.StatusOK, status, out)
	ts, err := f.tasks.List(t.Context())
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.NotContains(t, ts[0].Description, "\u202e")
	assert.NotContains(t, ts[0].Description, "\x1b")
}

// TestStreamCap: beyond MaxStreams a stream is refused with 503, and the
// streams open go on.
func TestStreamCap(t *testing.T) {
	const max = 3
	f := newFixture(t, a2aserver.Config{MaxStreams: max, PollInterval: time.Hour}, "scout")
	var bodies []io.Closer
	for i := range max {
		body, _ := json.Marshal(rpc("SendStreamingMessage", "scout", message(fmt.Sprintf("job %d", i))))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/a2a", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		// The first event (the submitted task) proves the stream is open.
		buf := make([]byte, 1)
		_, err = resp.Body.Read(buf)
		require.NoError(t, err)
		bodies = append(bodies, resp.Body)
	}
	assert.Equal(t, max, f.server.Streams())
	status, out := f.post(t, "/a2a", rpc("SendStreamingMessage", "scout", message("one too many")))
	assert.Equal(t, http.StatusServiceUnavailable, status)
	b, _ := json.Marshal(out)
	assert.Contains(t, string(b), "too many open A2A streams")
	status, out = f.post(t, "/a2a/rest/scout/message:stream", message("one too many"))
	assert.Equal(t, http.StatusServiceUnavailable, status, out)
	for _, b := range bodies {
		b.Close()
	}
	// Non-streaming calls are never refused by the cap.
	status, out = f.post(t, "/a2a", rpc("SendMessage", "scout", message("plain")))
	assert.Equal(t, http.StatusOK, status, out)
}

// TestTasksSurviveRestart: a server over the same queue (a file) answers
// for a task submitted before.
func TestTasksSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	q, err := taskqueue.Open(dir, taskqueue.Options{})
	require.NoError(t, err)
	rn, err := runner.New(runner.Config{Store: memstore.New(), Clock: existencetest.NewClock(t0), NoStagger: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rn.Close()) })
	_, err = rn.Add(t.Context(), existence.Config{ID: "scout", Name: "Scout", Model: goalModel(), Tasks: q})
	require.NoError(t, err)
	s1, err := a2aserver.New(a2aserver.Config{Agents: rn, Tasks: q, Logger: quiet})
	require.NoError(t, err)
	h1, err := s1.Handler(a2aserver.HTTPConfig{Token: token})
	require.NoError(t, err)
	body, _ := json.Marshal(rpc("SendMessage", "", message("remember me")))
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h1.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	q2, err := taskqueue.Open(dir, taskqueue.Options{}) // the process restarted
	require.NoError(t, err)
	s2, err := a2aserver.New(a2aserver.Config{Agents: rn, Tasks: q2, Logger: quiet})
	require.NoError(t, err)
	h2, err := s2.Handler(a2aserver.HTTPConfig{Token: token})
	require.NoError(t, err)
	body, _ = json.Marshal(rpc("ListTasks", "", nil))
	req = httptest.NewRequest(http.MethodPost, "http://localhost/", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	rec = httptest.NewRecorder()
	h2.ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), "remember me")
}

func TestHandlerNeedsAStrongToken(t *testing.T) {
	f := newFixture(t, a2aserver.Config{}, "scout")
	_, err := f.server.Handler(a2aserver.HTTPConfig{})
	assert.ErrorIs(t, err, a2aserver.ErrNoToken)
	_, err = f.server.Handler(a2aserver.HTTPConfig{Token: "short", Addr: "0.0.0.0:8080"})
	assert.ErrorIs(t, err, hostaccess.ErrWeakToken)
	_, err = f.server.Handler(a2aserver.HTTPConfig{Token: "short", Addr: "127.0.0.1:8080"})
	assert.NoError(t, err, "a loopback address takes any token")
	_, err = a2aserver.New(a2aserver.Config{})
	assert.ErrorIs(t, err, a2aserver.ErrConfig)
}
