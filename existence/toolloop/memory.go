package toolloop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
)

// Long-term memory in the tool loop, as the original's autonomy loop kept
// it (agents/autonomy_loop.py).
const (
	// DefaultRecallK is how many memories a goal's first turn gets: 3,
	// as the original's recall before planning.
	DefaultRecallK = 3
	// OutcomeChars cuts the result in a step's outcome memory, in
	// characters, as the original's json.dumps(result)[:200].
	OutcomeChars = 200
	// summaryResultChars cuts the final answer in a goal's summary
	// memory, as the original's artifact[:300].
	summaryResultChars = 300
	// Names of the memory tools.
	RememberTool = "remember"
	RecallTool   = "recall"
	// maxRecallK bounds the recall tool's k.
	maxRecallK = 10
)

// memoryOf returns the memory a run uses: Config.Memory, else the
// assignment's, none with Config.NoMemory.
func (e *Executor) memoryOf(a existence.Assignment) *memory.Memory {
	switch {
	case e.cfg.NoMemory:
		return nil
	case e.cfg.Memory != nil:
		return e.cfg.Memory
	}
	return a.Memory
}

// OutcomeMemory is the text a successful step leaves in memory, as the
// original's: "Goal '{objective}' step {tool}: {result}", the result
// flattened and cut to [OutcomeChars] characters.
func OutcomeMemory(objective, tool, result string) string {
	return fmt.Sprintf("Goal '%s' step %s: %s", objective, tool, runes.Head(strings.Join(strings.Fields(result), " "), OutcomeChars))
}

// recallBlock recalls the memories that matter for the goal and returns
// the block for its first turn ("" for none). A failed recall is reported
// as an [event.Memory] (memory.EventError) and the goal goes on
// without.
func (r *run) recallBlock(ctx context.Context) string {
	if r.mem == nil {
		return ""
	}
	k := r.e.cfg.RecallK
	if k <= 0 {
		k = DefaultRecallK
	}
	got, err := r.mem.Recall(ctx, r.a.AgentID, memory.Query{Text: r.a.Goal.Objective, K: k})
	if err != nil {
		r.memoryError("recalling memories for the goal", err)
		return ""
	}
	texts := make([]string, 0, len(got.Results))
	for _, res := range got.Results {
		texts = append(texts, res.Memory.Text)
	}
	return prompt.MemoryBlock(texts)
}

// remember stores a memory of the goal; a failure is reported, never
// returned (the goal goes on).
func (r *run) remember(ctx context.Context, n memory.Note) {
	if r.mem == nil || ctx.Err() != nil {
		return
	}
	if _, err := r.mem.Remember(ctx, r.a.AgentID, n); err != nil {
		r.memoryError("storing a memory of the goal", err)
	}
}

func (r *run) memoryError(what string, err error) {
	if r.a.Report != nil {
		me := memory.Event{Kind: memory.EventError, AgentID: r.a.AgentID, Text: what, Err: err, Error: err.Error()}
		r.a.Report(event.Event{Kind: event.Memory, Text: what, Err: err, Memory: &me})
	}
}

// rememberOutcome stores the goal's end: a summary when it is DONE, a
// "FAILED: …" memory when it failed or was abandoned by a stall rule or
// the artifact check. Interrupted goals and model errors teach nothing
// about the goal and are not stored.
func (r *run) rememberOutcome(ctx context.Context, out existence.Outcome) {
	if r.mem == nil || r.wasInterrupted || r.modelFailed {
		return
	}
	obj := r.a.Goal.Objective
	switch out.Status {
	case identity.Done:
		tools := "none"
		if len(r.sequence) > 0 {
			tools = strings.Join(r.sequence, " → ")
		}
		result := runes.Head(strings.Join(strings.Fields(out.Summary), " "), summaryResultChars)
		if result == "" {
			result = "no artifact captured"
		}
		r.remember(ctx, memory.Note{Kind: memory.KindReflection,
			Text: fmt.Sprintf("Goal completed: '%s'. Tool sequence: %s. Result: %s. Steps: %d.", obj, tools, result, out.Steps)})
	case identity.Failed, identity.Abandoned:
		r.remember(ctx, memory.Note{Kind: memory.KindFailure,
			Text: fmt.Sprintf("FAILED: Goal '%s' %s: %s", obj, strings.ToLower(string(out.Status)), strings.Join(strings.Fields(out.Summary), " "))})
	}
}

// RememberArgs are the remember tool's arguments.
type RememberArgs struct {
	// Text is what to remember, stored as an observation (at most
	// memory.MaxTextChars characters).
	Text string `json:"text" jsonschema_description:"What to remember: a fact, a lesson, a mistake to avoid, in one or two sentences."`
	// Important marks the memory important (importance 0.9, never
	// evicted).
	Important bool `json:"important,omitempty" jsonschema_description:"True for something that must never be forgotten."`
}

// RecallArgs are the recall tool's arguments.
type RecallArgs struct {
	// Query is what to recall: it is embedded and compared with the
	// agent's memories.
	Query string `json:"query" jsonschema_description:"What you want to remember: a question or a topic."`
	// K is how many memories to return, 1–10 (0: [DefaultRecallK]; more
	// than 10: 10).
	K int `json:"k,omitempty" jsonschema_description:"How many memories, 1-10 (default 3)."`
}

// errNoMemory: a memory tool was called outside a run with a memory.
var errNoMemory = errors.New("no long-term memory is configured for this agent")

// memoryTools returns the remember and recall tools, which find the
// memory through the executor or the calling assignment.
func (e *Executor) memoryTools() []Tool {
	mem := func(ctx context.Context) (*memory.Memory, existence.Assignment, error) {
		a, ok := Caller(ctx)
		if !ok {
			return nil, a, errors.New("no calling agent")
		}
		m := e.memoryOf(a)
		if m == nil {
			return nil, a, errNoMemory
		}
		return m, a, nil
	}
	remember := NewTool(RememberTool, "Store something in your long-term memory, to be recalled in later goals.",
		func(ctx context.Context, args RememberArgs) (string, error) {
			m, a, err := mem(ctx)
			if err != nil {
				return "", err
			}
			n := memory.Note{Text: args.Text, Kind: memory.KindObservation, Important: args.Important}
			if args.Important {
				n.Importance = 0.9
			}
			rec, err := m.Remember(ctx, a.AgentID, n)
			if err != nil {
				return "", err
			}
			if rec.AccessCount > 0 {
				return fmt.Sprintf("Already remembered (%s); it now counts %d times.", rec.ID, rec.AccessCount+1), nil
			}
			return fmt.Sprintf("Remembered (%s).", rec.ID), nil
		})
	recall := NewTool(RecallTool, "Search your long-term memory: what you did, what worked and what failed in earlier goals.",
		func(ctx context.Context, args RecallArgs) (string, error) {
			m, a, err := mem(ctx)
			if err != nil {
				return "", err
			}
			k := args.K
			switch {
			case k <= 0:
				k = DefaultRecallK
			case k > maxRecallK:
				k = maxRecallK
			}
			got, err := m.Recall(ctx, a.AgentID, memory.Query{Text: args.Query, K: k})
			if err != nil {
				return "", err
			}
			if len(got.Results) == 0 {
				return "No relevant memories.", nil
			}
			var b strings.Builder
			if got.Fallback {
				b.WriteString("(The most recent and important memories: the search by meaning is unavailable.)\n")
			}
			for i, res := range got.Results {
				if i > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "- %s", strings.Join(strings.Fields(res.Memory.Text), " "))
			}
			return b.String(), nil
		})
	return []Tool{remember, recall}
}
