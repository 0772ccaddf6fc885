// Package monitor lets people watch existence-loop agents live and talk to
// them: an http.Handler any application can mount, serving a
// web dashboard, a JSON API, a server-sent event stream, /healthz and
// Prometheus metrics.
//
//	addr := "127.0.0.1:8080"
//	mon, err := monitor.New(monitor.Config{Runner: rn, Tasks: tasks, Requests: reqs, Token: token, Addr: addr})
//	// then add the agents with Observer: mon.Observe (rn.Add); for one
//	// Agent, built before the monitor, give it an Observer that forwards to
//	// the monitor once it exists (examples/embed), then:
//	srv := monitor.NewServer(addr, mon) // safe timeouts; Shutdown also ends the event streams
//	go srv.ListenAndServe()
//
// Serve it with [NewServer] (or give your own http.Server its
// timeouts): a bare http.Server has none, and a client sending its headers
// slowly holds a connection open for ever.
//
// # Endpoints
//
// JSON in and out; errors are {"error": "..."} with a 4xx or 5xx status.
//
//	GET  /                           the dashboard (embedded HTML, CSS and a small script; no build step)
//	GET  /healthz                    {"status":"ok","agents":N,"uptime_seconds":S} (no token needed)
//	GET  /metrics                    Prometheus metrics (github.com/prometheus/client_golang)
//	GET  /api/agents                 one page of agents (AgentsPage): ?q= (name or id contains), ?sort=load|fallbacks|name,
//	                                 ?offset=, ?limit= (default 24, at most 500), ?history=1 (load history for the chart)
//	GET  /api/agents/{id}            one agent's full state (AgentDetail)
//	GET  /api/agents/{id}/memories   its long-term memories (MemoriesPage, with [Config].Memory): ?q= recalls the
//	                                 ?k= (default 10) best for q with the parts of their scores, else the k newest;
//	                                 a read never changes a memory
//	GET  /api/events                 server-sent events, "event: {kind}" and "data: {json}" with the thoughts-log
//	                                 "line"; ?agent=id,id and ?kind=kind,kind filter (both repeatable)
//	GET  /api/thoughts               the last 200 thoughts-log lines of every agent
//	POST /api/messages               {"text": "...", "agents": ["id"]}: a host message (A PERSON SAID); no agents = all (202)
//	GET  /api/tasks                  the task queue
//	POST /api/tasks                  {"description": "...", "agent": "optional id"}: assign a task (201)
//	GET  /api/requests               requests to the human with their age: ?status=pending|approved|rejected|answered|all, ?agent=
//	POST /api/requests/{id}/answer   {"status": "approved|rejected|answered", "answer": "..."}: answer; the answer
//	                                 is delivered to the agent's inbox and appears in its next prompt
//	POST /api/agents/{id}/slots      a slot (SlotRequest: slot_id, title, status, summary, importance, confidence,
//	                                 next_run, notify_user) on the agent's own board; with notify_user the agent
//	                                 runs a cycle at once (202)
//	GET  /api/slots                  the shared board (SharedSlotsPage), most important first
//	POST /api/slots                  a slot on the board the agents share (202); notify_user wakes every agent that sees it
//	DELETE /api/agents/{id}/slots/{slot_id}  removes a slot from the agent's board (200 SlotRemoved; 404 if absent)
//	DELETE /api/slots/{slot_id}      removes a slot from the shared board (200 SlotRemoved; 404 if absent)
//
// Slots are checked strictly: slot_id and status required, importance and
// confidence 0–1, next_run 0 or more seconds, no control or
// bidirectional-control characters, title and summary within 80 and 500
// characters (400 otherwise). A [Source] that is not a [SlotSource] answers
// the slot endpoints with 501 (the DELETE ones: not a [SlotRemover]); an agent's status (GET /api/agents) lists
// its own board (existence.Status.Slots).
//
// The dashboard shows one page of agents at a time, heaviest suffering load
// first, with search by name and paging, so that it stays usable with
// 10,000 agents: never 10,000 cards. Each card has the agent's name, goal,
// a suffering bar coloured by level, stressor bars, a chart of its load over
// time (from a bounded in-memory history, [Config].History samples per
// agent), its worldview, its most important slots (stale ones marked) and
// last thoughts, its memory counts (with [Config].Memory), and a message
// box. A side panel holds the shared board's slots, the live thoughts
// stream, the open requests with their age and
// answer buttons, and the task queue. The header shows each scheduler lane's
// queued and running cycles and the p50/p99 lateness of its last 256
// cycles ([AgentsPage].Scheduler).
//
// # Security
//
// [New] refuses a monitor served on an address other machines can reach
// ([Config].Addr not a loopback address) without a [Config].Token, with
// [ErrNoToken], or with a token of fewer than [hostaccess.MinTokenLength] (16)
// characters other than white space, fewer than [hostaccess.MinTokenDistinct] (8)
// different ones, or mostly a run of repeated or consecutive characters,
// with [hostaccess.ErrWeakToken] ([hostaccess.CheckToken]; [hostaccess.GenerateToken]
// makes a good one); behind a reverse proxy that authenticates every request,
// [Config].InsecureNoTokenBehindProxy allows it and New logs a warning.
// Every request goes through [hostaccess.Auth], the checks the MCP and A2A
// endpoints share ([hostaccess.Auth.Middleware]; [Monitor.Auth] returns
// the monitor's, so that one session passes them all):
//
//   - Host-header allow-list against DNS rebinding: localhost, *.localhost,
//     the loopback addresses, the bound address ([Config].Addr; every
//     address of the machine when it binds all interfaces) and
//     [Config].AllowedHosts; anything else, other IP literals included,
//     gets 421;
//   - with [Config].Token, a bearer token (constant-time compare) on every
//     request but /healthz, the page and its script included; a browser
//     opens /?token=TOKEN once and gets an HttpOnly, SameSite=Strict
//     session cookie instead;
//   - requests that change something need the bearer token or their
//     session's CSRF token in X-CSRF-Token. Each session has its own (an
//     HMAC of the session keyed by the token), served only in that
//     session's page: a client without the token never sees one, and
//     another origin's page can neither read it nor set the header;
//   - JSON bodies only (415 otherwise), at most [Config].MaxBody bytes (413),
//     decoded with encoding/json/v2 semantics: field names match exactly,
//     and unknown fields, a key named twice ({"text": "a", "text": "b"})
//     and trailing data are refused (400).
//
// # Metrics
//
// Counters and histograms fed by [Monitor.Observe]: existence_cycles_total,
// existence_cycle_duration_seconds, existence_fallbacks_total{cause},
// existence_model_calls_total{purpose,outcome},
// existence_model_call_duration_seconds{purpose},
// existence_model_tokens_total{purpose,direction,model,lane,estimated},
// existence_budget_exhausted_total{scope},
// existence_goals_ended_total{status}, existence_tool_calls_total{result},
// existence_context_overflows_total{purpose,how},
// existence_context_compactions_total{method},
// existence_slots_total{board,change} (board agent or shared; change
// posted, dropped or removed), existence_mind_failures_total,
// existence_monitor_events_total, and existence_cycle_lateness_seconds{lane}:
// how late each scheduled cycle started against its due time
// (event.CycleStats.Lateness), by lane (autonomy, priority). Computed
// when scraped: existence_agents{level}, existence_stressors_active{type},
// existence_agents_falling_back, existence_agents_budget_exhausted,
// existence_requests_pending, existence_monitor_streams; and, from the
// Runner's [Scheduler] Stats (an optional interface: *runner.Runner has
// it, [hostaccess.Single] does not), the lanes' queue depth existence_lane_queued{lane},
// existence_lane_running{lane}, existence_lane_dispatched_total{lane},
// existence_lane_workers{lane} (the autonomy lane's is its concurrency
// limit), existence_heartbeats_coalesced_total (without a Scheduler, the
// latter is summed from the cycle events), existence_budget_held_total,
// what the runner sees of the model server (existence_model_calls_in_flight,
// existence_model_latency_seconds{kind} with kind min or recent,
// existence_model_overloads_total for its 503s,
// existence_model_server_calls_total, existence_concurrency_adaptive) and
// the runner-wide budget (existence_runner_budget_used_tokens,
// existence_runner_budget_tokens). No metric has an agent label, so series stay
// bounded at any number of agents.
package monitor
