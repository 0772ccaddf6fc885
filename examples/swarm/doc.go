// Command swarm shows the existence scheduler holding many agents: one
// runner.Runner with N agents on a simulated model (existence/simulate,
// which answers at once), printing how many existence cycles per second
// they live. Each agent cycles at most once per heartbeat, so N agents
// with enough autonomy workers approach N/heartbeat cycles per second.
//
//	go run ./examples/swarm -agents 1000 -heartbeat 1s -duration 10s
//
// The full benchmark (lateness per lane, memory per agent, durable stores,
// several processes on PostgreSQL) is `existence swarm` (cmd/existence).
package main
