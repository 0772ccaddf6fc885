package existence

import (
	"context"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
)

// Executor pursues a goal (spec §1: one or more LLM calls and tool calls,
// 15–60 s in practice) and reports how it ended. The agent runs Execute in
// its own goroutine while heartbeats go on; ctx ends when the agent stops or
// when the goal is interrupted by a host message.
//
// An Outcome with Status [identity.Done], [identity.Failed] or
// [identity.Abandoned] ends the goal; any other status is treated as FAILED.
// A non-nil error means FAILED with the error as the summary (unless
// Outcome.Summary is set). Implementations: [Immediate] and
// existence/toolloop.Executor.
type Executor interface {
	Execute(ctx context.Context, a Assignment) (Outcome, error)
}

// ToolOffer is implemented by an [Executor] whose model calls tools
// (existence/toolloop.Executor). Under [prompt.LayoutCache] the agent sends
// the definitions ToolDefs returns with its cycle requests too, and the
// executor's first prompt continues the cycle's exchange
// ([Assignment].Exchange): a model server renders tool definitions near
// the start of a prompt, so only with the same tools in both requests is
// the cycle's prompt and reply a prefix of the executor's first prompt,
// and one KV-cache slot of the server serves both. The cycle still asks
// for its JSON response ([prompt.Schema]); a cycle reply that calls a tool
// instead is invalid output. ToolDefs gets an assignment with only
// AgentID, AgentName and Memory set, and must return what Execute would
// offer for that agent.
type ToolOffer interface {
	ToolDefs(a Assignment) []llm.ToolDef
}

// Assignment is the goal an [Executor] pursues and who pursues it.
type Assignment struct {
	// AgentID is the pursuing agent's id ([Config].ID), e.g. "scout".
	AgentID string
	// AgentName is the agent's display name, e.g. "Cedar".
	AgentName string
	// Goal is the goal to pursue, as just started: its ID, Objective and
	// Started are set and its Status is [identity.Active]. For an assigned
	// task, Objective is the task's description and TaskID its id.
	Goal identity.Goal
	// Task is the assigned task the goal pursues, or nil.
	Task *prompt.Task
	// Model is the agent's executor model (Config.Calls.ExecutorModel, else
	// Config.Model), wrapped like the agent's own: every call is an
	// [event.ModelCall], bounded by CallTimeout and the runner's limit, and
	// retried. Executors that call a model should use it.
	Model llm.Model
	// Report delivers progress events (such as EventToolCall) to the
	// agent's observer; the agent fills in time, id and name. It is never
	// nil when the agent calls Execute.
	Report func(event.Event)
	// Memory is the agent's long-term memory ([Config].Memory.LongTerm), nil
	// without one: existence/toolloop stores each step's outcome in it,
	// recalls before the goal's first turn and offers the remember and
	// recall tools. Its events reach the agent's observer.
	Memory *memory.Memory
	// Prefix is the stable prefix of the prompt of the cycle that chose
	// the goal ([prompt.Prompt].Split) under [prompt.LayoutCache], which
	// the cycle sent as its system message; empty otherwise. An executor
	// whose first message starts with it shares the model server's KV
	// cache with the agent's cycles (existence/toolloop does).
	Prefix string
	// Exchange is, under [prompt.LayoutCache], the messages of the cycle
	// that chose the goal (the stable prefix as the system message, the
	// rest of the prompt as the user message) followed by the cycle's
	// reply as an assistant message, sent with the [ToolOffer]'s tools;
	// nil otherwise. An executor whose first request starts with these
	// messages, with the same tools, continues the cycle's exchange, and a
	// model server's KV cache serves that prefix from the cycle's slot
	// (existence/toolloop does). Executors must not modify it.
	Exchange []llm.Message
	// TraceContent is the agent's [Config].TraceContent: an executor that
	// makes spans (the context passed to Execute carries the goal's span)
	// records tool arguments and results on them only when it is set.
	TraceContent bool
}

// Outcome is how a goal ended.
type Outcome struct {
	// Status is DONE, FAILED or ABANDONED. Any other value (including the
	// zero value) records the goal as FAILED with the summary "executor
	// returned no final status".
	Status identity.GoalStatus
	// Summary says what the goal produced; it feeds the "WHAT YOUR LAST
	// GOAL PRODUCED" section (cut to 400 characters).
	Summary string
	// BrokenTools lists tools that failed 3 or more times; the next
	// prompts list them as broken.
	BrokenTools []string
	// Steps is the number of model turns taken.
	Steps int
	// PromptTokens and OutputTokens are the tokens spent on the goal,
	// summed over its model calls as the provider reported them (0 when
	// it does not report them, or when the executor calls no model).
	PromptTokens int
	OutputTokens int
	// Artifacts lists what the goal produced (for example workspace
	// paths written); it feeds the futility assessment (spec §4).
	Artifacts []string
	// Discoveries are things the goal found outside the agent and
	// documented (for example files it read, with their first line); they
	// feed the "WHAT YOU'VE FOUND OUTSIDE" section (spec §2 row 11).
	Discoveries []identity.Discovery
	// Stall names the stall rule that abandoned the goal, a short
	// snake_case code: the executor's own (existence/toolloop's
	// "same_call", "no_progress", "step_budget") or the agent's
	// "goal_span" ([Config].Timing.MaxGoalDuration); empty when no stall rule
	// fired.
	Stall string
}

// ExecutorFunc adapts a function to [Executor].
type ExecutorFunc func(ctx context.Context, a Assignment) (Outcome, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, a Assignment) (Outcome, error) { return f(ctx, a) }

// Immediate is an [Executor] that completes every goal at once with status
// DONE and the summary "completed: {objective}". It is the default, for
// applications that act on goals through events ([event.GoalChosen]) rather
// than through an executor: it checks no evidence, so the suffering
// assessment sees every goal completed (only repeats of a recent goal, see [event.GoalRepeat],
// count as failures). Agents that act through tools should use
// existence/toolloop.Executor, whose goals are DONE only after a
// successful tool call (only observable behaviour counts, spec §4).
var Immediate Executor = ExecutorFunc(func(ctx context.Context, a Assignment) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: identity.Done, Summary: "completed: " + a.Goal.Objective}, nil
})
