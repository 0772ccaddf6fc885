package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/taskqueue"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/suffering"
)

func TestGetAgentFresh(t *testing.T) {
	seed := &identity.State{Identity: identity.New("agent", "Wren", t0)}
	seed.Identity.Worldview = "small and careful"
	for _, in := range []suffering.Input{
		{Type: "invisibility", Description: "nobody reads my notes", Condition: "a person cites one", Severity: 0.15},
		{Type: suffering.RepeatedFailure, Description: "4 of 6 goals failed", Condition: "complete goals", Severity: 0.30},
	} {
		_, err := seed.Suffering.Add(t0, in)
		require.NoError(t, err)
	}
	seed.Inbox = []identity.Message{{From: "Cedar", Text: "hello", At: t0}}
	f := newFixture(t, fixtureOptions{seed: seed})

	var raw map[string]json.RawMessage
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &raw)
	assert.JSONEq(t, "null", string(raw["goal"]), "no active goal is null, not absent")
	assert.JSONEq(t, "null", string(raw["last_goal"]))

	var v agentView
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &v)
	assert.Equal(t, "agent", v.ID)
	assert.Equal(t, "Wren", v.Name)
	assert.Equal(t, "small and careful", v.Identity.Worldview)
	assert.Empty(t, v.Identity.Goals, "the goal history is not part of identity")
	assert.Equal(t, 1, v.Inbox)
	assert.Equal(t, 0, v.HostMessages)
	assert.InDelta(t, 0.45, v.Suffering.Load, 1e-9)
	assert.Equal(t, "prominent", v.Suffering.Level)
	require.Len(t, v.Suffering.Active, 2)
	assert.Equal(t, suffering.RepeatedFailure, v.Suffering.Active[0].Type, "most severe first")
	assert.Equal(t, "nobody reads my notes", v.Suffering.Active[1].Description)
}

func TestGetAgentNoStressorsIsEmptyList(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var raw struct {
		Suffering map[string]json.RawMessage `json:"suffering"`
	}
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &raw)
	assert.JSONEq(t, "[]", string(raw.Suffering["active"]))
	assert.JSONEq(t, `"none"`, string(raw.Suffering["level"]))
	assert.JSONEq(t, "0", string(raw.Suffering["load"]))
}

// TestTaskBecomesGoal: POST /tasks, then a tick makes the task the goal;
// the next tick ends it, and the task with it.
func TestTaskBecomesGoal(t *testing.T) {
	f := newFixture(t, fixtureOptions{token: "s3cret", replies: []llmtest.Reply{goalReply(t, "tidy the notes")}})
	ctx := context.Background()
	const desc = "Write notes/hello.md — a greeting in three languages"

	var task taskqueue.Task
	resp := f.call(t, http.MethodPost, "/tasks", `{"description": "  `+desc+`  "}`, http.StatusCreated, &task)
	assert.Equal(t, "/tasks/"+task.ID, resp.Header.Get("Location"))
	assert.Equal(t, taskqueue.Task{ID: "task-000001", Description: desc, Agent: "agent", Status: taskqueue.Pending, Submitted: t0}, task)

	var list struct{ Tasks []taskqueue.Task }
	f.call(t, http.MethodGet, "/tasks", "", http.StatusOK, &list)
	require.Equal(t, []taskqueue.Task{task}, list.Tasks)

	require.NoError(t, f.agent.Tick(ctx))
	var v agentView
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &v)
	require.NotNil(t, v.Goal, "the task is the active goal")
	assert.Equal(t, desc, v.Goal.Objective)
	assert.Equal(t, task.ID, v.Goal.TaskID)
	assert.Equal(t, identity.Active, v.Goal.Status)
	_, body := f.do(t, f.request(t, http.MethodGet, "/agent", ""))
	assertGolden(t, "agent_with_task.golden.json", body)

	var got taskqueue.Task
	f.call(t, http.MethodGet, "/tasks/"+task.ID, "", http.StatusOK, &got)
	assert.Equal(t, taskqueue.Assigned, got.Status)
	assert.Equal(t, "agent", got.AssignedTo)

	// The default executor completes the goal; the next tick records it.
	require.NoError(t, f.agent.WaitGoal(ctx))
	f.clock.Advance(6 * time.Second)
	require.NoError(t, f.agent.Tick(ctx))
	f.call(t, http.MethodGet, "/tasks/"+task.ID, "", http.StatusOK, &got)
	assert.Equal(t, taskqueue.Completed, got.Status)
	assert.Equal(t, "completed: "+desc, got.Result)
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &v)
	require.NotNil(t, v.LastGoal)
	assert.Equal(t, desc, v.LastGoal.Objective)
	assert.Equal(t, identity.Done, v.LastGoal.Status)
	require.NotNil(t, v.Goal, "a new cycle chose the model's goal")
	assert.Equal(t, "tidy the notes", v.Goal.Objective)
}

func TestSubmitTaskForAnotherAgent(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, tc := range []struct{ body, want string }{
		{`{"description": "x", "agent": "scout"}`, "scout"},
		{`{"description": "y", "agent": ""}`, ""}, // any agent
		{`{"description": "z", "agent": null}`, "agent"},
	} {
		var task taskqueue.Task
		f.call(t, http.MethodPost, "/tasks", tc.body, http.StatusCreated, &task)
		assert.Equal(t, tc.want, task.Agent, tc.body)
	}
}

func TestGetTaskNotFound(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var e errorBody
	f.call(t, http.MethodGet, "/tasks/task-000042", "", http.StatusNotFound, &e)
	assert.Equal(t, `no task "task-000042"`, e.Error)
}

func TestListTasksEmptyIsEmptyList(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	_, b := f.do(t, f.request(t, http.MethodGet, "/tasks", ""))
	assert.JSONEq(t, `{"tasks": []}`, string(b))
}

func TestPostMessage(t *testing.T) {
	f := newFixture(t, fixtureOptions{token: "s3cret", replies: []llmtest.Reply{goalReply(t, "answer the person")}})
	ctx := context.Background()
	stream := f.openStream(t, ctx, "/events?kind=message")

	var reply messageReply
	f.call(t, http.MethodPost, "/messages", `{"text": " what are you working on?\n "}`, http.StatusAccepted, &reply)
	assert.Equal(t, messageReply{Status: "delivered", Agent: "agent", Text: "what are you working on?"}, reply)

	st := f.agent.State()
	require.Len(t, st.Host, 1)
	assert.Equal(t, identity.Message{From: "host", Text: "what are you working on?", At: t0}, st.Host[0])
	e := stream.until("message")
	assert.Equal(t, "host", e.Cause)
	assert.Equal(t, "what are you working on?", e.Text)

	var v agentView
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &v)
	assert.Equal(t, 1, v.HostMessages)

	// The next existence cycle shows it to the model and empties it.
	require.NoError(t, f.agent.Tick(ctx))
	reqs := f.model.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, reqs[0].Messages[0].Content, "what are you working on?")
	f.call(t, http.MethodGet, "/agent", "", http.StatusOK, &v)
	assert.Equal(t, 0, v.HostMessages)
}

// TestBadRequests: every bad request gets its 4xx with a JSON error, and
// changes nothing.
func TestBadRequests(t *testing.T) {
	huge := `{"description": "` + strings.Repeat("a", maxBody) + `"}`
	tests := []struct {
		name, method, path, contentType, body string
		status                                int
		errContains                           string
		allow                                 string
	}{
		{"truncated JSON", "POST", "/tasks", "", `{"description": `, 400, "invalid JSON: unexpected end", ""},
		{"syntax error", "POST", "/tasks", "", `{"description": "x",}`, 400, "invalid JSON at byte", ""},
		{"not JSON", "POST", "/messages", "", `hello`, 400, "invalid JSON at byte 1", ""},
		{"unknown field", "POST", "/tasks", "", `{"description": "x", "priority": 1}`, 400, `unknown field "priority"`, ""},
		{"unknown field in message", "POST", "/messages", "", `{"text": "x", "from": "me"}`, 400, `unknown field "from"`, ""},
		{"wrong type", "POST", "/tasks", "", `{"description": 5}`, 400, `"description" must be string, not number`, ""},
		{"array body", "POST", "/tasks", "", `[{"description": "x"}]`, 400, "must be an object, not array", ""},
		{"trailing data", "POST", "/tasks", "", `{"description": "x"} {"description": "y"}`, 400, "trailing data", ""},
		{"trailing garbage", "POST", "/messages", "", `{"text": "x"}}`, 400, "invalid JSON", ""},
		{"empty body", "POST", "/tasks", "", ``, 400, "empty request body", ""},
		{"null body", "POST", "/tasks", "", `null`, 400, `"description" is missing or blank`, ""},
		{"missing description", "POST", "/tasks", "", `{}`, 400, `"description" is missing or blank`, ""},
		{"blank description", "POST", "/tasks", "", `{"description": " \t\n "}`, 400, `"description" is missing or blank`, ""},
		{"description too long", "POST", "/tasks", "", `{"description": "` + strings.Repeat("é", 2001) + `"}`, 400, `"description" is 2001 characters; the limit is 2000`, ""},
		{"invalid agent id", "POST", "/tasks", "", `{"description": "x", "agent": "../etc"}`, 400, "invalid", ""},
		{"oversized task", "POST", "/tasks", "", huge, 413, "request body too large: the limit is 65536 bytes", ""},
		{"oversized message", "POST", "/messages", "", `{"text": "` + strings.Repeat("a", maxBody) + `"}`, 413, "too large", ""},
		{"oversized trailing data", "POST", "/messages", "", `{"text": "x"}` + strings.Repeat(" ", maxBody), 413, "too large", ""},
		{"missing text", "POST", "/messages", "", `{}`, 400, `"text" is missing or blank`, ""},
		{"blank text", "POST", "/messages", "", `{"text": "   "}`, 400, `"text" is missing or blank`, ""},
		{"text too long", "POST", "/messages", "", `{"text": "` + strings.Repeat("ü", 501) + `"}`, 400, `"text" is 501 characters; the agent reads at most 500`, ""},
		{"form content type", "POST", "/tasks", "application/x-www-form-urlencoded", `description=x`, 415, "Content-Type: application/json", ""},
		{"text/plain content type", "POST", "/messages", "text/plain", `{"text": "x"}`, 415, "Content-Type: application/json", ""},
		{"no content type", "POST", "/messages", "-", `{"text": "x"}`, 415, "Content-Type: application/json", ""},
		{"wrong method on /agent", "DELETE", "/agent", "", ``, 405, "method DELETE not allowed on /agent; use GET", "GET"},
		{"wrong method on /tasks", "PUT", "/tasks", "", `{"description": "x"}`, 405, "use GET or POST", "GET, POST"},
		{"wrong method on /messages", "GET", "/messages", "", ``, 405, "use POST", "POST"},
		{"wrong method on /events", "POST", "/events", "", `{}`, 405, "use GET", "GET"},
		{"wrong method on a task", "DELETE", "/tasks/task-000001", "", ``, 405, "use GET", "GET"},
		{"unknown path", "GET", "/nope", "", ``, 404, `no such endpoint "/nope"`, ""},
		{"root", "GET", "/", "", ``, 404, "no such endpoint", ""},
		{"tasks slash", "GET", "/tasks/", "", ``, 404, "no such endpoint", ""},
		{"nested task path", "GET", "/tasks/a/b", "", ``, 404, "no such endpoint", ""},
		{"agent slash", "GET", "/agent/", "", ``, 404, "no such endpoint", ""},
	}
	f := newFixture(t, fixtureOptions{token: "s3cret"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := f.request(t, tc.method, tc.path, tc.body)
			switch tc.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
				req.Header.Del("Content-Type")
			default:
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, b := f.do(t, req)
			require.Equal(t, tc.status, resp.StatusCode, "body: %s", b)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e errorBody
			require.NoError(t, json.Unmarshal(b, &e), "body: %s", b)
			assert.Contains(t, e.Error, tc.errContains)
			assert.Equal(t, tc.allow, resp.Header.Get("Allow"))
		})
	}
	ts, err := f.tasks.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ts, "no bad request submitted a task")
	assert.Empty(t, f.agent.State().Host, "no bad request delivered a message")
}

func TestAuth(t *testing.T) {
	const token = "s3cret-token"
	endpoints := []struct{ method, path, body string }{
		{"GET", "/agent", ""},
		{"GET", "/tasks", ""},
		{"POST", "/tasks", `{"description": "x"}`},
		{"GET", "/tasks/task-000001", ""},
		{"POST", "/messages", `{"text": "x"}`},
		{"GET", "/events", ""},
		{"GET", "/nope", ""}, // authentication comes before routing
	}
	tests := []struct {
		name, header string
		challenge    string
	}{
		{"missing", "", `Bearer realm="existence"`},
		{"wrong token", "Bearer wrong", `Bearer realm="existence", error="invalid_token"`},
		{"token prefix", "Bearer s3cret", `Bearer realm="existence", error="invalid_token"`},
		{"token with suffix", "Bearer " + token + "x", `Bearer realm="existence", error="invalid_token"`},
		{"basic scheme", "Basic czNjcmV0LXRva2Vu", `Bearer realm="existence"`},
		{"no scheme", token, `Bearer realm="existence"`},
		{"empty credentials", "Bearer ", `Bearer realm="existence"`},
	}
	f := newFixture(t, fixtureOptions{token: token})
	for _, ep := range endpoints {
		for _, tc := range tests {
			t.Run(ep.method+" "+ep.path+"/"+tc.name, func(t *testing.T) {
				req := f.request(t, ep.method, ep.path, ep.body)
				req.Header.Del("Authorization")
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				resp, b := f.do(t, req)
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "body: %s", b)
				assert.Equal(t, tc.challenge, resp.Header.Get("WWW-Authenticate"))
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				var e errorBody
				require.NoError(t, json.Unmarshal(b, &e))
				assert.Contains(t, e.Error, "bearer token")
			})
		}
	}
	ts, err := f.tasks.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ts, "no unauthorised request submitted a task")
	assert.Empty(t, f.agent.State().Host, "no unauthorised request delivered a message")

	// The right token, with the scheme in any case, passes.
	for _, h := range []string{"Bearer " + token, "bearer " + token, "BEARER  " + token} {
		req := f.request(t, "GET", "/agent", "")
		req.Header.Set("Authorization", h)
		resp, b := f.do(t, req)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%q: %s", h, b)
	}
}

func TestNoTokenNeedsNoAuthorization(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	req := f.request(t, "GET", "/agent", "")
	require.Empty(t, req.Header.Get("Authorization"))
	resp, _ := f.do(t, req)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// goalIDPattern matches the random part of goal ids.
var goalIDPattern = regexp.MustCompile(`goal-\d{8}T\d{6}-[0-9a-f]{8}`)

// assertGolden compares the JSON body, indented and with goal ids
// normalised, with testdata/name; -update rewrites the file.
func assertGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, body, "", "  "))
	b := goalIDPattern.ReplaceAll(buf.Bytes(), []byte("goal-ID")) // the body ends with a newline
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(b))
}

// failingAgent is an agentAPI whose state cannot be saved.
type failingAgent struct{}

func (failingAgent) ID() string             { return "agent" }
func (failingAgent) Name() string           { return "Wren" }
func (failingAgent) State() *identity.State { return &identity.State{} }
func (failingAgent) Say(context.Context, string) error {
	return errors.New("save agent: disk full at /secret/path")
}

// TestServerErrors: storage failures answer 500 with a message that says
// what failed but not the internal error (which may hold paths); the error
// is logged.
func TestServerErrors(t *testing.T) {
	dir := t.TempDir()
	tasks, err := taskqueue.Open(dir, taskqueue.Options{})
	require.NoError(t, err)
	// Corrupted behind the queue's back.
	require.NoError(t, os.WriteFile(filepath.Join(dir, taskqueue.FileName), []byte("{not json"), 0o600))
	var logs bytes.Buffer
	ts := httptest.NewServer(newServer(serverConfig{
		Agent:  failingAgent{},
		Tasks:  tasks,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}))
	defer ts.Close()

	tests := []struct{ method, path, body, want string }{
		{"GET", "/tasks", "", "listing the tasks failed"},
		{"POST", "/tasks", `{"description": "x"}`, "submitting the task failed"},
		{"GET", "/tasks/task-000001", "", "reading the task failed"},
		{"POST", "/messages", `{"text": "hi"}`, "the message was delivered but could not be saved, so a restart may lose it"},
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		require.NoError(t, err)
		var e errorBody
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		resp.Body.Close()
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, tc.path)
		assert.Equal(t, tc.want, e.Error)
	}
	assert.NotContains(t, logs.String(), "level=INFO")
	assert.Contains(t, logs.String(), "corrupt queue file", "the cause is logged")
	assert.Contains(t, logs.String(), "disk full at /secret/path")
}
