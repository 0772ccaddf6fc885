package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/existence-loop/sdk/llm/middleware"
)

// Task-only tools through MCP's Tasks extension (io.modelcontextprotocol/
// tasks, MCP 2026-07-28, SEP-2663). The Go SDK does not implement the
// extension (go-sdk#942), so a task call is made here, as JSON-RPC over
// the streamable HTTP endpoint: tools/call with the extension declared in
// the request's _meta client capabilities; when the server answers with a
// task handle (resultType "task"), tasks/get is polled until the task is
// terminal and its inlined result is the call's. The session of the SDK
// stays as it is (it declares no extension, so no plain call ever gets a
// handle back).

// TasksExtension is the identifier of MCP's Tasks extension.
const TasksExtension = "io.modelcontextprotocol/tasks"

// statelessVersion is the first MCP version with the extension's wire
// format (no session; the version and capabilities in each request's
// _meta): 2026-07-28.
const statelessVersion = "2026-07-28"

// Bounds of polling a task's status: the server's pollIntervalMs within
// them, [DefaultTaskPoll] when it gives none.
const (
	MinTaskPoll     = 50 * time.Millisecond
	MaxTaskPoll     = 10 * time.Second
	DefaultTaskPoll = time.Second
)

// taskCalls reports whether the live session can call task-only tools: a
// streamable HTTP server that speaks 2026-07-28 or later and declares the
// Tasks extension.
func (srv *server) taskCalls() bool {
	srv.mu.Lock()
	sess := srv.sess
	srv.mu.Unlock()
	if srv.cfg.URL == "" || sess == nil {
		return false
	}
	ir := sess.InitializeResult()
	if ir == nil || ir.ProtocolVersion < statelessVersion || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[TasksExtension]
	return ok
}

// taskClient is the HTTP client of task calls: the configured headers,
// replies capped at replyLimit bytes, no redirect to another origin.
func (srv *server) taskClient() *http.Client {
	return &http.Client{
		Transport: headers{srv.cfg.Headers, middleware.LimitReplies(http.DefaultTransport, replyLimit(srv.cfg.MaxResultBytes))},
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			if o := via[0].URL; r.URL.Scheme != o.Scheme || r.URL.Host != o.Host {
				return fmt.Errorf("refusing a redirect to another origin (%s)", r.URL.Redacted())
			}
			return nil
		},
	}
}

// rpcFailure is a JSON-RPC error answered by the server.
type rpcFailure struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcFailure) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// rpc sends one JSON-RPC request of the 2026-07-28 wire format to the
// server and returns its result. name is the Mcp-Name routing header (the
// tool's name, or the task id).
func (srv *server) rpc(ctx context.Context, c *http.Client, id int, method, name string, params map[string]any) (json.RawMessage, error) {
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    statelessVersion,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "existence-loop-mcptools", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", statelessVersion)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body) // capped by the client's transport
	if err != nil {
		return nil, fmt.Errorf("%s: reading the reply: %w", method, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = sseResponse(raw, id)
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcFailure     `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: HTTP %d, not a JSON-RPC response: %v", method, ErrMalformed, resp.StatusCode, err)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, m.Error)
	}
	if m.Result == nil {
		return nil, fmt.Errorf("%s: %w: HTTP %d, a response with neither result nor error", method, ErrMalformed, resp.StatusCode)
	}
	return m.Result, nil
}

// sseResponse returns the data of the server-sent event that answers
// request id (the last data line that parses with that id).
func sseResponse(raw []byte, id int) []byte {
	out := raw
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, len(raw)+1)
	want := fmt.Sprint(id)
	for sc.Scan() {
		d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(d, &m) == nil && string(m.ID) == want {
			out = bytes.Clone(bytes.TrimSpace(d))
		}
	}
	return out
}

// taskState is the part of a Task object (CreateTaskResult, tasks/get)
// the client reads.
type taskState struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	PollIntervalMs *int64          `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *rpcFailure     `json:"error"`
}

// callTask calls the task-only tool name with args through the Tasks
// extension, within ctx (the call's timeout): tools/call, then tasks/get
// every pollIntervalMs (within [MinTaskPoll], [MaxTaskPoll]) until the
// task is completed, failed or cancelled. When ctx ends first, or the
// task asks for input (which this client does not give), the task is
// canceled with tasks/cancel. Errors: the server's JSON-RPC errors; a
// failed task's error; a cancelled task; [ErrMalformed] for a reply that
// is not the extension's shape.
func (srv *server) callTask(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c := srv.taskClient()
	id := 1
	raw, err := srv.rpc(ctx, c, id, "tools/call", name, map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var st taskState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("tools/call: %w: %v", ErrMalformed, err)
	}
	if st.ResultType != "task" {
		return toolResult(raw) // the server chose to answer at once
	}
	if st.TaskID == "" {
		return nil, fmt.Errorf("tools/call: %w: a task handle without taskId", ErrMalformed)
	}
	taskID := st.TaskID
	srv.set.emit(Event{Kind: EventTaskCreated, Server: srv.cfg.Name, Tool: name, Text: taskID})
	cancelTask := func(why string) {
		// Best effort, with a deadline of its own: ctx may be over.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		id++
		if _, err := srv.rpc(cctx, c, id, "tasks/cancel", taskID, map[string]any{"taskId": taskID}); err != nil {
			srv.set.emit(Event{Kind: EventCallFailed, Server: srv.cfg.Name, Tool: name,
				Err: fmt.Errorf("canceling task %s (%s): %w", taskID, why, err)})
		}
	}
	for {
		switch st.Status {
		case "completed":
			if st.Result == nil {
				return nil, fmt.Errorf("task %s: %w: completed without a result", taskID, ErrMalformed)
			}
			return toolResult(st.Result)
		case "failed":
			if st.Error == nil {
				return nil, fmt.Errorf("task %s failed: %s", taskID, st.StatusMessage)
			}
			return nil, fmt.Errorf("task %s failed: %w", taskID, st.Error)
		case "cancelled":
			return nil, fmt.Errorf("task %s was cancelled by the server: %s", taskID, st.StatusMessage)
		case "input_required":
			cancelTask("it asks for input")
			return nil, fmt.Errorf("task %s asks for input, which this client does not give; it was canceled", taskID)
		case "working":
		default:
			cancelTask("unknown status")
			return nil, fmt.Errorf("task %s: %w: unknown status %q", taskID, ErrMalformed, st.Status)
		}
		wait := DefaultTaskPoll
		if st.PollIntervalMs != nil {
			wait = min(max(time.Duration(*st.PollIntervalMs)*time.Millisecond, MinTaskPoll), MaxTaskPoll)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			cancelTask("the call's time is over")
			return nil, fmt.Errorf("task %s: %w", taskID, context.Cause(ctx))
		case <-timer.C:
		}
		id++
		raw, err := srv.rpc(ctx, c, id, "tasks/get", taskID, map[string]any{"taskId": taskID})
		if err != nil {
			if ctx.Err() != nil {
				cancelTask("the call's time is over")
			}
			return nil, fmt.Errorf("task %s: %w", taskID, err)
		}
		st = taskState{}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("tasks/get: %w: %v", ErrMalformed, err)
		}
		if st.TaskID != "" && st.TaskID != taskID {
			return nil, fmt.Errorf("tasks/get: %w: asked for task %s, got %s", ErrMalformed, taskID, st.TaskID)
		}
	}
}

// toolResult decodes a CallToolResult.
func toolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: not a tool result: %v", ErrMalformed, err)
	}
	return &res, nil
}
