package event

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/suffering"
	"github.com/existence-loop/sdk/task"
)

// Kind names what happened. Kinds are stable strings, safe to match in
// logs and JSON consumers.
type Kind string

// Event kinds.
const (
	// GoalChosen: an existence cycle chose a goal. Text and Goal are
	// the full goal, Reasoning what drove it (the thoughts log marks it
	// 🎯); FailureClass is set for the spec §6 fallback goal.
	GoalChosen Kind = "goal_chosen"
	// GoalEnded: a goal ended. GoalStatus is DONE, FAILED or ABANDONED,
	// Text the outcome summary, Goal the goal.
	GoalEnded Kind = "goal_ended"
	// Worldview: the worldview was overwritten; Text is the new one
	// (🧠).
	Worldview Kind = "worldview_changed"
	// Question: an open question was added (Text).
	Question Kind = "question_added"
	// Opinion: an opinion was added (Text, Domain).
	Opinion Kind = "opinion_added"
	// StressorAdded / StressorResolved: a stressor changed
	// (Stressor). By says who: "self-report" or "assessment".
	StressorAdded    Kind = "stressor_added"
	StressorResolved Kind = "stressor_resolved"
	// StressorDropped: a reported stressor was not added (already
	// active, or 5 already active); Text says why.
	StressorDropped Kind = "stressor_dropped"
	// Fallback: the cycle used the spec §6 fallback goal;
	// FailureClass names the failure's class (Err holds it).
	Fallback Kind = "fallback"
	// Crisis: the load is at or above 0.90 for a cycle (Load); the
	// agent told its peers.
	Crisis Kind = "crisis"
	// CrisisReset: after 3 consecutive crisis cycles every stressor
	// was force-reset (spec §4).
	CrisisReset Kind = "crisis_reset"
	// Anticipation: the anticipatory signal (spec §4): a domain the
	// agent works in once caused suffering that peaked above 0.5 (Text).
	Anticipation Kind = "anticipation"
	// Cycle: an existence cycle finished; Cycle holds durations and
	// token counts.
	Cycle Kind = "cycle"
	// ModelCall: one model attempt (Call holds model, duration, tokens
	// and outcome), including retries, repairs and fallbacks.
	ModelCall Kind = "model_call"
	// ToolCall: an executor called a tool (Tool).
	ToolCall Kind = "tool_call"
	// PromptCut: the prompt budget cut a section (Text says what).
	PromptCut Kind = "prompt_cut"
	// StateTrimmed: loaded state was over its caps and was trimmed
	// (Text lists the cuts).
	StateTrimmed Kind = "state_trimmed"
	// Task: an assigned task changed state (Text, TaskStatus).
	Task Kind = "task"
	// Message: the agent received a peer message (Direction
	// "received", Peer is the sender), a host message (Direction "host"),
	// or sent one (Direction "sent", Peer is the recipient).
	Message Kind = "message"
	// Error: something failed that the loop survives, such as a
	// failed save (Err).
	Error Kind = "error"
	// ContextOverflow: a prompt did not fit the model's context
	// window (Context: the estimate, the window, and what the server kept
	// when it cut the prompt silently; Err holds the
	// llm.ContextLengthError). The prompt is never used as if whole: the
	// cycle fits its prompt to the smaller window and tries once more; the
	// tool loop compacts its history.
	ContextOverflow Kind = "context_overflow"
	// ContextCompacted: an executor's tool-loop history was
	// compacted to fit the context window (Context: tokens before and
	// after, turns folded, and how: "summary" or "elision").
	ContextCompacted Kind = "context_compacted"
	// LeaseLost: the agent's lease was lost (another process took it
	// over after it expired); the runner stopped the agent without a final
	// save, since its state now belongs to the new holder (a fenced store
	// would refuse the write anyway).
	LeaseLost Kind = "lease_lost"
	// Slot: a slot was posted (Slot: the slot as stored; Text its
	// summary): to the agent's own board (existence.Agent.PostSlot, its minds),
	// or, with Shared set and no agent, to the runner's shared board
	// (runner.Runner.PostSharedSlot).
	Slot Kind = "slot"
	// SlotDropped: a full board dropped its least important slot
	// (Reason "board_full"; Slot; Text says why), or a slot was removed
	// (Reason "removed"); Shared for the shared board.
	SlotDropped Kind = "slot_dropped"
	// MindFailed: a mind (existence.Mind) failed (Err; Text names it and the
	// backoff before it runs again; Slot is the failed slot posted for
	// it). The agent goes on.
	MindFailed Kind = "mind_failed"
	// LeaseLate: the agent's lease was renewed with less than the
	// lease manager's alarm margin left, or its renewal failed with less
	// than that left (Lease: the epoch, the time left, the TTL and the
	// margin). Renewals are falling behind (an overloaded database, a
	// starved connection): the lease is lost if they fall behind by the
	// rest. With renewals every TTL/3 and the usual margin of TTL/3, it
	// means a renewal came about one interval late. Reported only by a
	// lease.Manager that is a lease.LateReporter (store/pgstore).
	LeaseLate Kind = "lease_late"
)

// Event is one observable thing that happened to an agent. Every event
// carries the agent's id and name (except the runner's shared events, see
// Shared). Fields other than Kind, Time, AgentID and Agent are set as the
// kind's documentation says; each field means one thing, whatever the
// kind.
type Event struct {
	// Kind says what happened, and so which of the other fields are set.
	Kind Kind `json:"kind"`
	// Time is when the event happened, by the agent's existence.Config.Timing.Clock.
	Time time.Time `json:"time"`
	// AgentID is the agent's id (existence.Config.ID), e.g. "scout".
	AgentID string `json:"agent_id"`
	// Agent is the agent's display name, e.g. "Cedar".
	Agent string `json:"agent"`
	// Text is the event's main text: a goal in full, a worldview, a
	// question, an outcome summary.
	Text string `json:"text,omitempty"`
	// Goal is the goal's full text, on goal events.
	Goal string `json:"goal,omitempty"`
	// Reasoning is what drove the goal, on [GoalChosen]: the model's
	// reasoning, or existence.FallbackReasoning for the spec §6 fallback goal. It
	// is logged through events only, never stored in the identity
	// (spec §3).
	Reasoning string `json:"reasoning,omitempty"`
	// Domain is the new opinion's domain, on [Opinion].
	Domain string `json:"domain,omitempty"`
	// Peer is the other side of a message: its sender or recipient.
	Peer string `json:"peer,omitempty"`
	// GoalStatus is the ended goal's final status, on [GoalEnded]:
	// identity.Done, Failed or Abandoned ("DONE", "FAILED", "ABANDONED");
	// empty on other kinds.
	GoalStatus identity.GoalStatus `json:"goal_status,omitempty"`
	// TaskStatus is the assigned task's status after the change, on
	// [Task]: task.Assigned ("assigned") when the agent claimed it,
	// task.Completed or task.Failed ("completed", "failed") when its goal
	// ended; empty when the queue operation failed (Err says why) and on
	// other kinds.
	TaskStatus task.Status `json:"task_status,omitempty"`
	// By says who changed a stressor, on [StressorAdded] and
	// [StressorResolved]: "self-report" (the model's
	// suffering_assessment, spec §3) or "assessment" (the assessment of
	// observable behaviour, spec §4); empty on other kinds.
	By string `json:"by,omitempty"`
	// FailureClass is the class of the failure behind the event: on
	// [Fallback], and on the [GoalChosen] of the spec §6
	// fallback goal that follows it, "prompt" when the prompt could not
	// be assembled (for example over its prompt.Budget), "invalid_output"
	// when the reply failed validation, or else the model error's class
	// from middleware.Classify ("unavailable", "timeout", "truncated",
	// "http_503", ...); on the [Error] of an agent stopped by
	// existence.Config.Calls.FailFast, the class that retrying cannot fix. Empty on
	// other kinds, and on a goal the model chose.
	FailureClass string `json:"failure_class,omitempty"`
	// Direction says which way a message went, on [Message]:
	// "received" (a peer message; Peer is the sender), "host" (a host
	// message, see existence.Agent.SayAsHost) or "sent" (Peer is the recipient);
	// empty on other kinds.
	Direction string `json:"direction,omitempty"`
	// Reason names the rule behind the event, a short snake_case code: on
	// [Stall] the stall rule ("same_call", "no_progress",
	// "step_budget", "goal_span"); on [Capped] the cap
	// ("worldview_short", "question_cut", ...); on [SlotDropped]
	// "board_full" (a full board dropped its least important slot) or
	// "removed" (the slot was removed on request). Empty on other kinds.
	Reason string `json:"reason,omitempty"`
	// Shared reports that the event concerns the runner's shared board
	// (runner.Runner.PostSharedSlot) or one of its shared minds
	// (runner.Config.Minds) rather than an agent: on [Slot],
	// [SlotDropped] and [MindFailed]. Such an event has no
	// AgentID, and its Agent is "(shared)".
	Shared bool `json:"shared,omitempty"`
	// Load is the suffering load (0–1) at the time of the event, on
	// [GoalChosen], [Crisis], [StressorAdded] and
	// [StressorResolved]; 0 (and omitted from JSON) on other kinds.
	Load float64 `json:"load,omitempty"`
	// Stressor is a copy of the stressor as it is after the change, on
	// [StressorAdded] and [StressorResolved] (a resolved one has
	// ResolvedAt and Resolution set).
	Stressor *suffering.Stressor `json:"stressor,omitempty"`
	// Cycle holds the cycle's durations and sizes, on [Cycle].
	Cycle *CycleStats `json:"cycle,omitempty"`
	// Call describes the model attempt, on [ModelCall]; a failed
	// attempt also sets Err and Error.
	Call *ModelCallInfo `json:"call,omitempty"`
	// Memory is the long-term memory's own event, on [Memory]: its
	// Kind says what happened (memory.EventStored, memory.EventRecalled,
	// ...), with counts, ids, the memory stored, the cause, the embedding
	// space.
	Memory *memory.Event `json:"memory,omitempty"`
	// Tool describes the tool call, on [ToolCall].
	Tool *ToolCallInfo `json:"tool,omitempty"`
	// Context describes the context window, on [ContextOverflow] and
	// [ContextCompacted].
	Context *ContextStats `json:"context,omitempty"`
	// Slot is the slot concerned, on [Slot], [SlotDropped] and
	// [MindFailed].
	Slot *slot.Slot `json:"slot,omitempty"`
	// Budget is the budget that was spent, on [BudgetExhausted]: its
	// scope, tokens, window, the tokens used and when it refills.
	Budget *budget.Status `json:"budget,omitempty"`
	// Step describes a workflow step, on [Step].
	Step *StepInfo `json:"step,omitempty"`
	// Lease describes the lease's renewal, on [LeaseLate].
	Lease *LeaseStats `json:"lease,omitempty"`
	// Err is the error behind the event, when there is one: on
	// [Fallback] and [Error], on a failed [ModelCall], and
	// on an [Task] or [StressorDropped] whose operation failed.
	// It is not encoded in JSON; see Error.
	Err error `json:"-"`
	// Error is Err's text (Err.Error()), filled in when the event is
	// delivered so that it survives JSON encoding; empty when Err is nil.
	Error string `json:"error,omitempty"`
}

// CycleStats describes one existence cycle. Durations are wall-clock
// (time.Duration, encoded in JSON as nanoseconds), measured with the
// system clock whatever the agent's existence.Config.Timing.Clock.
type CycleStats struct {
	// Assemble is the time spent preparing the prompt: claiming an
	// assigned task, gathering the peers and assembling the prompt.
	Assemble time.Duration `json:"assemble_ns"`
	// Generate is the time of the model exchange, from the first attempt
	// to the parsed reply, retries and the repair follow-up included; 0
	// when the prompt could not be assembled.
	Generate time.Duration `json:"generate_ns"`
	// Apply is the time spent applying the reply (identity, suffering,
	// goal), starting the goal and saving the state.
	Apply time.Duration `json:"apply_ns"`
	// Total is the whole cycle, from its start to the saved state.
	Total time.Duration `json:"total_ns"`
	// PromptChars is the length of the assembled prompt in characters
	// (Unicode code points); 0 when it could not be assembled.
	PromptChars int `json:"prompt_chars"`
	// PromptTokens and OutputTokens are the provider's token counts for
	// the cycle's reply (summed over the first reply and the repair
	// follow-up when one succeeded; from the partial reply when it was
	// truncated); 0 when the model call returned no reply (it failed, even
	// after repair) or the provider does not report them. Failed attempts
	// that were retried are not counted; see [ModelCall] for every
	// attempt.
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Fallback reports whether the cycle used the spec §6 fallback goal
	// (an [Fallback] says why).
	Fallback bool `json:"fallback"`
	// Lane is the scheduler lane that ran the cycle, "autonomy" or
	// "priority" (see runner.Lane); empty for a cycle run by existence.Agent.Tick directly.
	Lane string `json:"lane,omitempty"`
	// Lateness is how late the cycle started against its due time (the
	// heartbeat that brought it due, the end of its cooldown, or the
	// moment of a host message), by the runner's clock; 0 outside the
	// scheduler.
	Lateness time.Duration `json:"lateness_ns,omitempty"`
	// Coalesced is how many heartbeats fell due while this cycle was
	// queued or running and were merged into it (none called the model).
	Coalesced int `json:"coalesced,omitempty"`
}

// ContextStats describes a prompt against the model's context window, on
// [ContextOverflow] and [ContextCompacted]. Sizes are in tokens:
// the model's calibrated estimate (llm.TokenEstimator), or the server's
// count where said.
type ContextStats struct {
	// Purpose says which model stack made the call: "cycle" (an existence
	// cycle) or "executor" (an executor pursuing a goal).
	Purpose string `json:"purpose,omitempty"`
	// Window is the context window in tokens the prompt had to fit
	// (prompt and reply together), as the model knows it after the event.
	Window int `json:"window"`
	// Estimated is the prompt's size that did not fit (overflow).
	Estimated int `json:"estimated_tokens,omitempty"`
	// Kept is what the server kept of a prompt it cut silently, by its
	// own count (overflow); 0 when the prompt was refused, by the server
	// or before it was sent.
	Kept int `json:"kept_tokens,omitempty"`
	// Before and After are the history's size before and after a
	// compaction; Folded is how many tool-loop turns were folded, and
	// Method how: "summary" (one model call summarised them) or "elision"
	// (a deterministic digest, with long tool results cut to head and
	// tail).
	Before int    `json:"tokens_before,omitempty"`
	After  int    `json:"tokens_after,omitempty"`
	Folded int    `json:"turns_folded,omitempty"`
	Method string `json:"method,omitempty"`
}

// LeaseStats describes a late lease renewal, on [LeaseLate].
// Durations are encoded in JSON as nanoseconds.
type LeaseStats struct {
	// Epoch is the lease's fencing token.
	Epoch int64 `json:"epoch"`
	// Left is how much of the lease's time was left when the renewal took
	// effect, or when the failed renewal returned (by the lease
	// manager's clock).
	Left time.Duration `json:"left_ns"`
	// TTL is the lease's time-to-live, Margin the alarm margin Left fell
	// under.
	TTL    time.Duration `json:"ttl_ns"`
	Margin time.Duration `json:"margin_ns"`
	// Renewed is false when the renewal failed: the lease then runs out
	// after Left unless the next renewal succeeds.
	Renewed bool `json:"renewed"`
}

// ModelCallInfo is one model attempt.
type ModelCallInfo struct {
	// Model is the model's name: the request's model, else the name the
	// reply reports, else the adapter's name.
	Model string `json:"model"`
	// Duration is the wall-clock time of the attempt (encoded in JSON as
	// nanoseconds), not counting time spent waiting for a middleware.Limiter
	// slot or between retries.
	Duration time.Duration `json:"duration_ns"`
	// PromptTokens and OutputTokens are the tokens of this attempt
	// (middleware.UsageOf): the provider's counts (from the partial reply of a
	// truncated one, or the reply to a prompt the server cut), else
	// estimates, flagged by PromptEstimated and OutputEstimated; 0 for a
	// failed attempt with no reply.
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// PromptEstimated and OutputEstimated report that the server gave no
	// count and the figure is the model's estimate.
	PromptEstimated bool `json:"prompt_estimated,omitempty"`
	OutputEstimated bool `json:"output_estimated,omitempty"`
	// Outcome is "ok" or the error class from middleware.Classify
	// ("unavailable", "timeout", "truncated", "http_503", ...).
	Outcome string `json:"outcome"`
	// Purpose says which model stack made the call: "cycle" (an existence
	// cycle) or "executor" (an executor pursuing a goal).
	Purpose string `json:"purpose,omitempty"`
	// Lane is the scheduler lane the call was made for, "autonomy" or
	// "priority": the cycle's, or for an executor's call the lane of the
	// cycle that chose the goal; empty outside a scheduler (cycles run
	// with existence.Agent.Tick directly).
	Lane string `json:"lane,omitempty"`
}

// Values of [ModelCallInfo].Purpose and [ContextStats].Purpose: a call made
// by an existence cycle, or by an executor pursuing a goal.
const (
	PurposeCycle    = "cycle"
	PurposeExecutor = "executor"
)

// maxOutcomeChars caps the outcome summary a 🏁 line of the thoughts log
// shows ([Event.String]), in characters; the event keeps it whole.
const maxOutcomeChars = 120

// ToolCallInfo is one tool invocation by an executor, reported as an
// [ToolCall]. existence/toolloop.Executor reports one per call, with
// Arguments and Result cut to 300 characters (Unicode code points), ending
// in "…" when cut.
type ToolCallInfo struct {
	// Name is the tool's name as the model called it (possibly a tool
	// that does not exist).
	Name string `json:"name"`
	// Arguments is the JSON arguments object as the model sent it.
	Arguments string `json:"arguments"`
	// Result is the text sent back to the model: the tool's output, or
	// "Error: ..." when the call failed.
	Result string `json:"result"`
	// Failed reports whether the call failed: an unknown tool, invalid
	// arguments, an error returned by the tool, a panic or a timeout.
	Failed bool `json:"failed"`
	// Duration is the wall-clock time of the call, argument validation
	// included (encoded in JSON as nanoseconds).
	Duration time.Duration `json:"duration_ns"`
}

// Observer receives events. It is called synchronously from the agent's
// goroutines, possibly concurrently for different agents, so it must be
// safe for concurrent use and return quickly.
type Observer func(Event)

// Observers returns an Observer that calls each non-nil observer in order.
func Observers(obs ...Observer) Observer {
	return func(e Event) {
		for _, o := range obs {
			if o != nil {
				o(e)
			}
		}
	}
}

// icons are the thoughts log's icons, by event kind, and for an
// [Memory] by its memory event's kind (memory.EventKind strings, which
// differ from every Kind).
var icons = map[string]string{
	string(BudgetExhausted):            "🪙",
	string(Stall):                      "🛑",
	string(GoalRepeat):                 "🔁",
	string(GoalChosen):                 "🎯",
	string(GoalEnded):                  "🏁",
	string(Worldview):                  "🧠",
	string(Question):                   "❓",
	string(Opinion):                    "💭",
	string(StressorAdded):              "😣",
	string(StressorResolved):           "😌",
	string(StressorDropped):            "🫥",
	string(Fallback):                   "⚠️",
	string(Crisis):                     "🔥",
	string(CrisisReset):                "🧯",
	string(Anticipation):               "🔮",
	string(Cycle):                      "⏱️",
	string(ModelCall):                  "🔌",
	string(ToolCall):                   "🔧",
	string(PromptCut):                  "✂️",
	string(StateTrimmed):               "✂️",
	string(Task):                       "📋",
	string(Message):                    "✉️",
	string(Error):                      "❗",
	string(ContextOverflow):            "🧱",
	string(ContextCompacted):           "🗜️",
	string(Slot):                       "📌",
	string(SlotDropped):                "🗑️",
	string(MindFailed):                 "🩹",
	string(Step):                       "🪜",
	string(WorkingMemory):              "📝",
	string(Commissioning):              "⚓",
	string(memory.EventStored):         "💾",
	string(memory.EventPending):        "⏸️",
	string(memory.EventEmbedded):       "🧬",
	string(memory.EventBackfillFailed): "⏸️",
	string(memory.EventMerged):         "🔗",
	string(memory.EventSuperseded):     "🔗",
	string(memory.EventEvicted):        "🗑️",
	string(memory.EventRecalled):       "📚",
	string(memory.EventRecallFallback): "📚",
	string(memory.EventForgotten):      "🗑️",
	string(memory.EventReembedded):     "🧬",
	string(memory.EventError):          "❗",
}

// String formats e as one line of the thoughts log: "15:04:05 Cedar 🎯
// text". Newlines in texts are flattened; nothing is cut. The line is
// passed through [prompt.Clean], since it is written to terminals (the
// thoughts log, the TUI) and its texts come from models, tools and other
// parties: no escape sequence, carriage return or bidirectional control
// in them can rewrite or reorder what a person reads.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Time.Format("15:04:05"))
	b.WriteByte(' ')
	b.WriteString(prompt.Clean(e.Agent))
	b.WriteByte(' ')
	key := string(e.Kind)
	if e.Kind == Memory && e.Memory != nil {
		key = string(e.Memory.Kind)
	}
	icon := icons[key]
	if icon == "" {
		icon = "•"
	}
	b.WriteString(icon)
	b.WriteByte(' ')
	b.WriteString(prompt.Clean(flat(e.describe())))
	return b.String()
}

func (e Event) describe() string {
	if s, ok := e.describeMemory(); ok {
		return s
	}
	switch e.Kind {
	case GoalChosen:
		if e.FailureClass != "" {
			return e.Text + " — fallback goal: the model failed (" + e.FailureClass + ")"
		}
		if e.Reasoning != "" {
			return e.Text + " — why: " + e.Reasoning
		}
		return e.Text
	case GoalEnded:
		return "[" + string(e.GoalStatus) + "] " + headChars(flat(e.Text), maxOutcomeChars)
	case Opinion:
		return "[" + e.Domain + "] " + e.Text
	case StressorAdded, StressorResolved:
		if e.Stressor == nil {
			return e.Text
		}
		verb := "stressor " + e.Stressor.Type
		if e.Kind == StressorResolved {
			return fmt.Sprintf("%s resolved (%s): %s; load %.2f", verb, e.By, e.Text, e.Load)
		}
		return fmt.Sprintf("%s %.2f (%s): %s; load %.2f", verb, e.Stressor.Severity, e.By, e.Text, e.Load)
	case Fallback:
		return fmt.Sprintf("fallback goal (%s): %s", e.FailureClass, e.Error)
	case Cycle:
		if c := e.Cycle; c != nil {
			s := fmt.Sprintf("cycle in %v: prompt %d chars, ", c.Total.Round(time.Millisecond), c.PromptChars)
			if c.Fallback && c.PromptTokens+c.OutputTokens == 0 {
				return s + "no usable reply, fallback"
			}
			s += fmt.Sprintf("%d+%d tokens", c.PromptTokens, c.OutputTokens)
			if c.Fallback {
				s += ", fallback"
			}
			return s
		}
	case ModelCall:
		if c := e.Call; c != nil {
			s := fmt.Sprintf("%s %s in %v", c.Model, c.Outcome, c.Duration.Round(time.Millisecond))
			if c.Purpose != "" {
				s = c.Purpose + " call: " + s
			}
			if c.PromptTokens+c.OutputTokens > 0 {
				s += fmt.Sprintf(", %d+%d tokens", c.PromptTokens, c.OutputTokens)
			}
			if e.Error != "" {
				s += ": " + e.Error
			}
			return s
		}
	case ToolCall:
		if t := e.Tool; t != nil {
			status := "ok"
			if t.Failed {
				status = "failed"
			}
			return fmt.Sprintf("%s(%s) %s: %s", t.Name, t.Arguments, status, t.Result)
		}
	case ContextOverflow:
		if c := e.Context; c != nil {
			if c.Kept > 0 {
				return fmt.Sprintf("%s prompt of about %d tokens cut to %d by the server: its window is %d tokens", c.Purpose, c.Estimated, c.Kept, c.Window)
			}
			return fmt.Sprintf("%s prompt of about %d tokens does not fit the %d-token window", c.Purpose, c.Estimated, c.Window)
		}
	case ContextCompacted:
		if c := e.Context; c != nil {
			return fmt.Sprintf("tool-loop history compacted by %s: %d turns folded, %d → %d tokens (window %d)", c.Method, c.Folded, c.Before, c.After, c.Window)
		}
	case Slot, SlotDropped:
		if s := e.Slot; s != nil {
			line := s.Title + ": " + string(s.Status)
			if s.Summary != "" {
				line += " - " + s.Summary
			}
			if e.Kind == SlotDropped {
				return "slot " + s.ID + " dropped (" + e.Text + "): " + line
			}
			if s.NotifyUser {
				line += " (notify)"
			}
			return line
		}
	case Step:
		if s := e.Step; s != nil {
			line := fmt.Sprintf("step %d/%d %s (%s) %s", s.Index, s.Of, s.Name, s.Type, s.Status)
			if s.Why != "" {
				line += ": " + s.Why
			} else if s.Output != "" {
				line += ": " + s.Output
			}
			return line
		}
	case WorkingMemory:
		if e.Reason == "stored" {
			return "working memory: " + e.Text
		}
		return "working memory refused (" + e.Reason + "): " + e.Text
	case Message:
		switch e.Direction {
		case "sent":
			return "to " + e.Peer + ": " + e.Text
		case "received":
			return "from " + e.Peer + ": " + e.Text
		case "host":
			return "a person said: " + e.Text
		}
	}
	if e.Error != "" {
		// The text often already is the error's text (or ends with it):
		// say it once.
		if e.Text == "" || strings.Contains(e.Error, e.Text) {
			return e.Error
		}
		if strings.Contains(e.Text, e.Error) {
			return e.Text
		}
		return e.Text + ": " + e.Error
	}
	if e.TaskStatus != "" {
		return "[" + string(e.TaskStatus) + "] " + e.Text
	}
	return e.Text
}

// headChars returns s cut to n characters (code points), ending in "…"
// when cut.
func headChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// flat replaces runs of whitespace containing newlines with one space.
func flat(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
