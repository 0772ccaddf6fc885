package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/existence-loop/sdk/internal/strictjson"
	"github.com/existence-loop/sdk/task"
)

// TasksExtension is the identifier of MCP's Tasks extension (MCP
// 2026-07-28, SEP-2663), which [Server.Handler] serves to 2026-07-28
// clients over the agents' task queue: a tools/call of assign_task from a
// client that declares the extension in the request's
// _meta["io.modelcontextprotocol/clientCapabilities"].extensions answers
// with a task handle (CreateTaskResult, resultType "task") whose taskId is
// the queue's task id; tasks/get, tasks/update and tasks/cancel follow it.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Figures of the Tasks extension.
const (
	// TaskPollInterval is the polling interval the task handles suggest
	// (pollIntervalMs): 2 seconds; an agent takes a task at its next
	// existence cycle, which is minutes rather than milliseconds.
	TaskPollInterval = 2 * time.Second
	// MaxTaskRequestBytes caps the body of a 2026-07-28 request to a
	// server with a task queue (1 MiB): the extension layer reads each
	// such body to find the extension's methods, and answers a larger one
	// 413 with a JSON-RPC error before decoding it.
	MaxTaskRequestBytes = 1 << 20
)

// JSON-RPC error codes the extension answers with (JSON-RPC 2.0 and MCP's
// own, mcp.CodeHeaderMismatch and mcp.CodeMissingRequiredClientCapabilities).
const (
	codeInvalidParams = -32602
	codeInternal      = -32603
)

// The extension is a layer in front of the go-sdk's stateless handler,
// which does not implement it (go-sdk#942): it answers the extension's
// methods itself and passes every other request on untouched, so that the
// SDK can take the methods over later by dropping the layer. The
// extension is declared in server/discover's capabilities through
// mcp.ServerOptions.Capabilities (see [New]).

// tasksLayer serves the Tasks extension in front of next.
type tasksLayer struct {
	s    *Server
	next http.Handler
}

// rpcRequest is a JSON-RPC request as the layer reads it.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	TaskID         *string         `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses"`
	Meta           json.RawMessage `json:"_meta"`
}

// callParams are the params of tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (l *tasksLayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || l.s.cfg.Tasks == nil {
		l.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxTaskRequestBytes+1))
	if err != nil {
		http.Error(w, "mcpserver: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > MaxTaskRequestBytes {
		writeRPC(w, http.StatusRequestEntityTooLarge, nil, nil, &rpcError{Code: -32600,
			Message: fmt.Sprintf("the request body is over %d bytes (mcpserver.MaxTaskRequestBytes)", MaxTaskRequestBytes)})
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req rpcRequest
	// Batches, notifications, responses and bodies that are not JSON go
	// to the SDK, which answers them as it does any other.
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || req.JSONRPC != "2.0" {
		l.next.ServeHTTP(w, r)
		return
	}
	switch req.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		l.serveTask(w, r, req)
	case "tools/call":
		var p callParams
		if json.Unmarshal(req.Params, &p) != nil || !declaresTasks(p.Meta) || l.s.taskTools[p.Name] == nil {
			l.next.ServeHTTP(w, r)
			return
		}
		l.create(w, r, req, p, l.s.taskTools[p.Name])
	default:
		l.next.ServeHTTP(w, r)
	}
}

// declaresTasks reports whether a request's _meta declares the Tasks
// extension among the client's capabilities.
func declaresTasks(meta json.RawMessage) bool {
	var m struct {
		Caps *struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil || m.Caps == nil {
		return false
	}
	_, ok := m.Caps.Extensions[TasksExtension]
	return ok
}

// headerMismatch checks the routing headers a 2026-07-28 client sends
// (Mcp-Method, Mcp-Name) against the body, as the go-sdk does for the
// methods it serves; a header that is absent is not checked.
func headerMismatch(r *http.Request, method, name string) *rpcError {
	if h := r.Header.Get("Mcp-Method"); h != "" && h != method {
		return &rpcError{Code: mcp.CodeHeaderMismatch, Message: fmt.Sprintf("the Mcp-Method header %q does not match the method %q", h, method)}
	}
	if h := r.Header.Get("Mcp-Name"); h != "" && h != name {
		return &rpcError{Code: mcp.CodeHeaderMismatch, Message: fmt.Sprintf("the Mcp-Name header %q does not match %q of the request", h, name)}
	}
	return nil
}

// serveTask answers tasks/get, tasks/update and tasks/cancel.
func (l *tasksLayer) serveTask(w http.ResponseWriter, r *http.Request, req rpcRequest) {
	var p taskParams
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil {
		writeRPC(w, http.StatusOK, req.ID, nil, &rpcError{Code: codeInvalidParams,
			Message: req.Method + ": params must be an object with the string taskId"})
		return
	}
	if !declaresTasks(p.Meta) {
		writeRPC(w, http.StatusOK, req.ID, nil, &rpcError{Code: mcp.CodeMissingRequiredClientCapabilities,
			Message: req.Method + " needs the client capability " + TasksExtension + ": declare it in the request's _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions",
			Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}})
		return
	}
	if p.TaskID == nil || *p.TaskID == "" {
		writeRPC(w, http.StatusOK, req.ID, nil, &rpcError{Code: codeInvalidParams, Message: req.Method + ": params.taskId is required"})
		return
	}
	id := *p.TaskID
	if e := headerMismatch(r, req.Method, id); e != nil {
		writeRPC(w, http.StatusBadRequest, req.ID, nil, e)
		return
	}
	if req.Method == "tasks/update" && len(p.InputResponses) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(p.InputResponses, &m) != nil {
			writeRPC(w, http.StatusOK, req.ID, nil, &rpcError{Code: codeInvalidParams, Message: "tasks/update: params.inputResponses must be an object"})
			return
		}
	}
	ctx := r.Context()
	t, e := l.ownTask(ctx, id)
	if e != nil {
		writeRPC(w, http.StatusOK, req.ID, nil, e)
		return
	}
	switch req.Method {
	case "tasks/get":
		writeRPC(w, http.StatusOK, req.ID, l.detailed(t, "complete"), nil)
	case "tasks/update":
		// The agents' tasks never ask for input (no status
		// input_required), so no key is outstanding: the responses are
		// ignored, as the extension says for keys not outstanding.
		writeRPC(w, http.StatusOK, req.ID, map[string]any{"resultType": "complete"}, nil)
	case "tasks/cancel":
		_, err := task.Cancel(ctx, l.s.cfg.Tasks, t.ID)
		switch {
		case err == nil, errors.Is(err, task.ErrEnded):
			// Canceling an ended task is acknowledged too (the
			// extension's cancellation is idempotent).
			writeRPC(w, http.StatusOK, req.ID, map[string]any{"resultType": "complete"}, nil)
		default:
			l.internal(w, req, err)
		}
	}
}

// ownTask returns the queue's task id when it is one of the served
// agents' (or for any agent); another agent's task, like one that does not
// exist, is invalid params, so that a server of some agents of a shared
// queue shows none of the others' tasks.
func (l *tasksLayer) ownTask(ctx context.Context, id string) (task.Task, *rpcError) {
	notFound := &rpcError{Code: codeInvalidParams, Message: "Failed to retrieve task: no task " + strconv.Quote(id) + " (task ids are the queue's, such as task-000042)"}
	t, err := l.s.cfg.Tasks.Get(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return task.Task{}, notFound
	}
	if err != nil {
		l.s.cfg.Logger.Error("mcp tasks: reading the task queue", "task", id, "err", err)
		return task.Task{}, &rpcError{Code: codeInternal, Message: "reading the task queue: " + err.Error()}
	}
	agent := t.Agent
	if agent == "" {
		agent = t.AssignedTo
	}
	if agent != "" && l.s.cfg.Agents.Agent(agent) == nil {
		return task.Task{}, notFound
	}
	return t, nil
}

// taskTool creates the task of a task-creating tool call from its
// arguments. An error wrapped in a [refusal] is the tool's answer to bad
// arguments (a tool error, isError); any other is the queue's failure.
type taskTool func(ctx context.Context, args json.RawMessage) (task.Task, error)

// refusal marks an error as the tool's own answer (a tool error).
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// assignTask is assign_task's taskTool: the tool's arguments and checks,
// then the task submitted to the queue.
func (s *Server) assignTask(ctx context.Context, args json.RawMessage) (task.Task, error) {
	var in taskArgs
	if len(args) > 0 && string(args) != "null" {
		if err := strictjson.Check(args); err != nil {
			return task.Task{}, refusal{fmt.Errorf("assign_task: %w: %v; send each key once", ErrInvalid, err)}
		}
		d := json.NewDecoder(bytes.NewReader(args))
		d.DisallowUnknownFields()
		if err := d.Decode(&in); err != nil {
			return task.Task{}, refusal{fmt.Errorf("assign_task: %w: %v", ErrInvalid, err)}
		}
	}
	if in.AgentID != "" {
		if _, err := s.agent(in.AgentID); err != nil {
			return task.Task{}, refusal{err}
		}
	}
	t, err := s.cfg.Tasks.Submit(ctx, in.Description, in.AgentID)
	if errors.Is(err, task.ErrInvalid) || errors.Is(err, task.ErrFull) {
		return task.Task{}, refusal{fmt.Errorf("assign_task: %w", err)}
	}
	return t, err
}

// create runs a task-creating tool call and answers with the task's
// handle; a refusal is answered as the tool answers it, a tool error
// (isError), with no task created.
func (l *tasksLayer) create(w http.ResponseWriter, r *http.Request, req rpcRequest, p callParams, tool taskTool) {
	if e := headerMismatch(r, req.Method, p.Name); e != nil {
		writeRPC(w, http.StatusBadRequest, req.ID, nil, e)
		return
	}
	t, err := tool(r.Context(), p.Arguments)
	var refused refusal
	switch {
	case errors.As(err, &refused):
		writeRPC(w, http.StatusOK, req.ID, map[string]any{"resultType": "complete", "isError": true,
			"content": []map[string]any{{"type": "text", "text": refused.Error()}}}, nil)
		return
	case err != nil:
		l.internal(w, req, err)
		return
	}
	l.s.cfg.Logger.Debug("mcp tasks: task created", "tool", p.Name, "task", t.ID, "agent", t.Agent)
	// The queue has stored the task, so a tasks/get for it resolves: the
	// extension's rule for answering with a handle.
	writeRPC(w, http.StatusOK, req.ID, l.handle(t, "task"), nil)
}

// internal answers an error of the queue as a JSON-RPC internal error and
// logs it.
func (l *tasksLayer) internal(w http.ResponseWriter, req rpcRequest, err error) {
	l.s.cfg.Logger.Error("mcp tasks: task queue", "method", req.Method, "err", err)
	writeRPC(w, http.StatusOK, req.ID, nil, &rpcError{Code: codeInternal, Message: "the task queue failed: " + err.Error()})
}

// statusOf maps a queue task to the extension's status (see the package
// documentation): task.StateOf, in the extension's words. A task that
// failed in the queue (by the agent, or expired) is a tool that ran and
// reported an error, so "completed" with isError; "failed" is for
// JSON-RPC errors only.
func statusOf(t task.Task) string {
	switch task.StateOf(t) {
	case task.StateCompleted, task.StateFailed:
		return "completed"
	case task.StateCanceled:
		return "cancelled"
	}
	return "working"
}

// handle is the Task object of t: its id, status, a status message,
// timestamps (RFC 3339, UTC), ttlMs null (the queue keeps an ended task
// until [task.Limits].MaxTasks newer ones have ended) and the polling
// interval; resultType is "task" for a CreateTaskResult and "complete"
// for tasks/get.
func (l *tasksLayer) handle(t task.Task, resultType string) map[string]any {
	updated := t.Submitted
	for _, ts := range []time.Time{t.Assigned, t.Ended} {
		if ts.After(updated) {
			updated = ts
		}
	}
	var msg string
	switch task.StateOf(t) {
	case task.StateSubmitted:
		if t.Agent == "" {
			msg = "waiting for the first free agent to claim it"
		} else {
			msg = "waiting for agent " + t.Agent + " to claim it at its next existence cycle"
		}
	case task.StateWorking:
		msg = "agent " + t.AssignedTo + " is pursuing it as its goal"
	case task.StateCompleted:
		msg = "completed by agent " + t.AssignedTo
	case task.StateFailed:
		msg = "failed: " + t.Result
	case task.StateCanceled:
		msg = t.Result
	}
	return map[string]any{
		"resultType":     resultType,
		"taskId":         t.ID,
		"status":         statusOf(t),
		"statusMessage":  msg,
		"createdAt":      t.Submitted.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          nil,
		"pollIntervalMs": TaskPollInterval.Milliseconds(),
	}
}

// detailed is the DetailedTask of t for tasks/get: the handle, and once
// the task has ended (not canceled) the assign_task call's result: the
// agent's result as text, with isError when the task failed.
func (l *tasksLayer) detailed(t task.Task, resultType string) map[string]any {
	m := l.handle(t, resultType)
	switch task.StateOf(t) {
	case task.StateCompleted:
		m["result"] = map[string]any{"content": []map[string]any{{"type": "text", "text": t.Result}}, "isError": false}
	case task.StateFailed:
		m["result"] = map[string]any{"content": []map[string]any{{"type": "text", "text": "the task failed: " + t.Result}}, "isError": true}
	}
	return m
}

// writeRPC writes a JSON-RPC response with result or error, as
// application/json with HTTP status code.
func writeRPC(w http.ResponseWriter, code int, id json.RawMessage, result any, e *rpcError) {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if len(id) == 0 {
		resp["id"] = nil
	}
	if e != nil {
		resp["error"] = e
	} else {
		resp["result"] = result
	}
	body, err := json.Marshal(resp)
	if err != nil { // only maps, strings and numbers: cannot happen
		body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encoding the response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
