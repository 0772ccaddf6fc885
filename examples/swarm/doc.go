// Command swarm is the scale benchmark of issue 9: it runs N agents in one
// process on a simulated model (a fixed latency plus uniform jitter) and
// MemoryStore, on the existence scheduler, and prints what the scheduler
// did.
//
//	go run ./examples/swarm -agents 10000 -model-latency 2s -heartbeat 6s -autonomy-workers 3400 -duration 60s
//	go run ./examples/swarm -agents 10000 -autonomy-workers 16 -duration 5m -host-messages 20 -json
//
// It prints cycles/s; tick lateness p50, p99 and max for each lane;
// coalesced heartbeats; model calls (and the most in flight); RSS per
// agent; the most goroutines; CPU time. With -host-messages N it sends N
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
