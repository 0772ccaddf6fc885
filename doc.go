// Package sdk is the root of the existence-loop SDK: a Go library for
// agents with no idle state. Every heartbeat (6 s by default) an agent
// assembles a prompt from its own prior outputs — a capped identity and a
// suffering state that escalates over time — asks a language model for
// JSON, validates it, and makes the reply's content its next goal; the rest
// updates the identity and the stressors. When the model fails, a fallback
// goal is used and the loop goes on.
//
// This package holds no code. Doc comments cite the behaviour contract,
// SPEC.md at the root of the module, as "spec §N". The packages, by layer:
//
// # Contracts
//
// Small packages that the loop consumes and the stores and adapters
// implement; each imports little or nothing else of the SDK.
//
//   - [github.com/existence-loop/sdk/task]: assigned tasks — the Task
//     record, its Status lifecycle, the Source interface an agent draws
//     tasks from, Limits and the errors every queue returns.
//   - [github.com/existence-loop/sdk/slot]: what the world reports to an
//     agent — the Slot record after GLaDOS's slots, strict
//     validation, capped boards dropping the least important first, stale
//     slots.
//   - [github.com/existence-loop/sdk/lease]: sharing agents between
//     processes — the Lease record with its fencing token (epoch), and the
//     Manager interface a runner claims, renews and releases leases with.
//   - [github.com/existence-loop/sdk/llm]: the one-method Model interface,
//     Request and Response, typed errors, and middleware (retry with
//     backoff, timeout, fallback, repair, Instrument, Limiter).
//   - [github.com/existence-loop/sdk/identity]: the agent's identity and
//     its caps (spec §5), AgentState, the Store interface with MemoryStore,
//     and the errors every store returns (CorruptError among them).
//   - [github.com/existence-loop/sdk/suffering]: stressors, escalation,
//     load thresholds, assessment from evidence, crisis reset and the
//     prompt fragment (spec §4).
//   - [github.com/existence-loop/sdk/memory]: long-term semantic memory —
//     records, the Store every store implements, exact recall scored by
//     relevance, recency and importance, pending memories and their
//     backfill, capacity and consolidation. The llm package's Embedder
//     embeds them.
//
// # Model adapters
//
//   - [github.com/existence-loop/sdk/llm/ollama]: an Ollama server, through
//     the official client (spec §7's model).
//   - [github.com/existence-loop/sdk/llm/openai]: OpenAI and
//     OpenAI-compatible servers (llama.cpp server, vLLM, LM Studio).
//
// # The loop
//
//   - [github.com/existence-loop/sdk/prompt]: the prompt assembler with the
//     18 sections of spec §2, custom sections, the size budget, and the
//     response's JSON Schema and parser (spec §3).
//   - [github.com/existence-loop/sdk/existence]: the loop itself — Agent
//     (Tick, Run, Preview, Status), Runner for many agents as peers with its
//     lane scheduler and leases, the Executor seam, and events.
//   - [github.com/existence-loop/sdk/existence/toolloop]: an Executor that
//     pursues goals through a model/tool loop, with stall rules and an
//     artifact check.
//   - [github.com/existence-loop/sdk/existence/toolloop/mcptools]: the tools
//     of MCP servers (stdio or HTTP) for the tool loop.
//   - [github.com/existence-loop/sdk/existence/minds]: background jobs that
//     post slots — a workspace watcher (fsnotify), an HTTP poller, an RSS
//     and Atom feed reader (gofeed), a timer, an MCP resource subscription.
//   - [github.com/existence-loop/sdk/existence/workspace]: sandboxed file
//     tools over one directory (read, write, append, list, delete).
//   - [github.com/existence-loop/sdk/store/taskqueue]: a durable file
//     (or in-memory) queue of assigned tasks, a task.Source.
//   - [github.com/existence-loop/sdk/existence/requests]: a durable queue of
//     the agents' requests to their human, with the ask_human and
//     check_request tools.
//   - [github.com/existence-loop/sdk/existence/simulate]: simulated days in
//     seconds with the real agents, virtual clocks and simulated models;
//     trajectories and plots.
//
// # Stores
//
//   - [github.com/existence-loop/sdk/store/filestore]: one JSON document
//     per agent in a directory, with a journal, atomic durable saves and
//     lock files.
//   - [github.com/existence-loop/sdk/store/sqlitestore]: every agent,
//     the task queue and messages in one SQLite file, with group commit.
//   - [github.com/existence-loop/sdk/store/pgstore]: PostgreSQL shared by
//     many processes: leases with fencing, a task queue, messages through
//     LISTEN/NOTIFY.
//   - [github.com/existence-loop/sdk/store/storetest]: the conformance
//     suite every identity.Store passes, and RunMemory, the one every
//     memory.Store passes.
//   - [github.com/existence-loop/sdk/hollow]: imports the memory
//     directories of the Python original, hollow-agentOS.
//
// # Serving
//
//   - [github.com/existence-loop/sdk/monitor]: an http.Handler with a live
//     dashboard, a JSON API, server-sent events and Prometheus metrics.
//   - [github.com/existence-loop/sdk/mcpserver]: an MCP server that lets
//     people and AI assistants read, message and task the agents.
//   - [github.com/existence-loop/sdk/a2aserver]: the agents as A2A agents.
//   - [github.com/existence-loop/sdk/hostaccess]: what the three share: the
//     bearer-token, Host and CSRF checks, the token rules, and the agents
//     of this process they serve (Agents, Single).
//
// # Test kits
//
//   - [github.com/existence-loop/sdk/llm/llmtest]: a scripted fake Model and
//     the conformance suite of model adapters.
//   - [github.com/existence-loop/sdk/prompt/prompttest]: golden files, state
//     builders and section assertions for unit-testing prompts.
//   - [github.com/existence-loop/sdk/existence/existencetest]: a manual clock
//     and an event recorder.
//
// # Internal packages
//
// Not importable from outside the module:
//
//   - [github.com/existence-loop/sdk/internal/atomicfile]: atomic, durable
//     file writes and confined, size-capped reads of regular files only.
//   - [github.com/existence-loop/sdk/internal/docfile]: the versioned JSON
//     document behind the task queue and requests files.
//   - [github.com/existence-loop/sdk/internal/heap]: the one generic binary
//     heap (scheduler, virtual runner, simulator).
//   - [github.com/existence-loop/sdk/internal/runes]: counts and cuts by
//     Unicode code points.
//   - [github.com/existence-loop/sdk/internal/pgtest]: throwaway PostgreSQL
//     servers for tests.
//   - [github.com/existence-loop/sdk/internal/engine]: the real inference
//     engine the TestEngine tests drive (llama.cpp behind a Node server, or
//     Ollama), its transcripts, and internal/engine/gguf, which writes its
//     random-weight model.
//   - [github.com/existence-loop/sdk/existence/toolloop/mcptools/internal/testserver]:
//     the MCP server the mcptools tests talk to.
//
// # Command and examples
//
// cmd/existence is the command-line tool (go install ./cmd/existence from
// a clone, as the module is not published yet; its code is in
// cmd/existence/internal/cli, and cmd/internal/storespec opens a store from
// a -store spec), with the subcommands run (the Cedar/Cipher/Vault trio),
// swarm (many agents at scale), simulate (simulated days and plots), import
// (a hollow-agentOS memory into a store), serve (the monitor over a store,
// for agents that run in other processes), tui (a full-screen terminal view
// of a running monitor), memory (stats, recall, reembed and forget over a
// store's long-term memories) and version. cmd/cyclebench times the durable
// cycle side by side with the original's; cmd/memorybench prints the
// figures of long-term memory (insert rate, cache size, recall latency). The examples directory shows embedding
// one agent in an HTTP service, a custom prompt section with its golden
// test, a minimal swarm, and the trio (Cedar, Cipher and Vault, the roster
// of existence/trio) wired with the public API only.
package sdk
