// Command embed runs one existence-loop agent inside an HTTP service: the
// agent lives its loop in the background, with real, sandboxed workspace
// tools, and people reach it over a small JSON API.
//
//	go run ./examples/embed                          # needs `ollama serve` and `ollama pull qwen3.5:9b`
//	EXISTENCE_TOKEN=secret go run ./examples/embed   # require "Authorization: Bearer secret"
//
// Endpoints (JSON in and out; errors are {"error": "..."} with a 4xx or 5xx
// status):
//
//	GET  /agent        identity, suffering (load, level, active stressors), the active goal and the inbox size
//	POST /tasks        {"description": "...", "agent": "optional id"}: assign a task (201, the task)
//	GET  /tasks        every task of the queue, oldest first
//	GET  /tasks/{id}   one task
//	POST /messages     {"text": "..."}: a host message ("A PERSON SAID"); the agent reacts at once (202)
//	GET  /events       server-sent events: one "event: {kind}" and "data: {json}" per existence.Event
//
// Every request needs "Authorization: Bearer TOKEN" when -token (or
// $EXISTENCE_TOKEN) is set. Request bodies are limited to 64 KiB and must be
// sent as Content-Type application/json (which also keeps web pages from
// posting to the service with plain cross-origin forms).
//
// State (identity, suffering, goal history, messages and the task queue)
// lives in ./embed-state and the agent's files in ./embed-workspace. Stop
// with Ctrl-C or SIGTERM: the server drains, the agent's state is saved, and
// the next run continues where this one stopped. See README.md for curl
// examples.
package main
