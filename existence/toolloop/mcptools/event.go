package mcptools

import (
	"fmt"
	"log/slog"
	"time"
)

// EventKind names what happened to a server. Kinds are stable strings.
type EventKind string

// Event kinds.
const (
	// EventConnected: a server was started (stdio) or reached (HTTP) and
	// its initialize handshake succeeded.
	EventConnected EventKind = "mcp_connected"
	// EventRestarted: a server that had crashed or been unreachable is
	// connected again.
	EventRestarted EventKind = "mcp_restarted"
	// EventConnectFailed: starting or reaching a server failed (Err); its
	// tools fail with a [*DownError] until the backoff passes.
	EventConnectFailed EventKind = "mcp_connect_failed"
	// EventCrashed: a server's session ended without Close (a stdio
	// server exited, an HTTP connection was lost); Err says how and Text
	// when the next restart attempt is.
	EventCrashed EventKind = "mcp_crashed"
	// EventCallFailed: a tool call failed (Tool, Err, Duration): the error
	// the model sees.
	EventCallFailed EventKind = "mcp_call_failed"
	// EventToolNotOffered: at [Connect], a listed tool (Tool) is left out
	// of [Set.Tools]; Text says why (a tool whose execution.taskSupport is
	// "required" can only be called as a task, which this client does
	// only through the Tasks extension of a 2026-07-28 server over HTTP).
	EventToolNotOffered EventKind = "mcp_tool_not_offered"
	// EventElicited: a server's elicitation/create request (during a tool
	// call) was answered; Text gives the question and the answer's action,
	// Duration how long the answer took, Err an [ElicitFunc]'s failure.
	EventElicited EventKind = "mcp_elicited"
	// EventTaskCreated: a call of a task-only tool (Tool) got a task
	// handle from the server (Tasks extension); Text is the task id, which
	// the client polls with tasks/get.
	EventTaskCreated EventKind = "mcp_task_created"
)

// Event is one thing that happened to an MCP server of a [Set]. It is
// delivered to [Config].Observer and logged (failures as warnings).
type Event struct {
	Kind EventKind
	// Time is when it happened, by [Config].Now.
	Time time.Time
	// Server is the server's name; Tool the server's own name of the tool,
	// on [EventCallFailed].
	Server string
	Tool   string
	// Text adds detail; Err is the failure, when there is one.
	Text string
	Err  error
	// Duration is how long the failed call took, on [EventCallFailed].
	Duration time.Duration
}

// String describes e in one line, e.g.
// `server "fs" crashed: the server ended the session (next restart attempt in 1s)`.
func (e Event) String() string {
	s := fmt.Sprintf("server %q", e.Server)
	switch e.Kind {
	case EventConnected:
		s += " connected"
	case EventRestarted:
		s += " restarted"
	case EventConnectFailed:
		s += " could not be started or reached"
	case EventCrashed:
		s += " crashed"
	case EventCallFailed:
		s += fmt.Sprintf(": tool %q failed after %s", e.Tool, e.Duration.Round(time.Millisecond))
	case EventToolNotOffered:
		s += fmt.Sprintf(": tool %q not offered", e.Tool)
	case EventElicited:
		s += " elicited"
	case EventTaskCreated:
		s += fmt.Sprintf(": tool %q runs as a task", e.Tool)
	default:
		s += " " + string(e.Kind)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Text != "" {
		s += " (" + e.Text + ")"
	}
	return s
}

func eventLevel(k EventKind) slog.Level {
	switch k {
	case EventConnected, EventRestarted, EventElicited, EventTaskCreated:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}
