// Command swarm is the scale benchmark of issue 9: it runs N agents in one
// process on a simulated model (a fixed latency plus uniform jitter) and
// MemoryStore, on the existence scheduler, and prints what the scheduler
// did.
//
//	go run ./examples/swarm -agents 10000 -model-latency 2s -heartbeat 6s -autonomy-workers 3400 -duration 60s
//	go run ./examples/swarm -agents 10000 -autonomy-workers 16 -duration 5m -host-messages 20 -json
//
// It prints cycles/s; tick lateness p50, p99 and max for each lane, and the
// autonomy lane's p99 in each tenth of the run (start-up against steady
// state); the ticks dispatched and cycles run per lane; the autonomy
// workers busy on average against the model calls in flight (a busy worker
// outside a model call is overhead) and the cycles queued; each cycle's
// time beyond its model call; how many autonomy cycles started out of
// due-time order; coalesced heartbeats, and the accounting of every
// heartbeat; model calls (the most in flight, those cancelled at the stop,
// and a count by purpose and outcome); RSS per agent; the most goroutines;
// CPU time. -cpuprofile FILE writes a CPU profile of the run.
//
// Lateness is when a cycle started on a worker minus when it fell due (its
// heartbeat, the end of its cooldown, or the host message): the time it
// waited for a worker. A lane whose workers are all busy makes it grow; a
// cycle queued longer than a heartbeat has the heartbeats that fall due
// meanwhile coalesced into it. With -host-messages N it sends N
// host messages to random agents spread over the run and reports how long
// each took to be answered (the end of the agent's priority cycle). With
// -json it prints one JSON object at the end instead, with the keys
// agents, cycles, cycles_per_s, model_calls, coalesced, lateness_ms
// ({"autonomy": {"p50", "p99", "max"}, "priority": {...}}),
// rss_bytes_per_agent, goroutines_max, host_reply_ms ({"p50", "p99",
// "max"}, with -host-messages), and more (see result).
//
// Memory is sampled at every tenth of the run: RSS (rss_samples_mb), and
// the heap that was live at the end of the last GC (live_heap_samples_mb,
// from runtime/metrics), which shows what the agents hold without the
// garbage that RSS keeps until the next collection. -gc-samples runs a
// GC at each sample (after reading RSS), so that the live-heap samples are
// exact rather than as of the last GC, which may be minutes old in a
// large heap. -seasoned starts every agent with the lists of its identity
// and its resolved stressors at their caps (100 goals, 20 opinions, 20
// discoveries, 12 questions, 100 resolved stressors), as after a long
// life: a fresh agent's state grows until its lists are full, which at 16
// workers takes far longer than a run, so -seasoned is how a run measures
// the memory of a population at steady state (issue 9: memory flat over
// 5 minutes):
//
//	go run ./examples/swarm -agents 10000 -autonomy-workers 16 -duration 5m -seasoned -gc-samples
//
// -store names where the agents' states are kept (issues 10 and 11):
// memory (the default: identity.MemoryStore), a directory
// (filestore.Store, one file per agent), sqlite:PATH (one SQLite file,
// group commit) or postgres://user@host:5432/db (PostgreSQL), opened by
// internal/storespec. With a durable store each cycle also asks the store's
// task queue for a task (none are submitted), as a real deployment does
// (-no-tasks leaves the queue out), and the run prints the store's figures: saves until the stop and their
// rate, the final saves of the shutdown, failed saves, each save's time,
// and the start-up (loading the agents). -json has them as store, saves,
// saves_per_s, final_saves, save_errors, save_ms, startup_s and tasks.
//
// With PostgreSQL the agents are not added but leased (issue 11): the
// swarm enrolls agent-00000 … up to -agents in the database, and an
// existence.Runner with the store's leases claims up to -max-agents of
// them (default -agents), renews the leases every 5 s (15 s TTL), runs each
// claimed agent on the store fenced by its lease (pgstore.Store.Fenced),
// and at the stop saves every agent and releases every lease at once. So
// several swarm processes on one database share one population, each
// agent in one process at a time; kill one and its agents move to the
// others after the TTL:
//
//	go run ./examples/swarm -store postgres://localhost/swarm -agents 1000 -max-agents 500 -duration 5m &
//	go run ./examples/swarm -store postgres://localhost/swarm -agents 1000 -max-agents 500 -duration 5m
//
// It then also prints the most agents it held and the leases claimed,
// lost and released (agents_held_max, leases_claimed, leases_lost,
// leases_released), and host messages go to agents it holds. And what the
// store did in this process during the run (pgstore.Stats; -json:
// "postgres"): saves per second, the group commits and their sizes, the
// round trips to the server per cycle, the task asks answered by shared
// probes, the leases renewed, late and lost, and the first percentile of
// the time a lease had left at its renewal (lease_margin_p1_ms).
package main
