package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	validator "github.com/santhosh-tekuri/jsonschema/v5"
)

// Defaults of [Config]: a tool call gets 60 s, as in common gateway
// model/tool loops, and a goal at most 20 model turns.
const (
	DefaultToolTimeout            = 60 * time.Second
	DefaultMaxSteps               = 20
	DefaultMaxConsecutiveFailures = 4
	DefaultBrokenAfter            = 3
	DefaultMaxResultChars         = 32000
	// DefaultMaxSameCalls: the same tool call 4 times in a row abandons
	// the goal, as the original's "same capability 4 times in a row"
	// ([StallSameCall]).
	DefaultMaxSameCalls = 4
	// DefaultMaxTokens bounds each tool-loop turn's reply, in tokens: a
	// turn's text and tool calls, or its final answer. An unbounded reply
	// can hold a model server's slot for minutes.
	DefaultMaxTokens = 2000
	// MinTurnReply is the smallest reply reserve, in tokens, a tool-loop
	// turn's reply limit is shrunk to when the context window cannot
	// hold the turn with its full reserve: room for a tool call with
	// short arguments. A window with less room left refuses the turn.
	MinTurnReply = 256
)

// ReplyRoom returns the tokens a window of window tokens leaves for the
// reply to a prompt of prompt tokens, by the estimate: the window less
// the prompt and a sixteenth of it, kept spare because other replies
// recalibrate the estimator while a call waits for a slot and the model
// adapter plans with the estimate it then has. A turn whose reply's
// reserve exceeds it is sent with it as its reply limit when it is at
// least [MinTurnReply].
func ReplyRoom(window, prompt int) int { return window - prompt - prompt/16 }

// Stall rules of the executor, after the original's daemon.py (which
// abandons a goal with no progress for 5 cycles or the same capability 4
// times in a row): [existence.Outcome].Stall names the rule that abandoned
// a goal, and an [event.Stall] reports it as its Reason.
const (
	// StallSameCall: the same tool call (same name and arguments) was
	// made Config.MaxSameCalls (4) times in a row.
	StallSameCall = "same_call"
	// StallNoProgress: Config.MaxConsecutiveFailures (4) tool calls in a
	// row failed.
	StallNoProgress = "no_progress"
	// StallStepBudget: the step budget (Config.MaxSteps, 20 model turns)
	// ran out before a final answer.
	StallStepBudget = "step_budget"
)

// TimedOut is the tool result the model sees when a tool call exceeds
// [Config.ToolTimeout].
const TimedOut = "Error: tool timed out"

// eventChars caps the arguments and result carried by an
// [event.ToolCall] event, in characters (code points).
const eventChars = 300

// Errors of the default artifact check: [RequireEvidence] returns an error
// wrapping one of them, for errors.Is.
var (
	// ErrEmptyAnswer: the final answer is empty or only white space.
	ErrEmptyAnswer = errors.New("final answer is empty")
	// ErrNoAction: the model gave its final answer without calling any
	// tool, so nothing shows that the goal was pursued.
	ErrNoAction = errors.New("no action taken")
	// ErrNoSuccess: every tool call of the goal failed.
	ErrNoSuccess = errors.New("no tool call succeeded")
	// ErrNoWrite: the goal called tools that write ([Writing]) and every
	// one of those calls failed; what it read does not make it done.
	ErrNoWrite = errors.New("every write failed")
)

// Final is what the artifact check ([Config.Check]) sees when the model
// gives its final answer: the answer and the evidence behind it.
type Final struct {
	// Answer is the final answer, trimmed of surrounding white space.
	Answer string
	// Calls is the number of tool calls the goal made, failed ones
	// included; Succeeded the number that succeeded.
	Calls     int
	Succeeded int
	// Writes is the number of calls of tools that write ([Writing]),
	// failed ones included; WritesSucceeded the number that succeeded;
	// LastWriteError the result of the last failed one ("" when none
	// failed).
	Writes, WritesSucceeded int
	LastWriteError          string
	// Artifacts and Discoveries are what the successful calls reported
	// ([ReportArtifact], [ReportDiscovery]), as the Outcome will list them.
	Artifacts   []string
	Discoveries []identity.Discovery
}

// RequireEvidence is the default artifact check: a goal is DONE only when
// its final answer comes after at least one successful tool call, so that
// an agent cannot talk its way out of suffering (only observable behaviour
// resolves stressors, spec §4), and, when it called tools that write
// ([Writing]: the workspace's write_file, append_file and delete_file),
// after at least one successful write: a goal whose writes all failed
// (a read-only workspace, a full quota) is not done because it listed or
// read something first. It returns an error wrapping [ErrNoAction] when no
// tool was called, [ErrNoSuccess] when every call failed, [ErrNoWrite]
// when every write failed (naming the last failure), and [ErrEmptyAnswer]
// for a blank answer; the
// goal is then FAILED with the reason in its summary. Applications with
// another notion of evidence (an artifact of a given kind, a test that
// passes) set [Config.Check], and may call RequireEvidence first.
func RequireEvidence(_ context.Context, _ existence.Assignment, f Final) error {
	switch {
	case f.Calls == 0:
		return fmt.Errorf("%w: the final answer came without any tool call", ErrNoAction)
	case f.Succeeded == 0:
		return fmt.Errorf("%w: all %d tool calls failed", ErrNoSuccess, f.Calls)
	case f.Writes > 0 && f.WritesSucceeded == 0:
		return fmt.Errorf("%w: all %d calls of tools that write failed; the last: %s", ErrNoWrite, f.Writes, runes.Head(f.LastWriteError, 200))
	case strings.TrimSpace(f.Answer) == "":
		return ErrEmptyAnswer
	}
	return nil
}

// Config configures an [Executor]. Zero values take the defaults given per
// field; negative numbers are refused by [New].
type Config struct {
	// Model answers each turn. Nil means the agent's executor model,
	// [existence.Assignment].Model, which the agent has already wrapped
	// with its timeout, retry, call limit and per-attempt events; set it
	// only to use a different, unwrapped model.
	Model llm.Model
	// Tools the model may call. Names must be unique and match
	// ^[A-Za-z0-9_-]{1,64}$.
	Tools []Tool
	// System is the system prompt. Empty means a default that names the
	// agent, states the goal (and task), lists the tools and asks for a
	// short final summary with no tool calls when the goal is done.
	System string
	// World is text added to the default system prompt after the agent's
	// name, such as the application's world context (the workspace and its
	// layout). It is ignored when System is set.
	World string
	// ToolTimeout bounds each tool call (default 60 s). A call that
	// exceeds it returns [TimedOut] to the model and the loop goes on.
	ToolTimeout time.Duration
	// MaxSteps is the step budget in model turns (default 20). When it
	// runs out before a final answer the goal is ABANDONED.
	MaxSteps int
	// MaxConsecutiveFailures tool failures in a row ABANDON the goal
	// (default 4). A successful call resets the count.
	MaxConsecutiveFailures int
	// BrokenAfter failures of one tool within a goal list it in
	// [existence.Outcome.BrokenTools] (default 3).
	BrokenAfter int
	// Check is the goal's artifact check, run on the final answer and
	// the evidence behind it; an error makes the goal FAILED with
	// "artifact check failed: " and the error as its summary. Nil means
	// [RequireEvidence]: at least one successful tool call and a
	// non-empty answer.
	Check func(ctx context.Context, a existence.Assignment, f Final) error
	// MaxSameCalls abandons the goal when the model makes the same tool
	// call (same name, same arguments as JSON values) this many times in
	// a row (default 4; stall rule StallSameCall). The last
	// repeat is not run.
	MaxSameCalls int
	// Temperature and MaxTokens are passed on every [llm.Request]: a nil
	// Temperature is not sent. MaxTokens bounds each turn's reply in
	// tokens (0 means [DefaultMaxTokens]).
	Temperature *float64
	MaxTokens   int
	// MaxResultChars caps each tool result sent back to the model, in
	// characters (code points; default 32000). A longer result keeps its
	// head and tail around "[… N characters elided]".
	MaxResultChars int
	// MaxResultTokens caps each tool result in tokens of the model's
	// calibrated estimate, within MaxResultChars. 0 means a quarter of the
	// model's context window when the model knows it (llm.ContextWindowOf),
	// else MaxResultChars alone.
	MaxResultTokens int
	// CompactAt is the share of the model's context window (0–1) the
	// history may fill, with the reply's reserve, before a turn compacts
	// it (default 0.8); a prompt over the window (llm.ErrContextLength)
	// compacts it too, and the turn is tried again. Compaction folds the
	// older turns into a summary written by one model call (or, failing
	// that, a deterministic digest), keeps the goal, the plan and the last
	// KeepTurns turns verbatim, and reports an
	// event.ContextCompacted. A model that does not know its
	// window is never compacted before a turn.
	CompactAt float64
	// KeepTurns is how many of the last turns compaction keeps verbatim
	// (default 2); none when the window cannot hold them with a reply of
	// MinTurnReply tokens.
	KeepTurns int
	// NoSummary folds older turns into the deterministic digest at once,
	// without the summarising model call.
	NoSummary bool
	// Memory is the long-term memory the executor uses (package memory);
	// nil means the agent's, [existence.Assignment].Memory. With one, as
	// the original's autonomy loop: the goal's first turn carries the
	// RecallK memories recalled for its objective, under "Relevant past
	// experience (use this to avoid repeating mistakes and build on prior
	// work):" (prompt.MemoryBlock; compaction keeps it with the goal);
	// each successful tool call is stored as an outcome ([OutcomeMemory]);
	// a goal that ends DONE is stored as a summary ("Goal completed: …")
	// and one that fails or is abandoned as "FAILED: …"; and the model gets
	// the remember and recall tools. A failed memory operation is reported
	// as an event.Memory (memory.EventError) and the goal goes on.
	Memory *memory.Memory
	// NoMemory turns long-term memory off for this executor, whatever the
	// assignment carries.
	NoMemory bool
	// NoMemoryTools keeps the remember and recall tools from the model.
	NoMemoryTools bool
	// RecallK is how many memories the first turn gets; 0 means
	// [DefaultRecallK] (3).
	RecallK int
}

// Executor is an [existence.Executor] that pursues a goal through a model/tool
// loop: it calls the model with the goal, the tool definitions and the
// conversation so far, dispatches the tool calls the model asks for (one at
// a time, in order), appends their results, and repeats until the model
// answers with no tool calls. It is safe for concurrent use; each Execute
// has its own conversation.
type Executor struct {
	cfg   Config
	tools map[string]toolEntry
	names []string
	defs  []llm.ToolDef
	// the remember and recall tools, offered when a run has a memory
	memTools []toolEntry
}

type toolEntry struct {
	tool   Tool
	schema *validator.Schema
}

var _ existence.Executor = (*Executor)(nil)

// New checks cfg, fills in its defaults and compiles each tool's argument
// schema. It returns an error for negative limits, a nil tool,
// an invalid or duplicate tool name, a tool built by [NewTool] with an
// unusable argument type, and a schema that does not compile.
func New(cfg Config) (*Executor, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"ToolTimeout", int64(cfg.ToolTimeout)},
		{"MaxSteps", int64(cfg.MaxSteps)},
		{"MaxConsecutiveFailures", int64(cfg.MaxConsecutiveFailures)},
		{"BrokenAfter", int64(cfg.BrokenAfter)},
		{"MaxTokens", int64(cfg.MaxTokens)},
		{"MaxResultChars", int64(cfg.MaxResultChars)},
		{"MaxSameCalls", int64(cfg.MaxSameCalls)},
		{"MaxResultTokens", int64(cfg.MaxResultTokens)},
		{"KeepTurns", int64(cfg.KeepTurns)},
		{"RecallK", int64(cfg.RecallK)},
	} {
		if f.v < 0 {
			return nil, fmt.Errorf("toolloop: Config.%s is negative", f.name)
		}
	}
	setDefault(&cfg.ToolTimeout, DefaultToolTimeout)
	setDefault(&cfg.MaxSteps, DefaultMaxSteps)
	setDefault(&cfg.MaxConsecutiveFailures, DefaultMaxConsecutiveFailures)
	setDefault(&cfg.BrokenAfter, DefaultBrokenAfter)
	setDefault(&cfg.MaxResultChars, DefaultMaxResultChars)
	setDefault(&cfg.MaxSameCalls, DefaultMaxSameCalls)
	setDefault(&cfg.MaxTokens, DefaultMaxTokens)
	setDefault(&cfg.KeepTurns, DefaultKeepTurns)
	switch {
	case cfg.CompactAt < 0 || cfg.CompactAt > 1 || math.IsNaN(cfg.CompactAt):
		return nil, fmt.Errorf("toolloop: Config.CompactAt is %v, want 0–1", cfg.CompactAt)
	case cfg.CompactAt == 0:
		cfg.CompactAt = DefaultCompactAt
	}
	if cfg.Check == nil {
		cfg.Check = RequireEvidence
	}
	cfg.Tools = slices.Clone(cfg.Tools)

	e := &Executor{cfg: cfg, tools: make(map[string]toolEntry, len(cfg.Tools))}
	for i, t := range cfg.Tools {
		if t == nil {
			return nil, fmt.Errorf("toolloop: Config.Tools[%d] is nil", i)
		}
		name := t.Name()
		if !validName.MatchString(name) {
			return nil, fmt.Errorf("toolloop: invalid tool name %q (want ^[A-Za-z0-9_-]{1,64}$)", name)
		}
		if _, dup := e.tools[name]; dup {
			return nil, fmt.Errorf("toolloop: duplicate tool name %q", name)
		}
		if b, ok := t.(brokenTool); ok && b.toolErr() != nil {
			return nil, b.toolErr()
		}
		raw := t.Schema()
		s, err := compileSchema(name, raw)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 {
			raw = emptyObjectSchema
		}
		e.tools[name] = toolEntry{tool: t, schema: s}
		e.names = append(e.names, name)
		// A description may come from outside (an MCP server, a plugin):
		// the unsafe rule applies to it once here, as prompt.Clean does to
		// every prompt (mcptools cleans its schemas where it lists them).
		e.defs = append(e.defs, llm.ToolDef{Name: name, Description: prompt.Clean(t.Description()), Parameters: raw})
	}
	if !cfg.NoMemoryTools {
		for _, t := range e.memoryTools() {
			if _, taken := e.tools[t.Name()]; taken {
				continue // the application's own tool of that name wins
			}
			s, err := compileSchema(t.Name(), t.Schema())
			if err != nil {
				return nil, err
			}
			e.memTools = append(e.memTools, toolEntry{tool: t, schema: s})
		}
	}
	return e, nil
}

func setDefault[T int | time.Duration](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

// Execute pursues a.Goal and reports how it ended:
//
//   - DONE: the model gave a final answer (a reply with no tool calls) and
//     Config.Check passed (by default [RequireEvidence]: at least one tool
//     call succeeded); Summary is the trimmed answer.
//   - ABANDONED by a stall rule (Outcome.Stall names it, and an
//     [event.Stall] reports it): the same tool call
//     Config.MaxSameCalls times in a row (StallSameCall; Summary
//     "abandoned: the same tool call was made 4 times in a row: ...");
//     Config.MaxConsecutiveFailures tool failures in a row
//     (StallNoProgress; Summary names the count and the last
//     failure); the step budget ran out (StallStepBudget;
//     Summary "step budget of 20 model turns exhausted before a final
//     answer").
//   - ABANDONED because ctx ended (Summary: "interrupted after N model
//     turns: " + the cause; no Stall). An interrupted goal returns
//     promptly with a nil error: it was stopped, it did not fail, and the
//     agent cancels ctx itself when a host message interrupts the goal.
//   - FAILED: the model returned an error (Summary "model error: ...", and
//     the error is returned too, wrapped), or Check refused the final answer
//     (Summary "artifact check failed: " + the reason, such as "no action
//     taken: ..." or "no tool call succeeded: ...", nil error).
//
// A tool failure is an unknown tool, arguments that fail validation, an
// error from Call, a panic in Call, or a timeout; the model sees
// "Error: ..." as the tool result ([TimedOut] for a timeout) and goes on.
// Tool results, the goal and the task reach the model through
// prompt.Clean (no control characters but newline and tab, no
// bidirectional controls), as every existence prompt does; arguments that
// name a key twice fail the call. Every tool call is reported through a.Report (when non-nil) as an
// [event.ToolCall] event, with arguments and result cut to 300
// characters. The Outcome always carries Steps, token counts, BrokenTools
// (sorted), and the Artifacts ([ReportArtifact]) and Discoveries
// ([ReportDiscovery]) reported by successful calls; what a failed call
// reported is dropped. Each Tool.Call gets a ctx that carries a, which the
// tool reads with [Caller].
func (e *Executor) Execute(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
	r := &run{e: e, a: a, failures: map[string]int{}, head: 2}
	r.mem = e.memoryOf(a)
	r.defs, r.names, r.extra = e.offered(r.mem)
	out, err := e.execute(ctx, r)
	r.rememberOutcome(ctx, out)
	return out, err
}

// ToolDefs returns the tool definitions Execute offers the model for a:
// the configured tools, then the memory tools when a has a memory (see
// [existence.ToolOffer]).
func (e *Executor) ToolDefs(a existence.Assignment) []llm.ToolDef {
	defs, _, _ := e.offered(e.memoryOf(a))
	return slices.Clone(defs)
}

// FixedTokens estimates with est the tokens of the fixed part of a
// tool-loop turn for a: the loop's instructions, the goal's prompt and the
// tool definitions, without a cycle's exchange or prefix
// ([existence.Assignment].Exchange, Prefix: a first turn drops them when
// the window cannot hold them), the history or the reply. A window that
// cannot hold it and [MinTurnReply] fails every goal; callers check it at
// start.
func (e *Executor) FixedTokens(a existence.Assignment, est *llm.TokenEstimator) int {
	defs, names, _ := e.offered(e.memoryOf(a))
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: e.systemPrompt(a, names)}, {Role: llm.RoleUser, Content: userPrompt(a)}}
	return est.Request(&llm.Request{Messages: msgs, Tools: defs})
}

// offered returns the definitions, names and memory tools offered with the
// memory mem (nil for none).
func (e *Executor) offered(mem *memory.Memory) ([]llm.ToolDef, []string, map[string]toolEntry) {
	if mem == nil || len(e.memTools) == 0 {
		return e.defs, e.names, nil
	}
	defs, names := slices.Clone(e.defs), slices.Clone(e.names)
	extra := map[string]toolEntry{}
	for _, t := range e.memTools {
		name := t.tool.Name()
		extra[name] = t
		names = append(names, name)
		defs = append(defs, llm.ToolDef{Name: name, Description: t.tool.Description(), Parameters: t.tool.Schema()})
	}
	return defs, names, extra
}

// execute is Execute's loop.
func (e *Executor) execute(ctx context.Context, r *run) (existence.Outcome, error) {
	a := r.a
	model := e.cfg.Model
	if model == nil {
		model = a.Model
	}
	if model == nil {
		err := errors.New("toolloop: no model: neither Config.Model nor Assignment.Model is set")
		return r.outcome(identity.Failed, err.Error()), err
	}
	goal := userPrompt(a)
	if block := r.recallBlock(ctx); block != "" {
		goal += "\n\n" + block // the original's planning context: the objective, then the block
	}
	// What the model reads of others' text (the goal, a task, recalled
	// memories, tool results: files another agent wrote, an MCP server's
	// output) goes through prompt.Clean, as every section of an existence
	// prompt does.
	base := e.systemPrompt(a, r.names)
	system := base
	var msgs []llm.Message
	switch {
	case len(a.Exchange) > 0:
		// The cycle's exchange first, sent with these tools: the server
		// slot holding the cycle's prompt and reply serves all of it. The
		// loop's instructions follow as a user message, never a second
		// system message: Ollama's templates gather every system message
		// into one block at the top of the prompt, so the prompt would
		// no longer begin with the cycle's exchange and its cache would
		// serve only the part before the first difference.
		msgs = append(slices.Clone(a.Exchange), llm.Message{Role: llm.RoleUser, Content: prompt.Clean(prefixBridge + "\n\n" + system)})
	case a.Prefix != "":
		// The cycle's stable prefix first: a server slot holding the
		// agent's cycle prompt serves this prompt's start too.
		system = a.Prefix + "\n\n" + prefixBridge + "\n\n" + system
		fallthrough
	default:
		msgs = []llm.Message{{Role: llm.RoleSystem, Content: prompt.Clean(system)}}
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: prompt.Clean(goal)})
	// Without the cycle's exchange or prefix: the turn a small window
	// can hold.
	alone := []llm.Message{{Role: llm.RoleSystem, Content: prompt.Clean(base)}, {Role: llm.RoleUser, Content: prompt.Clean(goal)}}
	shared := len(a.Exchange) > 0 || a.Prefix != ""
	r.head = len(msgs)
	overflowed := false // the last turn's prompt did not fit the window
	for r.steps < e.cfg.MaxSteps {
		if ctx.Err() != nil {
			return r.interrupted(ctx), nil
		}
		req := &llm.Request{
			Tools:       slices.Clone(r.defs),
			Temperature: e.cfg.Temperature,
			MaxTokens:   e.cfg.MaxTokens,
		}
		// The history is compacted before a turn that would fill the
		// window past CompactAt, and after a prompt that did not fit.
		r.window, r.est, _ = llm.ContextWindowOf(ctx, model)
		if r.window > 0 && shared && r.steps == 0 {
			// The cycle's exchange or prefix comes first only while the
			// window holds it with the turn and the reply's reserve: in a
			// small window the loop starts without it (the server's cache
			// serves less, the goal still runs), since compaction keeps
			// the head.
			req.Messages = msgs
			if r.tokens(msgs, r.est)+ctxwindow.Reserve(req, 0, r.window) > r.window {
				msgs = slices.Clone(alone)
				r.head = len(msgs)
			}
			shared = false
		}
		if r.window > 0 {
			req.Messages = msgs
			keep := e.cfg.KeepTurns
			if len(msgs) > r.head && r.keptRoom(msgs, keep, r.window, r.est) < MinTurnReply {
				keep = 0 // even the kept turns leave no room for a reply: every turn is folded
			}
			if overflowed || keep == 0 && len(msgs) > r.head || r.tokens(msgs, r.est)+ctxwindow.Reserve(req, 0, r.window) > r.compactAt(r.window) {
				msgs = r.compact(ctx, model, msgs, r.window, r.est, keep)
			}
			// A turn the window cannot hold with its reply's reserve,
			// even compacted, gets the room left for its reply
			// (ReplyRoom) when that is at least MinTurnReply tokens;
			// otherwise the model adapter refuses it, saying by how much
			// it missed.
			need := r.tokens(msgs, r.est)
			if ReplyRoom(r.window, need) < MinTurnReply && len(msgs) > r.head && keep > 0 {
				// The fold note took the room the kept turns left.
				msgs = r.compact(ctx, model, msgs, r.window, r.est, 0)
				need = r.tokens(msgs, r.est)
			}
			req.Messages = msgs
			if room := ReplyRoom(r.window, need); room < ctxwindow.Reserve(req, 0, r.window) && room >= MinTurnReply {
				req.MaxTokens = room
			}
		}
		req.Messages = slices.Clone(msgs)
		resp, err := model.Generate(ctx, req)
		r.steps++
		if resp != nil {
			r.promptTokens += resp.PromptTokens
			r.outputTokens += resp.OutputTokens
		}
		if err != nil {
			if ctx.Err() != nil {
				return r.interrupted(ctx), nil
			}
			var te *llm.TruncatedError
			if resp == nil && errors.As(err, &te) && te.Response != nil {
				r.promptTokens += te.Response.PromptTokens
				r.outputTokens += te.Response.OutputTokens
			}
			var ce *llm.ContextLengthError
			if errors.As(err, &ce) {
				if ce.Response != nil { // a prompt the server cut: its tokens were spent
					r.promptTokens += ce.Response.PromptTokens
					r.outputTokens += ce.Response.OutputTokens
				}
				if !overflowed && r.steps < e.cfg.MaxSteps {
					overflowed = true
					continue // compact, and try the turn once more
				}
			}
			r.modelFailed = true
			return r.outcome(identity.Failed, "model error: "+err.Error()),
				fmt.Errorf("toolloop: model turn %d: %w", r.steps, err)
		}
		overflowed = false
		if resp == nil {
			r.modelFailed = true
			err := errors.New("model returned no response")
			return r.outcome(identity.Failed, "model error: "+err.Error()),
				fmt.Errorf("toolloop: model turn %d: %w", r.steps, err)
		}

		if len(resp.ToolCalls) == 0 {
			final := strings.TrimSpace(resp.Text)
			f := Final{Answer: final, Calls: r.calls, Succeeded: r.succeeded,
				Writes: r.writes, WritesSucceeded: r.writesOK, LastWriteError: r.lastWriteErr,
				Artifacts: slices.Clone(r.artifacts), Discoveries: slices.Clone(r.discoveries)}
			if err := e.cfg.Check(ctx, a, f); err != nil {
				if ctx.Err() != nil {
					return r.interrupted(ctx), nil
				}
				return r.outcome(identity.Failed, "artifact check failed: "+err.Error()), nil
			}
			return r.outcome(identity.Done, final), nil
		}

		calls := slices.Clone(resp.ToolCalls)
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = "call_" + strconv.Itoa(r.steps) + "_" + strconv.Itoa(i)
			}
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: calls})
		for _, c := range calls {
			if r.same(c) >= e.cfg.MaxSameCalls {
				return r.stalled(StallSameCall, fmt.Sprintf(
					"abandoned: the same tool call was made %d times in a row: %s %s",
					r.sameCount, c.Name, runes.Head(string(c.Arguments), 200))), nil
			}
			result, failed := r.call(ctx, c)
			if ctx.Err() != nil {
				return r.interrupted(ctx), nil
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, Content: prompt.Clean(result), ToolCallID: c.ID, Name: c.Name})
			if !failed {
				r.consecutive = 0
				continue
			}
			r.consecutive++
			if r.consecutive >= e.cfg.MaxConsecutiveFailures {
				return r.stalled(StallNoProgress, fmt.Sprintf(
					"abandoned after %d consecutive tool failures; last: %s: %s",
					r.consecutive, c.Name, runes.Head(result, 200))), nil
			}
		}
	}
	return r.stalled(StallStepBudget, fmt.Sprintf(
		"step budget of %s exhausted before a final answer", turns(e.cfg.MaxSteps))), nil
}

func (e *Executor) systemPrompt(a existence.Assignment, names []string) string {
	if e.cfg.System != "" {
		return e.cfg.System
	}
	var b strings.Builder
	if a.AgentName != "" {
		fmt.Fprintf(&b, "You are %s, an autonomous agent pursuing one goal with tools.\n", a.AgentName)
	} else {
		b.WriteString("You are an autonomous agent pursuing one goal with tools.\n")
	}
	if w := strings.TrimSpace(e.cfg.World); w != "" {
		b.WriteString(w)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Your goal: %s\n", a.Goal.Objective)
	if a.Task != nil {
		fmt.Fprintf(&b, "The goal pursues a task assigned to you: %s\n", a.Task.Description)
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "Your tools: %s.\n", strings.Join(names, ", "))
	}
	b.WriteString("Call tools to make real progress and read their results. " +
		"A result that starts with \"Error:\" means the call failed: change your approach rather than repeating it.\n" +
		"When the goal is done, or cannot be done, stop calling tools and answer with a short final summary " +
		"of what you produced (files written, findings), with no tool calls.")
	return b.String()
}

// prefixBridge follows the cycle's stable prefix ([existence.Assignment].Prefix)
// in the system prompt, or opens the user message of the loop's
// instructions after the cycle's exchange ([existence.Assignment].Exchange): that text chose the goal;
// its response format is not this loop's.
const prefixBridge = "(The text above is how you chose your goal. You have chosen it; its JSON response format does not apply from here on.)"

func userPrompt(a existence.Assignment) string {
	s := "Pursue your goal now: " + a.Goal.Objective
	if a.Task != nil {
		s += "\nAssigned task"
		if a.Task.ID != "" {
			s += " " + a.Task.ID
		}
		s += ": " + a.Task.Description
	}
	return s
}

// run is the state of one Execute.
type run struct {
	e                          *Executor
	a                          existence.Assignment
	head                       int // leading messages compaction keeps: the exchange, system prompt and goal
	steps                      int
	promptTokens, outputTokens int
	consecutive                int
	calls, succeeded           int            // tool calls made, and those that succeeded
	writes, writesOK           int            // calls of tools that write (Writing), and those that succeeded
	lastWriteErr               string         // the result of the last failed write
	sameKey                    string         // the last tool call, as sameKey returns it
	sameCount                  int            // how many times in a row it was made
	failures                   map[string]int // per known tool
	artifacts                  []string
	discoveries                []identity.Discovery
	window                     int                 // the model's context window this turn; 0 unknown
	est                        *llm.TokenEstimator // its token estimator (nil: characters / 4)

	defs  []llm.ToolDef        // the tools offered: the executor's, and the memory tools
	names []string             // their names
	extra map[string]toolEntry // the memory tools, when offered

	mem            *memory.Memory // the long-term memory, nil without (memory.go)
	sequence       []string       // the tools that succeeded, in order
	wasInterrupted bool           // ctx ended: nothing to learn
	modelFailed    bool           // the model failed: nothing to learn about the goal
}

func (r *run) outcome(status identity.GoalStatus, summary string) existence.Outcome {
	var broken []string
	for name, n := range r.failures {
		if n >= r.e.cfg.BrokenAfter {
			broken = append(broken, name)
		}
	}
	sort.Strings(broken)
	return existence.Outcome{
		Status:       status,
		Summary:      summary,
		BrokenTools:  broken,
		Steps:        r.steps,
		PromptTokens: r.promptTokens,
		OutputTokens: r.outputTokens,
		Artifacts:    slices.Clone(r.artifacts),
		Discoveries:  slices.Clone(r.discoveries),
	}
}

// stalled ends the goal ABANDONED by a stall rule, and reports an
// [event.Stall].
func (r *run) stalled(rule, summary string) existence.Outcome {
	out := r.outcome(identity.Abandoned, summary)
	out.Stall = rule
	if r.a.Report != nil {
		r.a.Report(event.Event{Kind: event.Stall, Reason: rule, Goal: r.a.Goal.Objective, Text: summary})
	}
	return out
}

// same counts c against the previous tool calls and returns how many times
// in a row the same call has now been made.
func (r *run) same(c llm.ToolCall) int {
	k := sameKey(c)
	if k == r.sameKey {
		r.sameCount++
	} else {
		r.sameKey, r.sameCount = k, 1
	}
	return r.sameCount
}

// sameKey identifies a tool call by its name and arguments compared as
// JSON values (key order and spacing do not matter); arguments that are not
// JSON are compared as bytes.
func sameKey(c llm.ToolCall) string {
	args := []byte(c.Arguments)
	var v any
	if err := json.Unmarshal(args, &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	return c.Name + "\x00" + string(args)
}

func (r *run) interrupted(ctx context.Context) existence.Outcome {
	r.wasInterrupted = true
	return r.outcome(identity.Abandoned, fmt.Sprintf(
		"interrupted after %s: %v", turns(r.steps), context.Cause(ctx)))
}

// call dispatches one tool call and reports it. It returns the result text
// for the model and whether the call failed.
func (r *run) call(ctx context.Context, c llm.ToolCall) (result string, failed bool) {
	ctx, span := startToolSpan(ctx, r.a, c)
	defer func() { endToolSpan(span, r.a, result, failed) }()
	start := time.Now()
	ent, known := r.e.tools[c.Name]
	if !known {
		ent, known = r.extra[c.Name]
	}
	switch {
	case !known:
		result, failed = fmt.Sprintf("Error: unknown tool %q; available tools: %s",
			c.Name, strings.Join(r.names, ", ")), true
	default:
		args, err := checkArgs(ent.schema, c.Arguments)
		if err != nil {
			result, failed = "Error: "+err.Error(), true
			break
		}
		var rep reports
		result, rep, failed = r.invoke(ctx, ent.tool, args)
		if !failed {
			for _, p := range rep.artifacts {
				r.artifacts = mergeArtifact(r.artifacts, p)
			}
			for _, d := range rep.discoveries {
				r.discoveries = mergeDiscovery(r.discoveries, d)
			}
		}
	}
	if failed && known {
		r.failures[c.Name]++
	}
	r.calls++
	if !failed {
		r.succeeded++
	}
	if known && writes(ent.tool) {
		r.writes++
		if failed {
			r.lastWriteErr = strings.TrimPrefix(result, "Error: ")
		} else {
			r.writesOK++
		}
	}
	if !failed && result == "" {
		result = "(no output)"
	}
	if !failed {
		r.sequence = append(r.sequence, c.Name)
		if _, memoryTool := r.extra[c.Name]; !memoryTool {
			r.remember(ctx, memory.Note{Kind: memory.KindOutcome, Text: OutcomeMemory(r.a.Goal.Objective, c.Name, result)})
		}
	}
	result = elide(result, r.resultCap(r.window, r.est))
	if r.a.Report != nil {
		r.a.Report(event.Event{
			Kind: event.ToolCall,
			Tool: &event.ToolCallInfo{
				Name:      c.Name,
				Arguments: cut(string(c.Arguments)),
				Result:    cut(result),
				Failed:    failed,
				Duration:  time.Since(start),
			},
		})
	}
	return result, failed
}

type callResult struct {
	text string
	err  error
}

// reports is what one successful tool call reported.
type reports struct {
	artifacts   []string
	discoveries []identity.Discovery
}

// invoke runs t.Call under the per-tool timeout in its own goroutine, so that
// a tool that ignores its ctx cannot hold up the loop (its goroutine runs on
// until Call returns; its late result and reports are discarded). The
// tool's ctx carries the assignment ([Caller]) and collects its reports.
func (r *run) invoke(ctx context.Context, t Tool, args json.RawMessage) (string, reports, bool) {
	tctx, cancel := context.WithTimeout(ctx, r.e.cfg.ToolTimeout)
	defer cancel()
	tctx = WithCaller(tctx, r.a)
	tctx, artifacts := CollectArtifacts(tctx)
	tctx, discoveries := CollectDiscoveries(tctx)
	done := make(chan callResult, 1)
	go func() {
		var res callResult
		defer func() {
			if p := recover(); p != nil {
				res = callResult{err: fmt.Errorf("tool panicked: %v", p)}
			}
			done <- res
		}()
		res.text, res.err = t.Call(tctx, args)
	}()
	var res callResult
	select {
	case res = <-done:
	case <-tctx.Done():
		select {
		case res = <-done: // finished at the same instant
		default:
			res = callResult{err: tctx.Err()}
		}
	}
	if res.err == nil {
		return res.text, reports{artifacts: artifacts(), discoveries: discoveries()}, false
	}
	if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return TimedOut, reports{}, true
	}
	return "Error: " + res.err.Error(), reports{}, true
}

// turns says "1 model turn", "2 model turns".
func turns(n int) string {
	if n == 1 {
		return "1 model turn"
	}
	return strconv.Itoa(n) + " model turns"
}

func cut(s string) string {
	if runes.Count(s) <= eventChars {
		return s
	}
	return runes.Head(s, eventChars-1) + "…"
}
