// Package mcpserver lets people and AI assistants reach running
// existence-loop agents through MCP (Model Context Protocol): an
// assistant pointed at it can read the agents' state, suffering and recent
// thoughts, speak to them, give them tasks and answer their requests.
//
// [New] wraps an *runner.Runner (or one agent, [SingleAgent]) in an MCP
// server built with the official Go SDK,
// github.com/modelcontextprotocol/go-sdk. Its tools:
//
//   - list_agents: every agent with its status (suffering load and level,
//     active goal, last ended goal, unread messages);
//   - agent_state {agent_id}: one agent's identity (worldview, opinions,
//     questions, narrative, discoveries, latest goals), suffering and unread
//     messages;
//   - agent_suffering {agent_id}: its load, level, active and resolved
//     stressors;
//   - agent_events {agent_id, limit, kinds}: its recent events (goals
//     chosen with their reasoning, goals ended, tool calls, stressors,
//     messages, errors), from an [EventLog] fed by the runner's Observer;
//   - send_message {text, agent_ids}: a host message ("A PERSON SAID");
//     a repeated id is told once, and more than [MaxMessageAgents]
//     different ids are refused;
//   - assign_task {description, agent_id}: a task for the queue;
//   - list_tasks {status}: the task queue;
//   - list_requests {status, agent_id}, approve_request {id, text},
//     reject_request {id, text}, answer_request {id, answer}: the agents'
//     requests to their human ([Requests]);
//   - post_slot {agent_id, slot_id, title, status, summary, importance,
//     confidence, next_run, notify_user}: a slot (slot.Slot, GLaDOS) on
//     one agent's board, or without agent_id on the board every agent
//     shares (runner.Runner.PostSharedSlot), checked as the monitor's
//     POST /api/slots; with notify_user the agents consider it at once;
//   - list_slots {agent_id}: one agent's board or the shared one, most
//     important first, stale slots marked.
//
// Failures (an unknown agent, a missing queue, a blank message, arguments
// that name a key twice) come back as tool errors with a message that says
// what to do. Each agent's state
// document is also a resource, existence://agents/{id}/state
// (application/json), listed and available through a resource template.
//
// # Transports and authentication
//
// [Server.ServeStdio] serves one client over standard input and output: the
// assistant starts the process itself (for example `existence run
// -mcp-serve`) and is the only party connected to its pipes. There is no
// authentication over stdio, and none is needed: nothing listens on a
// network or a socket, and whoever can start the process can already read
// its state directory and run the agents as the same user. This is the MCP
// specification's own position for the stdio transport.
//
// [Server.Handler] serves the streamable HTTP transport to clients of both
// generations of the protocol on one endpoint: a 2025-11-25 client
// initializes a session (stateful), a 2026-07-28 client (stateless core:
// server/discover, the version in each request's _meta and the
// Mcp-Protocol-Version header, no session id) is served by the go-sdk's
// stateless handler, chosen by that header ([StatelessVersion]). tools/list
// is in name order, the same on every call, which keeps a client's prompt
// prefix (and a model server's KV cache) stable. To 2026-07-28 clients the
// handler also serves MCP's Tasks extension ([TasksExtension],
// io.modelcontextprotocol/tasks), which the go-sdk does not implement, as
// a layer in front of its stateless handler: assign_task called with the
// extension declared in the request's _meta answers with a task handle
// whose taskId is the task queue's id, and tasks/get, tasks/update and
// tasks/cancel follow it. The status maps from task.StateOf, the mapping
// A2A uses too: submitted and working are "working"; completed is
// "completed" with the agent's result as the tool's; a task the agent
// failed is "completed" with isError (the extension keeps "failed" for
// JSON-RPC errors); a canceled one is "cancelled". tasks/cancel ends the
// task with task.Cancel (a pending task never reaches an agent). An unknown
// task, or one of an agent this server does not serve, is invalid params
// (-32602); tasks/* without the declared extension is -32021. The handler is reachable by
// anything that can open a connection, so it applies the monitor's checks
// (hostaccess.Auth, shared with a monitor in the same process if wanted) to
// every request: a bearer token (required, compared in constant time) and
// a Host header naming localhost or a *.localhost name (in any case, with
// or without a trailing dot), a loopback address, the bound address or an
// allowed name, against DNS rebinding from a browser; the go-sdk's own,
// narrower localhost check is turned off so that this one rule applies. Its sessions
// expire after [HTTPConfig].IdleTimeout without a request (default 30
// minutes, the go-sdk's own mechanism), and at most
// [HTTPConfig].MaxSessions (default 1,000) are open at once: beyond that a
// new session gets 503 with a JSON-RPC error that says so, so that a client
// calling initialize in a loop cannot grow the server without bound.
package mcpserver
