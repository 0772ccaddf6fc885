// Command embed runs one existence-loop agent inside an HTTP service: the
// agent lives its loop in the background, with real, sandboxed workspace
// tools and the ask_human and check_request tools (existence/requests), and
// people reach it through the monitor package: a web dashboard, a JSON API,
// server-sent events, /healthz and Prometheus metrics.
//
//	go run ./examples/embed                          # needs `ollama serve` and `ollama pull qwen3.5:9b`
//	EXISTENCE_TOKEN=secret go run ./examples/embed   # require "Authorization: Bearer secret"
//
// Open the dashboard at http://127.0.0.1:8080/?token=TOKEN (once: the page
// then keeps a session cookie). Endpoints (the monitor's; JSON in and out,
// errors are {"error": "..."} with a 4xx or 5xx status):
//
//	GET  /                           the dashboard
//	GET  /healthz                    {"agents":1,"status":"ok","uptime_seconds":S} (no token needed)
//	GET  /metrics                    Prometheus metrics
//	GET  /api/agents                 {"total","offset","limit","agents":[status and last thoughts],"pending_requests"}
//	GET  /api/agents/{id}            {"status","identity","history","thoughts"}: one agent's full state
//	GET  /api/events                 server-sent events, "event: {kind}" and "data: {json}"; ?kind=a,b and ?agent=id filter
//	GET  /api/thoughts               {"thoughts":[...]}: the last 200 thoughts-log lines
//	POST /api/messages               {"text": "...", "agents": ["id"]}: a host message ("A PERSON SAID"); the agent reacts at once (202)
//	GET  /api/tasks                  {"tasks":[...]}: the task queue, oldest first
//	POST /api/tasks                  {"description": "...", "agent": "optional id"}: assign a task (201, the task)
//	GET  /api/requests               {"requests":[...]}: the agent's requests to its human; ?status=pending|approved|rejected|answered|all
//	POST /api/requests/{id}/answer   {"status": "approved|rejected|answered", "answer": "..."}: the answer reaches the agent's inbox
//
// With -http-token (or $EXISTENCE_TOKEN), every request but /healthz needs
// "Authorization: Bearer TOKEN" or the dashboard's session cookie. A POST
// without the bearer token (from the page, or with no token set) must also
// carry the page's CSRF token in X-CSRF-Token. Bodies are JSON
// (Content-Type application/json), at most 64 KiB. The Host header must
// name a loopback address or the address the service listens on
// (DNS-rebinding protection; anything else gets 421).
//
// State (identity, suffering, goal history, messages, the task queue and
// the requests) lives in ./embed-state and the agent's files in
// ./embed-workspace. Stop with Ctrl-C or SIGTERM: the server drains, the
// agent's state is saved, and the next run continues where this one
// stopped. See README.md for curl examples.
package main
