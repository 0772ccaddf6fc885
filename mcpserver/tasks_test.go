package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/task"
)

// rpcClient speaks MCP 2026-07-28 over HTTP the way a stateless client
// does: no session, the version in the Mcp-Protocol-Version header and in
// each request's _meta, the routing headers Mcp-Method and Mcp-Name, and,
// when tasks is set, the Tasks extension among the per-request client
// capabilities.
type rpcClient struct {
	t     *testing.T
	url   string
	tasks bool
	n     int
}

// call sends method with params and returns the response's result and
// error objects and the HTTP status code. hdr overrides headers (pairs).
func (c *rpcClient) call(method string, params map[string]any, hdr ...string) (result, rpcErr map[string]any, code int) {
	c.t.Helper()
	c.n++
	if params == nil {
		params = map[string]any{}
	}
	caps := map[string]any{}
	if c.tasks {
		caps["extensions"] = map[string]any{mcpserver.TasksExtension: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcpserver.StatelessVersion,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "t", "version": "1"},
		mcp.MetaKeyClientCapabilities: caps,
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.n, "method": method, "params": params})
	require.NoError(c.t, err)
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Mcp-Protocol-Version", mcpserver.StatelessVersion)
	req.Header.Set("Mcp-Method", method)
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	} else if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				raw = []byte(d)
			}
		}
	}
	var m struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	require.NoError(c.t, json.Unmarshal(raw, &m), "%s", raw)
	return m.Result, m.Error, resp.StatusCode
}

// taskServer serves the fixture's server over httptest.
func taskServer(t *testing.T, s *mcpserver.Server) string {
	t.Helper()
	h, err := s.Handler(mcpserver.HTTPConfig{Token: "s3cret"})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestTasksExtensionLifecycle(t *testing.T) {
	f := newFixture(t)
	url := taskServer(t, f.server)
	c := &rpcClient{t: t, url: url, tasks: true}

	// A go-sdk client of 2026-07-28 finds the extension in server/discover;
	// a 2025-11-25 session (no tasks layer) is not offered it.
	for version, want := range map[string]bool{mcpserver.StatelessVersion: true, "2025-11-25": false} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err, version)
		_, ok := cs.InitializeResult().Capabilities.Extensions[mcpserver.TasksExtension]
		assert.Equal(t, want, ok, "the extension declared to %s", version)
		require.NoError(t, cs.Close())
	}

	// Create: assign_task from a declaring client answers with a handle.
	created, e, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": "map the workspace", "agent_id": "scout"}})
	require.Nil(t, e)
	assert.Equal(t, "task", created["resultType"])
	assert.Equal(t, "working", created["status"])
	assert.NotContains(t, created, "result")
	assert.NotContains(t, created, "task", "flat, no nested task")
	assert.Contains(t, created, "ttlMs")
	assert.EqualValues(t, 2000, created["pollIntervalMs"])
	id := created["taskId"].(string)
	q, err := f.tasks.Get(t.Context(), id)
	require.NoError(t, err, "the handle is the queue's task")
	assert.Equal(t, task.Pending, q.Status)
	assert.Equal(t, "scout", q.Agent)

	// Poll: submitted and working are both "working", with what happens.
	got, e, _ := c.call("tasks/get", map[string]any{"taskId": id})
	require.Nil(t, e)
	assert.Equal(t, "complete", got["resultType"])
	assert.Equal(t, "working", got["status"])
	assert.Contains(t, got["statusMessage"], "waiting for agent scout")
	_, err = f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	got, _, _ = c.call("tasks/get", map[string]any{"taskId": id})
	assert.Equal(t, "working", got["status"])
	assert.Contains(t, got["statusMessage"], "scout is pursuing it")
	assert.NotContains(t, got, "result")

	// Update: no input is ever outstanding; acknowledged, nothing changes.
	ack, e, _ := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"k": map[string]any{"action": "accept"}}})
	require.Nil(t, e)
	assert.Equal(t, map[string]any{"resultType": "complete"}, ack)

	// Completed: the agent's result inlined as the tool's result.
	_, err = f.tasks.Finish(t.Context(), id, true, "Done: notes/map.md")
	require.NoError(t, err)
	got, _, _ = c.call("tasks/get", map[string]any{"taskId": id})
	assert.Equal(t, "completed", got["status"])
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "Done: notes/map.md"}}, "isError": false}, got["result"])

	// A task the agent failed is a tool error, completed with isError.
	failed, _, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": "the impossible", "agent_id": "scout"}})
	fid := failed["taskId"].(string)
	_, err = f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	_, err = f.tasks.Finish(t.Context(), fid, false, "no way found")
	require.NoError(t, err)
	got, _, _ = c.call("tasks/get", map[string]any{"taskId": fid})
	assert.Equal(t, "completed", got["status"])
	assert.Equal(t, true, got["result"].(map[string]any)["isError"])

	// Cancel a working task: acknowledged, then cancelled; again: the
	// same acknowledgement (idempotent).
	work, _, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": "a long job", "agent_id": "scout"}})
	wid := work["taskId"].(string)
	_, err = f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	for range 2 {
		ack, e, _ = c.call("tasks/cancel", map[string]any{"taskId": wid})
		require.Nil(t, e)
		assert.Equal(t, map[string]any{"resultType": "complete"}, ack)
	}
	got, _, _ = c.call("tasks/get", map[string]any{"taskId": wid})
	assert.Equal(t, "cancelled", got["status"])
	assert.NotContains(t, got, "result")
	q, err = f.tasks.Get(t.Context(), wid)
	require.NoError(t, err)
	assert.Equal(t, task.StateCanceled, task.StateOf(q), "the queue's task is canceled, as A2A shows it too")

	// Cancel a task no agent has claimed: it never reaches one.
	pend, _, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": "not needed after all", "agent_id": "scout"}})
	pid := pend["taskId"].(string)
	ack, e, _ = c.call("tasks/cancel", map[string]any{"taskId": pid})
	require.Nil(t, e)
	assert.Equal(t, map[string]any{"resultType": "complete"}, ack)
	got, _, _ = c.call("tasks/get", map[string]any{"taskId": pid})
	assert.Equal(t, "cancelled", got["status"])
	claimed, err := f.tasks.Next(t.Context(), "scout")
	require.NoError(t, err)
	assert.Nil(t, claimed, "a canceled task never reaches an agent")
}

func TestTasksExtensionWithoutTheCapability(t *testing.T) {
	f := newFixture(t)
	c := &rpcClient{t: t, url: taskServer(t, f.server)} // declares nothing
	// assign_task falls through to the go-sdk: the plain tool result.
	res, e, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": "plain", "agent_id": "scout"}})
	require.Nil(t, e)
	assert.NotEqual(t, "task", res["resultType"])
	assert.NotContains(t, res, "taskId")
	assert.Contains(t, res, "content")
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, e, _ := c.call(m, map[string]any{"taskId": "task-000001", "inputResponses": map[string]any{}})
		require.NotNil(t, e, m)
		assert.EqualValues(t, mcp.CodeMissingRequiredClientCapabilities, e["code"], m)
		assert.Contains(t, e["data"], "requiredCapabilities", m)
	}
}

func TestTasksExtensionBadInput(t *testing.T) {
	f := newFixture(t)
	url := taskServer(t, f.server)
	c := &rpcClient{t: t, url: url, tasks: true}
	// A task of an agent this server does not serve, in a shared queue.
	other, err := f.tasks.Submit(t.Context(), "elsewhere", "builder")
	require.NoError(t, err)
	mine, err := f.tasks.Submit(t.Context(), "here", "scout")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, method string
		params       map[string]any
		hdr          []string
		code         int
		http         int
		msg          string
	}{
		{"unknown task id", "tasks/get", map[string]any{"taskId": "task-999999"}, nil, -32602, 200, "no task"},
		{"another agent's task", "tasks/get", map[string]any{"taskId": other.ID}, nil, -32602, 200, "no task"},
		{"another agent's task, cancel", "tasks/cancel", map[string]any{"taskId": other.ID}, nil, -32602, 200, "no task"},
		{"another agent's task, update", "tasks/update", map[string]any{"taskId": other.ID, "inputResponses": map[string]any{}}, nil, -32602, 200, "no task"},
		{"no taskId", "tasks/get", map[string]any{}, nil, -32602, 200, "taskId is required"},
		{"taskId not a string", "tasks/get", map[string]any{"taskId": 42}, nil, -32602, 200, "string taskId"},
		{"inputResponses not an object", "tasks/update", map[string]any{"taskId": mine.ID, "inputResponses": []int{1}}, nil, -32602, 200, "must be an object"},
		{"Mcp-Name of another task", "tasks/get", map[string]any{"taskId": mine.ID}, []string{"Mcp-Name", other.ID}, mcp.CodeHeaderMismatch, 400, "Mcp-Name"},
		{"Mcp-Method of another method", "tasks/cancel", map[string]any{"taskId": mine.ID}, []string{"Mcp-Method", "tasks/get"}, mcp.CodeHeaderMismatch, 400, "Mcp-Method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e, code := c.call(tc.method, tc.params, tc.hdr...)
			require.NotNil(t, e)
			assert.EqualValues(t, tc.code, e["code"])
			assert.Contains(t, e["message"], tc.msg)
			assert.Equal(t, tc.http, code)
		})
	}
	q, err := f.tasks.Get(t.Context(), other.ID)
	require.NoError(t, err)
	assert.Equal(t, task.Pending, q.Status, "another agent's task is untouched")

	// A body over MaxTaskRequestBytes: 413 before decoding.
	_, e, code := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": map[string]any{"description": strings.Repeat("x", mcpserver.MaxTaskRequestBytes)}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.NotNil(t, e)
	assert.Contains(t, e["message"], "MaxTaskRequestBytes")

	// Arguments the tool refuses: a tool error and no task.
	before, err := f.tasks.List(t.Context())
	require.NoError(t, err)
	for _, args := range []string{`{"description": "  "}`, `{"description": "x", "agent_id": "nobody"}`, `{"description": "a", "description": "b"}`, `{"description": "x", "extra": 1}`} {
		res, e, _ := c.call("tools/call", map[string]any{"name": "assign_task", "arguments": json.RawMessage(args)})
		require.Nil(t, e, args)
		assert.Equal(t, true, res["isError"], args)
		assert.NotContains(t, res, "taskId", args)
	}
	after, err := f.tasks.List(t.Context())
	require.NoError(t, err)
	assert.Len(t, after, len(before), "no task was created")
}

// TestTasksExtensionNeedsAQueue: without a task queue the extension is
// neither declared nor served.
func TestTasksExtensionNeedsAQueue(t *testing.T) {
	f := newFixture(t)
	s, err := mcpserver.New(mcpserver.Config{Agents: f.rn, Logger: quiet})
	require.NoError(t, err)
	c := &rpcClient{t: t, url: taskServer(t, s), tasks: true}
	res, e, _ := c.call("server/discover", nil)
	require.Nil(t, e)
	assert.NotContains(t, res["capabilities"], "extensions")
	_, e, _ = c.call("tasks/get", map[string]any{"taskId": "task-000001"})
	require.NotNil(t, e)
	assert.EqualValues(t, -32601, e["code"], "method not found: the go-sdk's answer")
}
