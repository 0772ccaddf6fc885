// Package sched is the runner's engine: the scheduler (a heap of
// heartbeats, two lanes of workers, coalescing, cooldowns, triggers,
// budgets' holds), the peers' snapshot, the leases' loop, the minds'
// supervision and the virtual-time driver. It runs agents through
// [wire.Agent] only. existence/runner is its public face, and
// existence.Agent.Run runs one agent on it.
package sched
