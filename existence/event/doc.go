// Package event holds what an agent reports as it runs: an [Event] of one
// [Kind] (a goal chosen, a stressor added, a model call, a cycle, a lease
// lost, …) with the stats it carries ([CycleStats], [ModelCallInfo],
// [ContextStats], …), and the [Observer] an agent or a runner delivers
// them to. Kinds are stable strings, safe to match in logs and in JSON
// consumers; [Event.String] is the thoughts-log line (spec §8).
//
// Events are delivered on the agent's goroutine: an Observer must not
// block, and must not call back into the agent that reports.
package event
