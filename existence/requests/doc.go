// Package requests is a durable queue of requests from agents to their
// human: approvals, questions and build requests that a person answers
// later, on their own time (they wake up to a log and decide what to
// approve).
//
// An agent files a request with the ask_human tool ([AskHuman]) while it
// pursues a goal, and looks at it later with check_request
// ([CheckRequest]); [Tools] returns both. A person lists the open requests
// and answers them from the monitor's dashboard or API, over MCP
// (package mcpserver), or from the trio's standard input
// (/requests, /answer N text, /approve N, /reject N why). [Deliver] then
// puts the answer in the agent's inbox, so that it appears in the agent's
// next prompt.
//
// # Lifecycle
//
// A [Request] goes [Pending] → [Approved], [Rejected] or [Answered]; those
// three are final. An approval can be approved or rejected, a question or a
// build request answered (or rejected). An ended request cannot be answered
// again ([ErrEnded]).
//
// Ended requests are kept for reference, up to [Options.MaxRequests]
// (oldest ended dropped first); open requests are never dropped, and at
// most [Options.MaxOpen] may be open per agent ([ErrFull]).
//
// # Durability and concurrency
//
// [Open] keeps the queue in dir/requests.json, next to the task queue's
// tasks.json in the same state directory, with the same care as
// store/taskqueue: every update takes an in-process lock and the
// cross-process advisory lock dir/requests.lock, reads the file, applies the
// change and writes it back atomically and durably (temp file, fsync,
// atomic rename, fsync of the directory). A file that cannot be used (bad
// JSON, unknown fields, a newer schema version, duplicate ids, larger than
// [MaxFileSize]) is never overwritten: every operation returns a
// [*identity.CorruptError] naming the file and the reason, matching [identity.ErrCorrupt].
//
// [OpenBackend] keeps the same document (same JSON, schema version, size
// limit and errors) in a database instead, so that the requests live in
// the same store as the tasks: a [Backend] loads the document's
// bytes and updates them in a write transaction that excludes every other
// writer, in any process. store/sqlitestore and store/pgstore
// provide one (their Document method, a row of a documents table) without
// this package importing them; cmd/internal/storespec.OpenRequests picks it
// for a sqlite: or postgres:// store.
//
// [NewMemory] gives the same queue without a file.
package requests
