package existence

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
	"github.com/existence-loop/sdk/task"
)

// Config configures an agent ([New]); ID, Name and Model are required, a
// zero field means its default. Grouped by concern: who the agent is, its
// model ([CallConfig]), timing ([TimingConfig]), memory ([MemoryConfig]),
// services.
type Config struct {
	// ID is the agent id ([identity.ValidateID]), e.g. "scout".
	ID string
	// Name is the display name ([identity.ValidateName]), e.g. "Cedar".
	Name string
	// Traits and Domains (areas of work) seed a new identity; a stored
	// identity keeps its own, as it keeps its Name. Domains: spec §4.
	Traits  []string
	Domains []string
	// Model answers existence cycles (required), e.g. an llm/ollama model.
	Model llm.Model
	// Calls is how the model is called: sampling, retry, repair, budget.
	Calls CallConfig
	// Timing is the clock, heartbeat and time limits.
	Timing TimingConfig
	// Memory is long-term and working memory and the boards of slots.
	Memory MemoryConfig
	// Store persists the agent's state; default [memstore.Store]. A locking
	// store fails [New] with [identity.ErrLocked] while another process runs it.
	Store identity.Store
	// Prompt assembles the existence prompt (default prompt.New with
	// [prompt.DefaultSituation]); Values carries data for custom sections.
	Prompt *prompt.Assembler
	Values *prompt.Values
	// Executor pursues chosen goals; default [Immediate].
	Executor Executor
	// Tasks is the optional queue of assigned tasks (spec §2 row 1).
	Tasks task.Source
	// Minds are background jobs ([Mind]) run while the agent runs.
	Minds []Mind
	// Limits are the identity and prompt caps; zero fields: spec defaults.
	Limits identity.Limits
	// Annotator notes goals the agent chooses; nil: [OpinionConflict].
	Annotator GoalAnnotator
	// Evidence, optional, gives the suffering assessment (spec §4) the work
	// counts the application sees (Artifacts, ArtifactsUsed, Outputs, Directed).
	Evidence func(id *identity.Identity) suffering.Evidence
	// FreshOnCorrupt quarantines a corrupt stored state and starts anew; by
	// default [New] fails with an error matching [identity.ErrCorrupt].
	FreshOnCorrupt bool
	// Commissioning runs GSV's ceremony on the first run; nil: none.
	Commissioning *Commissioning
	// Observer receives every event; Logger diagnostics (default slog's).
	Observer event.Observer
	Logger   *slog.Logger
	// TracerProvider makes OpenTelemetry GenAI spans ([CallConfig] lists
	// them); nil: none. TraceContent records prompts and replies on them.
	TracerProvider trace.TracerProvider
	TraceContent   bool
}

// CallConfig is how an agent calls its model ([Config].Calls). The agent
// wraps [Config].Model, innermost first, with the runner's latency meter
// (when run by a [Runner]: its [middleware.AdaptiveLimit]),
// [middleware.Trace] (a chat span per attempt, with
// [Config].TracerProvider), an observer (an [event.ModelCall] per attempt,
// its tokens counted in [Status].Usage and against Budget),
// [middleware.WithTimeout] ([TimingConfig].CallTimeout), the runner's
// [middleware.Limiter] (when run by a [Runner], and only for cycles run
// with [Agent.Tick] directly: the cycles the runner schedules are bounded
// by its lanes instead), [middleware.WithRetry] (Retry) and
// [middleware.WithRepair] (one repair follow-up per cycle, unless
// NoRepair).
//
// With [Config].TracerProvider the agent makes spans following the
// OpenTelemetry GenAI semantic conventions: an invoke_agent span per
// existence cycle and per goal (the goal's a child of the cycle that chose
// it), a chat span per model attempt and, through existence/toolloop, an
// execute_tool span per tool call; each carries gen_ai.agent.id and
// gen_ai.agent.name. The instrumentation scope is
// "github.com/existence-loop/sdk/existence". Beyond the GenAI conventions,
// the invoke_agent spans carry existence.phase ("cycle" or "goal"),
// existence.lane (a cycle's scheduler lane, "autonomy" or "priority"),
// existence.goal.id, existence.goal.status (how a goal ended: DONE, FAILED,
// ABANDONED), existence.fallback (a cycle that used the spec §6 fallback
// goal) with existence.fallback.cause (its failure class), and, with
// [Config].TraceContent only, existence.goal (the goal's text). Pass
// otel.GetTracerProvider() to use the global provider. TraceContent
// records prompts, replies, goals and tool arguments and results on the
// spans (gen_ai.input.messages and the like); it is off by default: they
// hold what the agent knows and what it was told.
type CallConfig struct {
	// ExecutorModel is the model executors use to pursue goals (default
	// [Config].Model). The agent wraps it like Model, without the repair
	// and with the budget's hold outermost (a call waits while Budget is
	// spent), and hands it to the executor as [Assignment].Model, so that
	// executor calls are observed, traced, time-limited, bounded, retried
	// and budgeted the same way.
	ExecutorModel llm.Model
	// Temperature, Seed and MaxTokens are passed to the model on every
	// existence cycle (see [llm.Request]): a nil Temperature or Seed is
	// not sent. MaxTokens bounds the reply in tokens (0 means
	// [DefaultMaxTokens], negative is an error); a reply cut at it (done
	// reason "length") goes to the repair turn. Executors set their own.
	Temperature *float64
	Seed        *int
	MaxTokens   int
	// Retry is the retry policy of the cycle's model calls; the zero value
	// copies the original: 3 attempts, 10 s after a 503, 5 s otherwise
	// (with exponential backoff and jitter). Attempts: 1 disables retries.
	Retry middleware.RetryPolicy
	// NoRepair disables the one repair follow-up per cycle.
	NoRepair bool
	// FailFast stops [Agent.Run] with a [*FailFastError] when a cycle's
	// model call fails with a cause retrying can never fix (see
	// [middleware.Permanent]: the model is missing, the credentials are
	// refused). By default the agent keeps going on the fallback goal, as
	// the original does: the loop never stops because of a model failure
	// (spec §1, §6).
	FailFast bool
	// Budget is the agent's token budget over a sliding window (see
	// [budget.Budget]); the zero value is none. While it is spent, autonomy
	// cycles and executor calls wait for it to refill (one
	// [event.BudgetExhausted] each time), and the priority lane may draw on
	// its Reserve. Cycles run with [Agent.Tick] directly are not held.
	Budget budget.Budget
	// Cycle, when set, produces each existence cycle's reply in place of
	// the one model call on the existence prompt: a workflow of steps
	// (package existence/workflow). Nil: the existence prompt, unchanged.
	Cycle CycleStrategy
}

// TimingConfig is an agent's clock, heartbeat and time limits
// ([Config].Timing); durations are wall-clock time on Clock.
type TimingConfig struct {
	// Clock is the time source; default [clock.System].
	Clock clock.Clock
	// Heartbeat is the tick interval of [Agent.Run]; default 6 s.
	Heartbeat time.Duration
	// CallTimeout bounds one model attempt; default 180 s, as in the
	// original (spec §7).
	CallTimeout time.Duration
	// CycleTimeout bounds a whole cycle's model exchange, retries and
	// repair included; default 10 minutes.
	CycleTimeout time.Duration
	// GoalTimeout bounds the pursuit of one goal: when it passes, the
	// executor's context ends and an executor that honours it returns
	// (toolloop records the goal ABANDONED); default 30 minutes. Goals take
	// 15–60 s in practice (spec §1). MaxGoalDuration (2 minutes by default)
	// usually ends a goal first: to let goals run longer, raise both.
	GoalTimeout time.Duration
	// MaxGoalDuration abandons a goal still being pursued this long after
	// its executor started, measured on Clock: stall rule
	// "goal_span", checked at every tick, so the goal ends at the
	// first heartbeat past the limit. 0 means [DefaultMaxGoalDuration]
	// (2 minutes), negative disables the rule. Stated in time, the rule
	// does not depend on Heartbeat: a 300 ms heartbeat abandons no more
	// goals than the default 6 s.
	MaxGoalDuration time.Duration
	// MaxCycles stops [Agent.Run] after this many existence cycles (and
	// their goals); 0 means run until the context ends.
	MaxCycles int
}

// MemoryConfig is what an agent keeps beyond its identity
// ([Config].Memory): long-term memory, working memory and boards of slots.
type MemoryConfig struct {
	// LongTerm is the agent's long-term memory (package memory), usually
	// over the same store as its state (every SDK store holds memories).
	// With it, the memory's events about the agent reach the Observer
	// (kinds memory_*), executors get it as [Assignment].Memory (toolloop
	// stores each step's outcome, recalls before a goal and offers the
	// remember and recall tools), and, when the Prompt has the memories
	// section (prompt.Memories), each cycle recalls K memories for Query
	// into it. One memory.Memory serves any number of agents. Nil: no
	// long-term memory.
	LongTerm *memory.Memory
	// Query is the query of the memories recalled for the prompt's
	// memories section; nil means the default: the assigned task's
	// description when there is one, else the newest host message, else
	// the last goal's objective and outcome ("", no recall, for an agent
	// with none of these). It reads the View's Task, Host and Identity,
	// under the agent's lock: it must be quick and must not call into the
	// agent.
	Query func(v *prompt.View) string
	// K is how many memories the memories section shows; 0 means 3, as
	// the original's recall before planning.
	K int
	// Working lets the agent keep a working memory of its own (see
	// [WorkingMemory]); off by default. When on, [New] places the working
	// memory section ([prompt.WorkingMemorySection]) before the directive
	// of the Prompt, unless the Prompt already has it.
	Working WorkingMemory
	// MaxSlots caps the agent's own board of slots (see [Agent.PostSlot]);
	// 0 means slot.DefaultMax (20). Beyond it the least important slot is
	// dropped, with an [event.SlotDropped].
	MaxSlots int
	// SharedSlots is a board of slots the agent sees next to its own,
	// shared with other agents and processes (an identity.SharedBoard;
	// cmd/internal/storespec.SharedSlots opens the one a store keeps). A
	// Runner's agents default to runner.Config.SharedSlots; nil: none.
	SharedSlots *identity.SharedBoard
}
