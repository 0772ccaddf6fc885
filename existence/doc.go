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
// ticks every [Config].Heartbeat (6 s by default) until its context ends:
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
// # Several agents
//
// A [Runner] runs agents as peers over one store: each agent's "YOUR PEERS"
// section shows the others' names and narratives, an agent entering crisis
// tells the others once ([CrisisMessage]), and a semaphore bounds the model calls in flight.
//
// # Goals
//
// An [Executor] pursues each chosen goal in its own goroutine while the
// heartbeats go on, and returns DONE, FAILED or ABANDONED with a summary
// that the next prompt shows. [Immediate] completes goals at once;
// existence/toolloop runs a model/tool loop over tools such as the sandboxed
// files of existence/workspace. Assigned tasks come from an
// existence/taskqueue queue (spec §2 row 1); host messages ([Agent.SayAsHost])
// interrupt the goal and trigger a cycle at the next tick. Before a goal
// the agent chose itself starts, a [GoalAnnotator] may append a note to it
// (by default [OpinionConflict], the original's opinion-conflict check).
//
// # Events
//
// Everything observable is an [Event] delivered to the [Observer]: goals
// chosen and ended, worldview, questions and opinions, stressors, fallbacks
// with their cause, caps applied to a reply ([EventCapped]), goal notes
// ([EventGoalAnnotated]), crises, model calls with tokens and durations, tool
// calls, and finished cycles. [Event.String] formats the one-line thoughts
// log; events also marshal to JSON. Diagnostics go to a [log/slog] logger.
package existence
