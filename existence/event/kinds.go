package event

// GoalAnnotated: a existence.GoalAnnotator appended a note to the goal just
// chosen; Text is the note, Goal the objective before the note.
const GoalAnnotated Kind = "goal_annotated"

// Capped: part of a model reply was cut or left out by a cap on what
// the model writes (spec §3, the original's caps; see [identity.Limits]).
// Every cap that applies is reported; nothing is dropped silently.
// Reason names the cap, Text says what was cut:
//   - "worldview_short": a worldview update of at most
//     Limits.WorldviewIgnored (20) characters was ignored;
//   - "question_cut", "opinion_cut", "domain_cut": an entry was cut to
//     Limits.QuestionChars, OpinionChars (200) or DomainChars (60)
//     characters;
//   - "question_duplicate": a question already held (after trimming and
//     case-folding) was not added again;
//   - "questions_per_reply", "opinions_per_reply", "resolved_per_reply":
//     entries beyond the first Limits.QuestionsPerReply (3),
//     OpinionsPerReply (2) or ResolvedPerReply (2) of one reply were
//     dropped (one event per reply and list).
const Capped Kind = "capped"

// BudgetExhausted: a token budget was spent (Budget says which, how
// much was used and when it refills). One event per exhaustion: the next
// comes only after the budget refilled and was spent again. Until it
// refills, the agent's autonomy cycles wait (coalescing its heartbeats, as
// a cooldown does) and its executor's model calls wait; its heartbeat,
// escalation and assessment go on (spec §1), and it resumes by itself.
const BudgetExhausted Kind = "budget_exhausted"

// Commissioning: the commissioning ceremony started or resumed
// (Reason "started"), was completed (Reason "completed", Text the name
// taken), was found already complete with its instructions still there
// (Reason "already_commissioned"), or archiving them failed (Reason
// "archive_failed", Err).
const Commissioning Kind = "commissioning"

// Memory: something happened to the agent's long-term memory
// (package memory), delivered to the agent's observer when
// existence.Config.Memory.LongTerm is set. Memory holds the memory's own event, whose Kind
// says what happened (memory.EventStored, memory.EventRecalled,
// memory.EventError, ...; see memory.EventKind); Text and Err repeat its
// text and error. A recall for the prompt that fails is reported the same
// way, as a memory.EventError.
const Memory Kind = "memory"

// Step: a step of a workflow cycle ran, was skipped or failed
// (Step).
const Step Kind = "workflow_step"

// WorkingMemory: a reply's working memory was stored (Reason
// "stored", Text the memory) or refused (Reason "too_large" or
// "not_object", Text why; the previous memory is kept and the agent is
// told in its next cycle).
const WorkingMemory Kind = "working_memory"

// Event kinds of stall and repeat detection.
const (
	// Stall: a stall rule abandoned the goal. Reason is the rule
	// (as existence.Outcome.Stall), Goal the goal, Text the outcome summary. The
	// toolloop executor reports its rules ("same_call", "no_progress",
	// "step_budget") through existence.Assignment.Report; the agent reports
	// "goal_span" (the goal outlived existence.Config.Timing.MaxGoalDuration).
	Stall Kind = "stall"
	// GoalRepeat: a newly chosen goal nearly repeats one of the last
	// 10 it chose (sharing at least 0.9 of its distinct words, lower-cased,
	// with one; fallback goals and assigned tasks take no part). Goal is
	// the new goal, Text the earlier one it repeats. A repeat that ends
	// DONE counts as failed in the repeated_failure assessment (spec §4).
	GoalRepeat Kind = "goal_repeat"
)
