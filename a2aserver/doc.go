// Package a2aserver makes running existence-loop agents reachable over A2A
// (Agent2Agent protocol v1.0): another agent, in any framework, can read
// an agent's card, give it a task, follow the task as the agent works and
// read its result. It is built on the protocol's Go SDK,
// github.com/a2aproject/a2a-go/v2 (package a2asrv), and serves the
// JSON-RPC and HTTP+JSON bindings.
//
// An A2A task is a task of the agents' task queue (task.Queue), the queue
// the monitor's POST /api/tasks and the MCP server's assign_task submit
// to: SendMessage submits the message's text as a task for the agent, the
// agent claims it at its next existence cycle and pursues it as a goal,
// and the goal's end finishes it. The A2A task id is the queue's task id,
// so tasks survive a restart of the process whenever the queue is kept in
// a store (a file, SQLite or PostgreSQL). The states map as:
//
//	task.Pending   → TASK_STATE_SUBMITTED
//	task.Assigned  → TASK_STATE_WORKING
//	task.Completed → TASK_STATE_COMPLETED, with the goal's summary (the
//	                 task's result) as the artifact "summary" and the
//	                 goal's artifacts (identity.Goal.Artifacts) as one
//	                 artifact each
//	task.Failed    → TASK_STATE_FAILED, or TASK_STATE_CANCELED when the
//	                 task was ended by CancelTask ([CanceledResult])
//
// # Agents and tenants
//
// Every agent has its own card ([Server.Card]): its name, a description
// (its role, from [Config].Profile), its skills (its tools) and the
// bearer-token security scheme. For a swarm the agent is chosen by the A2A
// tenant, which is the agent's id: the "tenant" field of each request over
// JSON-RPC, and the first path segment over HTTP+JSON
// (/a2a/rest/{agent}/message:send). With a single agent the tenant may be
// left out. Each agent's card is at /a2a/{agent}/agent-card.json and names
// its tenant in every interface; the card at
// /.well-known/agent-card.json is the agent's own for a single agent, and
// for several agents a card of the whole swarm whose skills name each
// agent (skill id = tenant).
//
// # Bad input
//
// Every request goes through the monitor's checks (hostaccess.Auth: allowed
// Host header, bearer token compared in constant time; refused on a
// public address without a strong token). A body larger than
// [Config].MaxBody gets 413 before it is decoded; an unknown agent gets
// 404; a body that is not JSON gets a JSON-RPC parse error naming the
// problem; a task id of another agent is answered as not found; a message
// with no text, too much text or non-text parts is refused with invalid
// params; at most [Config].MaxStreams streams (SendStreamingMessage and
// SubscribeToTask) are open at once, beyond which a stream is refused with
// 503. Message text goes through prompt.Clean (the unsafe-character rule)
// before it is queued, so it cannot smuggle control or bidirectional
// characters into a prompt.
package a2aserver
