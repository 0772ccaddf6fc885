// Package existence runs the existence loop (spec §1): an agent with no idle
// state that, every heartbeat, escalates and assesses its suffering and, when
// it has no active goal, assembles a prompt from its own prior outputs, asks
// a model for JSON, validates it and applies it. The reply's content becomes
// the next goal; the rest updates the identity and the stressors. When the
// model fails, the spec §6 fallback goal is used and the loop goes on.
//
// # One agent
//
// An [Agent] combines an identity and suffering state (loaded from an
// [identity.Store]), a [prompt.Assembler], an [llm.Model], and an
// [Executor] that pursues goals. [New] loads or creates it; [Agent.Run]
// ticks every [Config].Timing.Heartbeat (6 s by default) until its context ends:
//
//	agent, err := existence.New(ctx, existence.Config{
//		ID:    "scout",
//		Name:  "Cedar",
//		Model: model, // e.g. from llm/ollama
//		Store: store, // e.g. filestore.Open("./state", ...)
//	})
//	if err != nil { ... }
//	defer agent.Close()
//	err = agent.Run(ctx)
//
// [Agent.Tick] runs one heartbeat, for callers with their own scheduler and
// for tests; [Agent.Preview] shows the prompt the next cycle would read.
//
// [Agent.Run] drives the agent with the same scheduler as a [runner.Runner] of
// one agent. [Agent.Status] is a snapshot for dashboards (package monitor).
//
// # Several agents
//
// A [runner.Runner] (package existence/runner) runs agents as peers over one store: each agent's "YOUR PEERS"
// section shows the others' names and narratives (at most
// [runner.Config].MaxPeersShown, chosen as [runner.Runner] describes), and an
// agent entering crisis tells the others once (spec §4). Agents
// are data, not goroutines: heartbeats are due times in a timer heap, and
// a due cycle waits in one of two [runner.Lane]s, each a bounded worker pool.
// The priority lane answers host messages, tasks announced with
// [runner.Runner.Wake] and agents in crisis ahead of all autonomy work; the
// autonomy lane runs ordinary cycles ([runner.Config].AutonomyWorkers,
// default 1, suits one local GPU), not before [runner.Config].Cooldown
// after the agent's previous cycle. An agent has at most one cycle queued
// or running: heartbeats falling due meanwhile are coalesced into it and
// never call the model. The lanes bound the cycles' model calls; an
// [middleware.Limiter] of [runner.Config].MaxInFlight slots bounds the calls made
// outside them (executors, and [Agent.Tick] called directly).
// [runner.Runner.Stats] and each cycle's [event.CycleStats] report dispatches,
// coalesced heartbeats and lateness.
//
// # The model server
//
// The model server usually runs out before the SDK does. With
// [runner.AdaptiveWorkers] as AutonomyWorkers, the autonomy lane finds the
// server's capacity itself: a [middleware.AdaptiveLimit] measures every model
// call next to the adapter and grows the lane while latency stays near its
// minimum, shrinking it when latency climbs or the server answers 503
// ([runner.Stats].Concurrency); the priority lane has a reserved share of
// that limit and grows to all of it, and its calls ([middleware.WithPriority])
// retry after a short wait. Every call carries its agent's id
// ([pool.WithAgent]), by which a [pool.Pool] pins the agent to one server. Every call's tokens (the server's counts,
// else estimates) are counted per agent and per model ([Status].Usage) and
// against a token [budget.Budget] over a sliding window ([Config].Calls.Budget,
// [runner.Config].SharedBudget): while it is spent, autonomy cycles and
// executor calls wait, coalescing heartbeats as a cooldown does, with one
// [event.BudgetExhausted] each time; host messages and tasks may draw on
// its Reserve. With a [Config].TracerProvider, cycles and goals are
// OpenTelemetry invoke_agent spans, model calls chat spans and tool calls
// execute_tool spans (GenAI semantic conventions).
//
// With [runner.Config].Leases (a [lease.Manager], such as store/pgstore's
// store) several processes share one population: each agent runs in one
// process at a time under a lease whose epoch fences its writes, and the
// agents of a process that dies move to the others. [runner.Runner.RunVirtual]
// drives the same scheduler in virtual time, deterministically and
// without sleeping (existence/simulate); existence/existencetest has a
// manual clock and an event recorder for tests.
//
// # Goals
//
// An [Executor] pursues each chosen goal in its own goroutine while the
// heartbeats go on, and returns DONE, FAILED or ABANDONED with a summary
// that the next prompt shows. [Immediate] completes goals at once;
// existence/toolloop runs a model/tool loop over tools such as the sandboxed
// files of existence/workspace. Assigned tasks come from a [task.Source]
// ([Config].Tasks: an store/taskqueue queue, or the task queue of a
// SQLite or PostgreSQL store; spec §2 row 1); host messages
// ([Agent.SayAsHost]) interrupt the goal and trigger a cycle at the next
// tick. Before a goal the agent chose itself starts, a [GoalAnnotator] may
// append a note to it (by default [OpinionConflict], the original's
// opinion-conflict check, spec §3).
//
// Stall rules, after the original's daemon, abandon a goal that goes
// nowhere ("goal_span": still pursued [Config].Timing.MaxGoalDuration after
// it started, 2 minutes by default, whatever the heartbeat; toolloop adds
// the others), and a goal that
// nearly repeats one of the last 10 goals (sharing at least 0.9 of its
// distinct words with one, an [event.GoalRepeat]) counts
// as a failure in the suffering assessment even when it ended DONE.
//
// # Long-term memory
//
// [Config].Memory.LongTerm gives the agent a long-term memory (package memory): the
// memory's events about it reach the [event.Observer] (as [event.Memory], with
// memory's own event in Event.Memory), executors receive it as
// [Assignment].Memory (existence/toolloop stores every step's outcome,
// recalls before each goal and offers remember and recall tools), and
// when the prompt has the memories section (prompt.Memories) each cycle
// recalls [Config].Memory.K memories for [Config].Memory.Query
// (by default the task, the host's message or the last goal).
// A closed agent's memory cache is dropped, so that the next holder of
// its lock or lease is the one writer.
//
// # Senses: slots, minds and triggers
//
// The world reaches an agent through slots (package slot, after GLaDOS's,
// GLaDOS): short reports with a status, a summary, an importance and a
// confidence (0–1), the seconds until the next update, and notify_user.
// [Agent.PostSlot] puts one on the agent's own board, kept with its state
// ([Config].Memory.MaxSlots, the least important dropped first); a board shared
// by several agents and processes is an identity.SharedBoard
// ([Config].Memory.SharedSlots, [runner.Config].SharedSlots,
// [runner.Runner.PostSharedSlot]). The prompt lists the slots where the
// assembler places prompt.SlotsSection, most important first.
//
// A slot posted with notify_user is a trigger: it asks for a cycle at once
// instead of at the next heartbeat, through the scheduler's coalescing (a
// burst of triggers makes at most two cycles, [runner.Config].TriggerGap
// apart, a quarter of the heartbeat by default: notified wake-ups have
// their own rate), the cooldown, and the lanes (the priority lane still goes
// first); a goal being pursued is not interrupted, and the cycle runs as
// soon as it returns.
//
// Minds ([Mind], [Config].Minds, [runner.Config].Minds) are background jobs
// that post slots on their own schedule: existence/minds has a workspace
// watcher, an HTTP poller, a feed reader, a timer and an MCP resource
// subscription. A mind that fails is reported with a failed slot and runs
// again after a backoff; a mind's model calls ([MindEnv].Lane) take a
// worker of the autonomy lane, never the priority lane.
//
// # Events
//
// Everything observable is an [event.Event] delivered to the [event.Observer]: goals
// chosen and ended, worldview, questions and opinions, stressors, fallbacks
// with their cause, caps applied to a reply ([event.Capped]), goal notes
// ([event.GoalAnnotated]), crises, model calls with tokens and durations, tool
// calls, stalls and repeats, lost leases, slots posted and dropped, minds
// that failed, finished cycles, and what happened to the agent's
// memories.
// [Event.String] formats the one-line thoughts log; events also marshal to
// JSON. Diagnostics go to a [log/slog] logger.
package existence
