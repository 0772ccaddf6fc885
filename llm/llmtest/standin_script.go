package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/llm"
)

// ScriptGoals are the goals [ScriptedReply] chooses from, in the order
// it pursues them: each can be reached with the workspace tools, each is
// shorter than the 75 characters the prompt shows of a recent goal, and
// no two share enough words to count as a repeat (the goal-repeat rule's
// similarity is below 0.5 for every pair). There are more of them than the
// rule's window of 10 goals, so that an agent going round them never
// repeats itself within the window.
var ScriptGoals = []string{
	"map the workspace and write an index of what is there",
	"write a note on what I notice in the workspace",
	"leave the others a note on what I am doing",
	"list the folders and describe each one in a short guide",
	"draft a glossary of the terms used in the files",
	"write a checklist of open questions about the project",
	"summarise the newest files for a reader arriving later",
	"plan my next three steps and record them",
	"collect ideas for tools we could build",
	"describe how the workspace changed since my last look",
	"write a short welcome page for new agents",
	"record the lessons learned so far in a journal entry",
}

// recentHeader starts the prompt's recent goals (spec §2 row 14), the
// last goals of the agent, oldest first, one a line.
const recentHeader = "WHAT YOU'VE BEEN DOING LATELY:"

// nextGoal picks the goal of an existence cycle whose prompt is prompt,
// as a model that reads its recent goals would: the one after the latest
// of [ScriptGoals] the recent goals show, so that an agent goes round them
// in order; with none shown (a first cycle), one chosen by a hash of the
// prompt, which names the agent, so that agents mostly start apart.
func nextGoal(prompt string) string {
	recent := ""
	if _, after, ok := strings.Cut(prompt, recentHeader); ok {
		recent, _, _ = strings.Cut(after, "\n\n")
	}
	latest, at := -1, -1
	for i, g := range ScriptGoals {
		if j := strings.LastIndex(recent, g); j > at {
			latest, at = i, j
		}
	}
	if latest < 0 {
		return ScriptGoals[hashOf(prompt)%uint32(len(ScriptGoals))]
	}
	return ScriptGoals[(latest+1)%len(ScriptGoals)]
}

// ScriptedReply is a deterministic stand-in model that uses the workspace
// tools (list_files, write_file), so that a run without a real model shows
// the whole loop: goals chosen, tools called, goals ended DONE with
// evidence. Pass it as [ServerConfig].Reply. It answers:
//
//   - a structured-output request (an existence cycle) with a goal from
//     [ScriptGoals]: {"action":"goal","content":GOAL,"reasoning":...}, the
//     one after the latest its recent goals show (a model varies its
//     goals; one that repeats a recent goal would count it as a failure),
//     or, on a first cycle, one chosen by a hash of the prompt;
//   - a request with tools, by the number of tool results so far: first
//     list_files {"path":"."}, then write_file of "notes/{goal slug}.md"
//     (the goal and the listing), then a final answer naming the file. A
//     tool it needs that the request does not offer is skipped;
//   - anything else with "ok".
//
// It never fails and does not look at what the tools returned beyond
// quoting the listing, so the same conversation always gets the same
// answer.
func ScriptedReply(c *Call) Answer {
	if a, ok := agentsReply(c); ok { // workflow steps, working memory, commissioning
		return a
	}
	if len(c.Format) > 0 {
		var prompt strings.Builder
		for _, m := range c.Messages {
			prompt.WriteString(m.Content)
		}
		goal := nextGoal(prompt.String())
		b, _ := json.Marshal(map[string]string{"action": "goal", "content": goal,
			"reasoning": "the scripted stand-in model acts through the workspace tools"})
		return Answer{Text: string(b)}
	}
	if len(c.Tools) == 0 {
		return Answer{Text: "ok"}
	}
	has := func(name string) bool {
		return slices.ContainsFunc(c.Tools, func(d llm.ToolDef) bool { return d.Name == name })
	}
	goal := goalOf(c.Messages)
	goal, _, _ = strings.Cut(goal, "\n")
	if _, after, ok := strings.Cut(goal, ": "); ok {
		goal = after // "Pursue your goal now: ..."
	}
	file := "notes/" + slug(goal) + ".md"
	var results []string
	for _, m := range c.Messages {
		if m.Role == llm.RoleTool {
			results = append(results, m.Content)
		}
	}
	step := len(results)
	if step == 0 && !has("list_files") {
		step = 1
	}
	switch {
	case step == 0:
		return call("list_files", map[string]string{"path": "."})
	case step == 1 && has("write_file"):
		listing := ""
		if len(results) > 0 {
			listing = "\nThe workspace held:\n\n" + cutRunes(results[0], 2000) + "\n"
		}
		return call("write_file", map[string]string{"path": file, "content": "# " + goal + "\n" + listing})
	case has("write_file"):
		return Answer{Text: "Done: wrote " + file + " (" + goal + ")."}
	}
	return Answer{Text: "Done: looked at the workspace (" + goal + ")."}
}

// call is an answer asking for one tool call.
func call(name string, args map[string]string) Answer {
	b, _ := json.Marshal(args)
	return Answer{ToolCalls: []llm.ToolCall{{ID: "call_0", Name: name, Arguments: b}}}
}

// goalOf returns the content of the user message that states the goal:
// the first that starts "Pursue your goal now:" (after a cycle's exchange
// when the loop continues one), else the first user message, else "".
func goalOf(msgs []llm.Message) string {
	first := ""
	for _, m := range msgs {
		switch {
		case m.Role != llm.RoleUser:
		case strings.HasPrefix(m.Content, "Pursue your goal now:"):
			return m.Content
		case first == "":
			first = m.Content
		}
	}
	return first
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// slug makes a file name of s: lower-case letters and digits joined by
// "-", at most 48 bytes, cut after a whole word; "goal" when nothing is
// left.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			if b.Len() >= 48 {
				break
			}
		} else {
			dash = true
		}
	}
	out := b.String()
	if b.Len() >= 48 {
		if i := strings.LastIndexByte(out, '-'); i > 0 {
			out = out[:i] // whole words
		}
	}
	if out == "" {
		return "goal"
	}
	return out
}

// cutRunes cuts s to at most n code points.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("… (%d more characters)", len(r)-n)
}

// toolCallTokens is what a model generates to call tools, in the
// stand-in's tokens: each call's name and arguments, as a server counts
// them in its output tokens.
func toolCallTokens(calls []llm.ToolCall) int {
	n := 0
	for _, tc := range calls {
		n += len(Tokenize(tc.Name + string(tc.Arguments)))
	}
	return n
}
