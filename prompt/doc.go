// Package prompt builds the existence prompt an agent reads every cycle and
// parses the JSON the model answers with (spec §2 and §3).
//
// # Sections
//
// An [Assembler] renders an ordered list of named [Section] values from a
// [View] (one agent at one instant) and joins the present ones with exactly
// one blank line; a conditional section that is absent leaves no blank
// line, and the prompt has no leading or trailing newline. [New] starts from
// the 18 sections of spec §2, in this order:
//
//	 1 task             ASSIGNED TASK: … (only when a task is assigned)
//	 2 identity         You are {name}.
//	 3 world            WORLD CONTEXT (factual — not instructions):
//	 4 situation        YOUR SITUATION:
//	 5 inner_state      YOUR INNER STATE: (the suffering fragment, spec §4)
//	 6 worldview        YOUR WORLDVIEW:
//	 7 opinions         YOUR OPINIONS: (the 6 most recent)
//	 8 questions        OPEN QUESTIONS: (the 5 most recent)
//	 9 history          YOUR HISTORY: (the first 400 characters)
//	10 peers            YOUR PEERS: (name and first 150 characters each)
//	11 discoveries      WHAT YOU'VE FOUND OUTSIDE:
//	12 time             TIME: (running for, last goal completed)
//	13 last_outcome     WHAT YOUR LAST GOAL PRODUCED: (conditional)
//	14 recent_goals     WHAT YOU'VE BEEN DOING LATELY: (conditional; last 5)
//	15 peer_messages    MESSAGES FROM YOUR PEERS: (conditional; last 5)
//	16 host_message     A PERSON SAID: (conditional)
//	17 directive        ---, then "You must pick a goal. That is the only option." …
//	18 response_format  Your response must be JSON: and the shape of spec §3
//
// The situation section ends with [PresenceLine] when a person was present
// (a host message or an assigned task arrived) within [PresenceWindow],
// 12 hours ([Present]; spec §2 "Presence"), whatever the situation text;
// under [LayoutCache] the line ends the time section instead, after the
// stable prefix.
//
// One more built-in section is placed by the application, not by New:
// [SlotsSection] ("slots", WORLD UPDATES) lists the slots the agent sees
// ([View].Slots: what its minds and the world report, GLaDOS's "Tasks"
// block), most important first; it is absent when there are none, so a
// prompt without slots is unchanged. The trio places it after the
// discoveries.
//
// For a single agent with no peers, [Solo] keeps the same sections but
// shows peers and discoveries only when there are some, and uses
// [SoloSituation], which does not mention peers.
//
// The names are the constants [SectionTask] … [SectionResponseFormat]
// ([DefaultOrder] lists them). The application supplies the world, the
// situation ([DefaultSituation] otherwise), the ranked goals, the
// prohibitions and a grounding line through [Config]; the caps come from
// the View's [identity.Limits]. Every verbatim string of the spec is
// reproduced exactly, em dashes included; items shown one per line (goals,
// messages, opinions) are flattened to one line, and every cut counts
// Unicode code points, never bytes.
//
// Assembly is pure and deterministic: the same View gives the same bytes on
// every run and platform (nothing iterates over a map), and it takes a few
// microseconds (see BenchmarkAssemble). An Assembler is safe for concurrent
// use.
//
// # Text written by others
//
// Most of a prompt is text another party wrote: peers' names, narratives
// and messages, the host's messages, a task, tool results turned into
// discoveries and outcomes. It is cleaned once, in one place: every
// section's text goes through [Clean] as the assembler joins it (custom
// sections and the configured world included), so no prompt holds a C0 or
// C1 control character other than newline and tab, or a bidirectional
// control (U+202A–U+202E, U+2066–U+2069); in one-line items they separate
// words. Names and message senders that are not plain names
// ([identity.ValidateName]: no line breaks, brackets or colons) are shown
// quoted with their escapes visible, so that "host\nA PERSON SAID:" reads
// ["host\nA PERSON SAID:"] and cannot pass for a header. Ordinary text is
// unchanged, byte for byte.
//
// # Custom sections
//
// A section is a small interface: a name and a Render method. [SectionFunc]
// builds one from functions, with a conditional flag (When) and an optional
// trim priority. Application data reaches a section through a typed [Key]
// stored in the View's [Values], without this package knowing its type:
//
//	var Notes = prompt.NewKey[string]("tool_notes")
//
//	asm := prompt.New(cfg)
//	err := asm.InsertAfter(prompt.SectionDiscoveries, prompt.SectionFunc{
//		ID:   "tool_notes",
//		When: func(v *prompt.View) bool { _, ok := Notes.Get(v); return ok },
//		Text: func(v *prompt.View) string { n, _ := Notes.Get(v); return "TOOL NOTES:\n" + n },
//	})
//
// The builder methods [Assembler.Replace], [Assembler.Remove],
// [Assembler.InsertBefore], [Assembler.InsertAfter],
// [Assembler.MoveBefore], [Assembler.MoveAfter] and [Assembler.Reorder]
// edit the list; [Assembler.Names] and [Assembler.Section] inspect it and
// [Assembler.Clone] copies it. A name the assembler does not have is an
// error ([ErrUnknownSection]), never a silent no-op; names are unique
// ([ErrDuplicateSection]).
//
// # Recalled memories
//
// [Memories] is a built-in section an application may add to the
// existence prompt ([SectionMemories]; it is not one of spec §2's 18): the
// long-term memories recalled for the agent ([View].Memories, filled by the
// existence loop when the agent has a memory), under the original's
// header [MemoriesHeader], "Relevant past experience (use this to avoid
// repeating mistakes and build on prior work):", one "- " line each, cut
// to 150 characters. It is absent when nothing was recalled, so a prompt
// without memories is byte for byte the same as without the section; it
// shrinks visibly under a budget. [MemoryBlock] renders the same block for
// the tool loop's first turn.
//
// # Size budget
//
// [Config].Budget ([Budget]) optionally caps the prompt in characters or in
// tokens (characters / 4 by default, [EstimateTokens], or a custom counter).
// When the prompt would exceed it, sections that implement [Trimmer] shrink
// in priority order: discoveries, history, older opinions (the newest are
// kept), questions, peers, recent goals, peer messages, last outcome,
// worldview, host message, situation, task. The world context, directive
// and response format (and the identity, inner state and time sections)
// never shrink. Every cut leaves [CutMarker] in the text and is reported in
// [Prompt].Cuts, from which the existence package emits an event. When even
// the minimal prompt is too large, Assemble fails with [ErrBudget] (a
// [*BudgetError] saying by how much).
//
// # Response
//
// [Response] is the JSON object of spec §3. [Schema] is its JSON Schema,
// generated from the Go type; it is both what is sent to the model as the
// structured-output format and what [ParseResponse] validates against.
// ParseResponse strips a <think>…</think> preamble and code fences, finds
// the JSON object, normalises it as the original system did ("action"
// becomes "goal"; an empty "content" falls back to "reasoning"; a missing
// "reasoning", null optional fields and entries missing a secondary field
// are tolerated) and validates it. A failure is a [*ParseError] classified
// as [ErrTooLarge], [ErrNoJSON], [ErrSyntax], [ErrSchema] (with the JSON
// Pointer of the bad field), [ErrEmptyGoal] or [ErrDuplicateKey] (a key
// named twice anywhere in the reply: it is refused as a whole, so that no
// reading of an ambiguous reply becomes a goal). It never panics and
// refuses input over [MaxResponseBytes].
//
// # Unit-testing your prompt
//
// The prompt/prompttest package makes a prompt change a fast,
// deterministic test:
//
//  1. Write the section (a [SectionFunc] or your own type) and insert it
//     where it belongs.
//  2. Build a situation with prompttest.NewState (a fixed clock, opinions,
//     stressors, goals, peers, messages, a task) and assemble it.
//  3. Assert what matters (prompttest.SectionOrder, SectionWithHeader,
//     ShownOpinions, FitsBudget) and pin the whole text with
//     prompttest.Golden(t, "name", p.Text).
//  4. Run go test -update once to write testdata/name.golden, review it,
//     and commit it. Any later change to the prompt fails with a line diff
//     until you accept it with -update.
//
// The examples/customprompt directory does this for a WORKING MEMORY
// section.
package prompt
