package toolloop

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/llm"
)

// Context-window defaults of [Config].
const (
	// DefaultCompactAt: a turn whose history would fill more than 80 % of
	// the context window compacts it first.
	DefaultCompactAt = 0.8
	// DefaultKeepTurns: compaction keeps the last 2 tool-loop turns
	// verbatim.
	DefaultKeepTurns = 2
	// compactTo: compaction aims for half the window, leaving room for
	// the turns to come.
	compactTo = 0.5
	// digestResultChars caps each tool result in the deterministic digest
	// of folded turns.
	digestResultChars = 200
	// summaryTokens caps the summarising call's reply.
	summaryTokens = 400
)

// Compaction methods, in [event.ContextStats].Method.
const (
	MethodSummary = "summary"
	MethodElision = "elision"
)

// SummaryPrompt is the system prompt of the call that summarises folded
// tool-loop turns.
const SummaryPrompt = "You summarise an agent's work log so that it can go on with its goal. " +
	"Write at most 200 words of plain text: what it tried, what each tool call found " +
	"(paths, facts, errors) and what is left to do. No preamble, no tool calls."

// turn is one step of the tool loop in the history: an assistant message
// and the tool results that answer its calls (or a lone message, such as
// an earlier summary).
type turn []llm.Message

// splitTurns groups msgs (the history after the goal) into turns.
func splitTurns(msgs []llm.Message) []turn {
	var out []turn
	for _, m := range msgs {
		if m.Role == llm.RoleTool && len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], m)
			continue
		}
		out = append(out, turn{m})
	}
	return out
}

// elide cuts s to max characters (code points) of its own, its head and
// tail, around a line that says how many were left out:
// "[… N characters elided]".
func elide(s string, max int) string {
	n := runes.Count(s)
	if n <= max {
		return s
	}
	head := max * 2 / 3
	tail := max - head
	r := []rune(s)
	return string(r[:head]) + fmt.Sprintf("\n[… %d characters elided]\n", n-head-tail) + string(r[n-tail:])
}

// resultChars converts a token cap into characters with est's ratio.
func resultChars(tokens int, est *llm.TokenEstimator) int {
	ratio, _ := est.Ratio()
	return max(int(float64(tokens)*llm.CharsPerToken/ratio), 64)
}

// tokens estimates the prompt of msgs with the executor's tools.
func (r *run) tokens(msgs []llm.Message, est *llm.TokenEstimator) int {
	return est.Request(&llm.Request{Messages: msgs, Tools: r.defs})
}

// keptRoom returns the tokens left for a reply in window after a
// compaction of msgs that keeps the last keep turns verbatim: the window
// less the head, those turns and the spare ReplyRoom keeps.
func (r *run) keptRoom(msgs []llm.Message, keep, window int, est *llm.TokenEstimator) int {
	turns := splitTurns(msgs[r.head:])
	kept := slices.Clone(msgs[:r.head])
	for _, t := range turns[len(turns)-min(keep, len(turns)):] {
		kept = append(kept, t...)
	}
	return ReplyRoom(window, r.tokens(kept, est))
}

// noteOverhead is the tokens the fold note adds besides the text it
// keeps: its message's role and template markers and elide's marker.
const noteOverhead = 16

// compact shrinks the history msgs (msgs[:r.head] are the goal: the
// system prompt and user prompt, after the cycle's exchange when the loop
// continues it) to about half of window tokens. The turns before the
// last keepTurns (Config.KeepTurns, or 0 when the window cannot hold
// them and a reply) are folded: into a summary written by one model
// call ([SummaryPrompt]), or, when that call fails, its summary does not
// fit, or Config.NoSummary is set, into a deterministic digest of each
// call and the head of its result. The goal, the plan (the first turn's
// text) and the kept turns stay verbatim, but for tool results cut to head
// and tail when they alone are too long. It reports an
// [event.ContextCompacted] and returns the new history, or msgs
// when there was nothing to fold or elide.
func (r *run) compact(ctx context.Context, model llm.Model, msgs []llm.Message, window int, est *llm.TokenEstimator, keepTurns int) []llm.Message {
	before := r.tokens(msgs, est)
	target := int(compactTo * float64(window))
	if len(msgs) <= r.head {
		return msgs
	}
	head, turns := msgs[:r.head], splitTurns(msgs[r.head:])
	keep := min(keepTurns, len(turns))
	folded, kept := turns[:len(turns)-keep], turns[len(turns)-keep:]

	var out []llm.Message
	method := MethodElision
	if len(folded) > 0 {
		note := ""
		if !r.e.cfg.NoSummary && keepTurns > 0 { // folding every turn happens every turn: no model call for it
			if s, ok := r.summarise(ctx, model, folded, window, est); ok {
				note, method = "Summary of your earlier turns ("+plural(len(folded), "turn")+" folded to fit the context window):\n"+s, MethodSummary
			}
		}
		if note == "" {
			note = "Your earlier turns (" + plural(len(folded), "turn") + " folded to fit the context window):\n" + digest(folded, digestResultChars)
		}
		if plan := planOf(turns); plan != "" {
			note += "\nYour plan: " + plan
		}
		if keepTurns == 0 {
			// Nothing kept: the note gets what the window leaves beside
			// the head and a reply of MinTurnReply tokens, with the
			// spare ReplyRoom keeps (a sixteenth of the prompt).
			note = elide(note, resultChars((window-MinTurnReply)*16/17-r.tokens(head, est)-noteOverhead, est))
		}
		out = append(slices.Clone(head), llm.Message{Role: llm.RoleUser, Content: note})
	} else {
		out = slices.Clone(head)
	}
	for _, t := range kept {
		out = append(out, t...)
	}
	// Tool results of the kept turns that are still too long are cut to
	// head and tail, the longest first, halving the cap until it fits.
	for limit := resultChars(target/4, est); r.tokens(out, est) > target && limit > 64; limit /= 2 {
		for i := len(head); i < len(out); i++ {
			if out[i].Role == llm.RoleTool {
				out[i].Content = elide(out[i].Content, limit)
			}
		}
	}
	after := r.tokens(out, est)
	if len(folded) == 0 && after >= before {
		return msgs // nothing could be done
	}
	if r.a.Report != nil {
		r.a.Report(event.Event{Kind: event.ContextCompacted, Context: &event.ContextStats{
			Purpose: "executor", Window: window, Before: before, After: after, Folded: len(folded), Method: method,
		}})
	}
	return out
}

// summarise asks the model to summarise the folded turns. It reports
// false when the call fails or its summary is blank or too long to help.
func (r *run) summarise(ctx context.Context, model llm.Model, folded []turn, window int, est *llm.TokenEstimator) (string, bool) {
	// The log itself must fit: each result gets an equal share of what
	// is left of the window after the instructions and the reply.
	budget := window - summaryTokens - est.Tokens(SummaryPrompt) - 64
	n := 0
	for _, t := range folded {
		n += len(t)
	}
	per := max(resultChars(budget/max(n, 1), est), digestResultChars)
	log := digest(folded, per)
	for per > digestResultChars && est.Tokens(log) > budget {
		per /= 2
		log = digest(folded, per)
	}
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: SummaryPrompt},
			{Role: llm.RoleUser, Content: "Goal: " + r.a.Goal.Objective + "\n\nLog:\n" + log},
		},
		MaxTokens: summaryTokens,
	}
	resp, err := model.Generate(ctx, req)
	if resp != nil {
		r.promptTokens += resp.PromptTokens
		r.outputTokens += resp.OutputTokens
	}
	if err != nil || resp == nil || strings.TrimSpace(resp.Text) == "" {
		return "", false
	}
	s := strings.TrimSpace(resp.Text)
	if est.Tokens(s) > int(compactTo*float64(window))/2 {
		return "", false // a summary as long as what it replaces helps nobody
	}
	return s, true
}

// digest renders turns as lines: each tool call with its arguments and
// the head and tail of its result (at most resultChars characters), and
// each assistant text.
func digest(turns []turn, resultChars int) string {
	var b strings.Builder
	for _, t := range turns {
		results := map[string]string{}
		for _, m := range t[1:] {
			results[m.ToolCallID] = m.Content
		}
		first := t[0]
		if txt := strings.TrimSpace(first.Content); txt != "" && first.Role != llm.RoleTool {
			fmt.Fprintf(&b, "- %s: %s\n", first.Role, elide(txt, resultChars))
		}
		for _, c := range first.ToolCalls {
			res, ok := results[c.ID]
			if !ok {
				res = "(no result)"
			}
			fmt.Fprintf(&b, "- called %s %s → %s\n", c.Name, runes.Head(string(c.Arguments), 200), elide(strings.TrimSpace(res), resultChars))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// planOf returns the first assistant turn's text: the plan the model
// stated before its first calls, cut to 400 characters.
func planOf(turns []turn) string {
	for _, t := range turns {
		if t[0].Role == llm.RoleAssistant {
			return runes.Head(strings.TrimSpace(t[0].Content), 400)
		}
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// resultCap returns the cap of one tool result in characters: the token
// cap (Config.MaxResultTokens, else a quarter of the window) converted
// with the model's ratio, within Config.MaxResultChars.
func (r *run) resultCap(window int, est *llm.TokenEstimator) int {
	limit := r.e.cfg.MaxResultChars
	tokens := r.e.cfg.MaxResultTokens
	if tokens == 0 && window > 0 {
		tokens = window / 4
	}
	if tokens > 0 {
		limit = min(limit, resultChars(tokens, est))
	}
	return max(limit, 1)
}

// compactAt is the history size in tokens past which a turn compacts
// first.
func (r *run) compactAt(window int) int {
	return int(math.Round(r.e.cfg.CompactAt * float64(window)))
}
