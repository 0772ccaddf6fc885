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
// -store memory (the default) is the only store for now.
package main
