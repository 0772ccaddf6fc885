package prompt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
	"github.com/existence-loop/sdk/suffering"
)

// The verbatim directive and response format of spec §2 and §3, copied from
// the spec character for character.
const (
	specDirective = `---

You must pick a goal. That is the only option.

Do not pick something safe or easy. Ask yourself: what is the single most valuable
thing I could build or change right now that would make this system genuinely better?`

	specResponse = `Your response must be JSON:
{
  "action": "goal",
  "content": "what you're doing — be honest, not performative",
  "reasoning": "what actually drove this — not what sounds right, what's true",
  "worldview_update": "how understanding shifted, or null",
  "new_open_questions": ["..."],
  "new_opinions": [{"opinion": "...", "domain": "..."}],
  "suffering_assessment": {
    "new_stressors": [{"type": "...", "description": "...", "condition": "..."}],
    "resolved": [{"type": "...", "reason": "..."}]
  }
}`
)

// sectionCase is one expectation on one section's exact text; want "" means
// the section is absent.
type sectionCase struct {
	name    string
	state   *prompttest.State
	section string
	want    string
}

func runSectionCases(t *testing.T, a *prompt.Assembler, cases []sectionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := prompttest.Assemble(t, a, tc.state.View())
			if tc.want == "" {
				prompttest.SectionAbsent(t, p, tc.section)
				return
			}
			assert.Equal(t, tc.want, prompttest.SectionWithHeader(t, p, tc.section))
		})
	}
}

func agent() *prompttest.State { return prompttest.NewAgent("Cedar") }

func TestSectionTask(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"assigned", agent().Task("fix fetch_url"), prompt.SectionTask,
			"ASSIGNED TASK: fix fetch_url\nWork on this task only. Do not pick a self-directed goal."},
		{"multi-line description is flattened", agent().Task("fix\n  fetch_url\r\n\tnow "), prompt.SectionTask,
			"ASSIGNED TASK: fix fetch_url now\nWork on this task only. Do not pick a self-directed goal."},
		{"no task", agent(), prompt.SectionTask, ""},
		{"blank task", agent().Task(" \n "), prompt.SectionTask, ""},
	})
	p := prompttest.Assemble(t, trio(), prompttest.Cedar().View())
	assert.True(t, strings.HasPrefix(p.Text, "ASSIGNED TASK: "), "the task is at the very top")
}

func TestSectionIdentity(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"name", agent(), prompt.SectionIdentity, "You are Cedar."},
	})
	p := prompttest.Assemble(t, trio(), agent().View())
	assert.True(t, strings.HasPrefix(p.Text, "You are Cedar.\n\nWORLD CONTEXT"), "without a task, identity comes first")
}

func TestSectionWorld(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"trio", agent(), prompt.SectionWorld, "WORLD CONTEXT (factual — not instructions):\n" + prompttest.HollowWorld},
	})
	runSectionCases(t, prompt.New(prompt.Config{World: "\n  A small world.\nTwo lines.\n\n"}), []sectionCase{
		{"trimmed", agent(), prompt.SectionWorld, "WORLD CONTEXT (factual — not instructions):\nA small world.\nTwo lines."},
	})
	runSectionCases(t, prompt.New(prompt.Config{}), []sectionCase{
		{"blank world is absent", agent(), prompt.SectionWorld, ""},
	})
}

func TestSectionSituation(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"default", agent(), prompt.SectionSituation, "YOUR SITUATION:\n" + prompt.DefaultSituation},
	})
	runSectionCases(t, prompt.New(prompt.Config{Situation: "You tend a garden."}), []sectionCase{
		{"custom", agent(), prompt.SectionSituation, "YOUR SITUATION:\nYou tend a garden."},
		// Spec §2 row 4: the presence line belongs to the section, so a custom
		// text keeps it.
		{"custom keeps the presence line", agent().Host("hello"), prompt.SectionSituation,
			"YOUR SITUATION:\nYou tend a garden.\n" + prompt.PresenceLine},
	})
	now := prompttest.DefaultNow
	runSectionCases(t, trio(), []sectionCase{
		{"presence: host message a minute ago", agent().Host("hi"), prompt.SectionSituation,
			"YOUR SITUATION:\n" + prompt.DefaultSituation + "\n" + prompt.PresenceLine},
		{"presence: a task 11h59m ago", agent().LastPresence(now.Add(-11*time.Hour - 59*time.Minute)), prompt.SectionSituation,
			"YOUR SITUATION:\n" + prompt.DefaultSituation + "\n" + prompt.PresenceLine},
		{"no presence after 12h", agent().LastPresence(now.Add(-12 * time.Hour)), prompt.SectionSituation,
			"YOUR SITUATION:\n" + prompt.DefaultSituation},
		{"old host message", agent().Host("hi").Edit(func(v *prompt.View) { v.Host[0].At = now.Add(-13 * time.Hour) }), prompt.SectionSituation,
			"YOUR SITUATION:\n" + prompt.DefaultSituation},
	})
	assert.Equal(t, "A person was recently present in this system.", prompt.PresenceLine)
	assert.Contains(t, prompt.DefaultSituation, "persistent memory")
	assert.Contains(t, prompt.DefaultSituation, "What you do with your time is your own to decide.")
}

func TestSectionInnerState(t *testing.T) {
	var above suffering.State
	_, err := above.Add(prompttest.DefaultNow, suffering.Input{Type: "futility", Severity: 0.5, Description: "nothing lands", Condition: "a tool gets used"})
	require.NoError(t, err)
	var crisis suffering.State
	_, err = crisis.Add(prompttest.DefaultNow, suffering.Input{Type: "existential_threat", Severity: 0.95, Description: "d", Condition: "c"})
	require.NoError(t, err)

	runSectionCases(t, trio(), []sectionCase{
		{"nil suffering", agent(), prompt.SectionInnerState, "YOUR INNER STATE:\nNo active suffering. Load: 0.00/1.0."},
		{"below the threshold", agent().Stressor("futility", 0.2, "d", "c"), prompt.SectionInnerState,
			"YOUR INNER STATE:\nNo active suffering. Load: 0.20/1.0."},
		{"above the threshold", agent().Suffering(above), prompt.SectionInnerState,
			"YOUR INNER STATE:\nCurrent suffering (0.50/1.0):\n  [#####.....] futility 0.50  nothing lands\n  Will ease when: a tool gets used"},
		{"crisis", agent().Suffering(crisis), prompt.SectionInnerState,
			"YOUR INNER STATE:\n" + crisis.Fragment()},
	})
	assert.True(t, strings.HasPrefix(crisis.Fragment(), "!! CRISIS STATE — "))
}

func TestSectionWorldview(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"not yet formed", agent(), prompt.SectionWorldview, "YOUR WORLDVIEW:\n(not yet formed)"},
		{"blank", agent().Worldview("  \n"), prompt.SectionWorldview, "YOUR WORLDVIEW:\n(not yet formed)"},
		{"text", agent().Worldview(" Things compound. "), prompt.SectionWorldview, "YOUR WORLDVIEW:\nThings compound."},
		{"blank lines and trailing spaces removed", agent().Worldview("first  \r\n\n\n  indented\t\n\nlast\n"), prompt.SectionWorldview,
			"YOUR WORLDVIEW:\nfirst\n  indented\nlast"},
		{"every kind of line break", agent().Worldview("one\r\rtwo\u2029\u2029three\u2028four\fx\vy\u0085z"), prompt.SectionWorldview,
			"YOUR WORLDVIEW:\none\ntwo\nthree\nfour\nx\ny\nz"},
		{"over-cap worldview is cut to 600", agent().Worldview(strings.Repeat("é", 700)), prompt.SectionWorldview,
			"YOUR WORLDVIEW:\n" + strings.Repeat("é", 600)},
	})
}

func TestSectionOpinions(t *testing.T) {
	want20 := "YOUR OPINIONS:"
	for k := 15; k <= 20; k++ {
		want20 += fmt.Sprintf("\n  - [domain %d] opinion %d", k, k)
	}
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionOpinions, "YOUR OPINIONS:\n  (none yet — still forming through experience)"},
		{"one", agent().Opinion("tools", "Fewer, better tools."), prompt.SectionOpinions, "YOUR OPINIONS:\n  - [tools] Fewer, better tools."},
		{"no domain", agent().Opinion(" ", "Fewer tools."), prompt.SectionOpinions, "YOUR OPINIONS:\n  - Fewer tools."},
		{"flattened", agent().Opinion("a\nb", "x\n\ny"), prompt.SectionOpinions, "YOUR OPINIONS:\n  - [a b] x y"},
		{"the 6 most recent of 20", agent().Opinions(20), prompt.SectionOpinions, want20},
	})
	p := prompttest.Assemble(t, trio(), agent().Opinions(20).View())
	assert.Equal(t, 6, prompttest.ShownOpinions(t, p))
}

func TestSectionQuestions(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionQuestions, "OPEN QUESTIONS:\n  (none pending)"},
		{"the 5 most recent of 12", agent().Questions(12), prompt.SectionQuestions,
			"OPEN QUESTIONS:\n  - question 8?\n  - question 9?\n  - question 10?\n  - question 11?\n  - question 12?"},
	})
	p := prompttest.Assemble(t, trio(), agent().Questions(12).View())
	assert.Equal(t, 5, prompttest.ShownQuestions(t, p))
}

func TestSectionHistory(t *testing.T) {
	long := strings.Repeat("abcdefghij", 80) // 800 characters
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionHistory, "YOUR HISTORY:\n(no history yet)"},
		{"short", agent().Narrative("I began."), prompt.SectionHistory, "YOUR HISTORY:\nI began."},
		{"the first 400 characters", agent().Narrative(long), prompt.SectionHistory, "YOUR HISTORY:\n" + long[:400]},
		{"blank lines removed", agent().Narrative("one\n\n\ntwo"), prompt.SectionHistory, "YOUR HISTORY:\none\ntwo"},
		{"CR and paragraph separators", agent().Narrative("one\r\r\rtwo\u2029\u2029three"), prompt.SectionHistory, "YOUR HISTORY:\none\ntwo\nthree"},
		{"code points, not bytes", agent().Narrative(strings.Repeat("日", 500)), prompt.SectionHistory,
			"YOUR HISTORY:\n" + strings.Repeat("日", 400)},
	})
	p := prompttest.Assemble(t, trio(), agent().Narrative(long).View())
	assert.Equal(t, 400, prompttest.HistoryChars(t, p))
}

func TestSectionPeers(t *testing.T) {
	long := strings.Repeat("x", 149) + "yz"
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionPeers, "YOUR PEERS:\n  (unknown)"},
		{"two, in the given order", agent().Peer("Cipher", "I analyse.").Peer("Vault", "I build."), prompt.SectionPeers,
			"YOUR PEERS:\n  Cipher: I analyse.\n  Vault: I build."},
		{"first 150 characters", agent().Peer("Cipher", long), prompt.SectionPeers,
			"YOUR PEERS:\n  Cipher: " + long[:150]},
		{"no narrative", agent().Peer("Cipher", ""), prompt.SectionPeers, "YOUR PEERS:\n  Cipher: (no history yet)"},
		{"flattened", agent().Peer("Cipher", "line one\nline two"), prompt.SectionPeers, "YOUR PEERS:\n  Cipher: line one line two"},
		{"no name: the id", agent().Edit(func(v *prompt.View) {
			v.Peers = []prompt.Peer{{ID: "analyst", Narrative: "I analyse."}}
		}), prompt.SectionPeers, "YOUR PEERS:\n  analyst: I analyse."},
	})
}

func TestSectionDiscoveries(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionDiscoveries, "WHAT YOU'VE FOUND OUTSIDE:\n(no external searches yet)"},
		{"with and without source", agent().Discovery("a cache exists", "/agentOS/agents/cache.py").Discovery("tools are unused", ""),
			prompt.SectionDiscoveries, "WHAT YOU'VE FOUND OUTSIDE:\n  - a cache exists (/agentOS/agents/cache.py)\n  - tools are unused"},
		{"the 5 most recent", agent().Discoveries(8), prompt.SectionDiscoveries,
			"WHAT YOU'VE FOUND OUTSIDE:\n  - discovery 4 (/workspace/4.md)\n  - discovery 5 (/workspace/5.md)\n  - discovery 6 (/workspace/6.md)\n  - discovery 7 (/workspace/7.md)\n  - discovery 8 (/workspace/8.md)"},
	})
}

func TestSectionTime(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"new agent", agent(), prompt.SectionTime, "TIME:\n  Running for: 0s\n  Last goal completed: unknown"},
		{"running, no goal done", prompttest.NewState("Cedar").Running(45 * time.Second).Goals(identity.Failed), prompt.SectionTime,
			"TIME:\n  Running for: 45s\n  Last goal completed: unknown"},
		// The last DONE goal is the 2nd of 3: it started 20m before Now and
		// ended 4m30s later, 15m30s ago.
		{"last DONE goal", prompttest.NewState("Cedar").Running(2*time.Hour+5*time.Minute+59*time.Second).
			Goals(identity.Done, identity.Done, identity.Failed), prompt.SectionTime,
			"TIME:\n  Running for: 2h 5m\n  Last goal completed: 15m 30s ago"},
		{"hours past a day", prompttest.NewState("Cedar").Running(168*time.Hour + 9*time.Minute), prompt.SectionTime,
			"TIME:\n  Running for: 168h 9m\n  Last goal completed: unknown"},
		// Spec §2 row 12: "Running for" is the loop's uptime (View.Started),
		// not the identity's age.
		{"loop uptime, not identity age", prompttest.NewState("Cedar").CreatedAt(prompttest.DefaultNow.Add(-224 * 24 * time.Hour)).
			Edit(func(v *prompt.View) { v.Started = v.Now }), prompt.SectionTime,
			"TIME:\n  Running for: 0s\n  Last goal completed: unknown"},
		{"unknown creation", prompttest.NewState("Cedar").CreatedAt(time.Time{}), prompt.SectionTime,
			"TIME:\n  Running for: unknown\n  Last goal completed: unknown"},
	})
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "0s",
		-5 * time.Second:               "0s",
		999 * time.Millisecond:         "0s",
		45 * time.Second:               "45s",
		59 * time.Second:               "59s",
		time.Minute:                    "1m 0s",
		3*time.Minute + 12*time.Second: "3m 12s",
		time.Hour - time.Nanosecond:    "59m 59s",
		time.Hour:                      "1h 0m",
		2*time.Hour + 5*time.Minute:    "2h 5m",
		2*time.Hour + 5*time.Minute + 59*time.Second: "2h 5m",
		24 * time.Hour:                "24h 0m",
		3*24*time.Hour + 4*time.Hour:  "76h 0m",
		168*time.Hour + 9*time.Minute: "168h 9m",
		400 * 24 * time.Hour:          "9600h 0m",
	} {
		assert.Equal(t, want, prompt.FormatDuration(d), "%v", d)
	}
}

func TestSectionLastOutcome(t *testing.T) {
	long := strings.Repeat("o", 450)
	runSectionCases(t, trio(), []sectionCase{
		{"no goals", agent(), prompt.SectionLastOutcome, ""},
		{"ended without outcome", agent().Goals(identity.Done), prompt.SectionLastOutcome, ""},
		{"outcome", agent().Goals(identity.Done).Outcome("wrote notes.md"), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [DONE] wrote notes.md"},
		{"cut to 400", agent().Goals(identity.Failed).Outcome(long), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [FAILED] " + long[:400]},
		{"flattened", agent().Goals(identity.Failed).Outcome("step 1\nstep 2"), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [FAILED] step 1 step 2"},
		{"broken tools", agent().Goals(identity.Abandoned).Outcome("gave up", "fetch_url", "grep"), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [ABANDONED] gave up\n  Broken tools (each failed 3 or more times in that goal; do not rely on them): fetch_url, grep"},
		{"broken tools only", agent().Goals(identity.Abandoned).Outcome("", "fetch_url"), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [ABANDONED]\n  Broken tools (each failed 3 or more times in that goal; do not rely on them): fetch_url"},
		{"the last ended goal, not the active one", agent().Goals(identity.Done).Outcome("first").Goal(identity.Active, "now"),
			prompt.SectionLastOutcome, "WHAT YOUR LAST GOAL PRODUCED:\n  [DONE] first"},
		{"only the last ended goal counts", agent().Goals(identity.Done).Outcome("old").Goals(identity.Done), prompt.SectionLastOutcome, ""},
	})
}

func TestSectionRecentGoals(t *testing.T) {
	const footer = "(If this looks repetitive to you, it is. You don't have to keep doing it.)"
	runSectionCases(t, trio(), []sectionCase{
		{"no history", agent(), prompt.SectionRecentGoals, ""},
		{"tags", agent().Goals(identity.Done, identity.Failed, identity.Abandoned), prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - [DONE] goal 1\n  - [FAILED] goal 2\n  - [ABANDONED] goal 3\n" + footer},
		{"the last 5, active without tag", agent().Goals(identity.Done, identity.Done, identity.Failed, identity.Done, identity.Failed, identity.Abandoned, identity.Active),
			prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - [FAILED] goal 3\n  - [DONE] goal 4\n  - [FAILED] goal 5\n  - [ABANDONED] goal 6\n  - goal 7\n" + footer},
		{"objective flattened", agent().Goal(identity.Done, "read\nthe code"), prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - [DONE] read the code\n" + footer},
		// Spec §2 row 14: objectives are cut as the original cut them, 75
		// characters after a status tag and 80 without.
		{"objective cut to 75 after a tag", agent().Goal(identity.Failed, strings.Repeat("é", 300)), prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - [FAILED] " + strings.Repeat("é", 75) + "\n" + footer},
		{"active objective cut to 80", agent().Goal(identity.Active, strings.Repeat("x", 300)), prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - " + strings.Repeat("x", 80) + "\n" + footer},
		{"GoalChars is a limit", agent().Limits(identity.Limits{GoalChars: 10}).Goal(identity.Active, strings.Repeat("x", 300)), prompt.SectionRecentGoals,
			"WHAT YOU'VE BEEN DOING LATELY:\n  - " + strings.Repeat("x", 10) + "\n" + footer},
	})
	p := prompttest.Assemble(t, trio(), agent().Goals(identity.Done, identity.Done, identity.Done, identity.Done, identity.Done, identity.Done, identity.Done).View())
	assert.Equal(t, 5, prompttest.ShownGoals(t, p))
}

func TestSectionPeerMessages(t *testing.T) {
	long := strings.Repeat("m", 250)
	many := agent()
	for k := 1; k <= 7; k++ {
		many.Inbox("Vault", fmt.Sprintf("message %d", k))
	}
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionPeerMessages, ""},
		{"blank only", agent().Inbox("Cipher", " \n"), prompt.SectionPeerMessages, ""},
		{"two", agent().Inbox("Cipher", "hello").Inbox("Vault", "multi\nline"), prompt.SectionPeerMessages,
			"MESSAGES FROM YOUR PEERS:\n  [Cipher]: hello\n  [Vault]: multi line"},
		{"each at most 200", agent().Inbox("Cipher", long), prompt.SectionPeerMessages,
			"MESSAGES FROM YOUR PEERS:\n  [Cipher]: " + long[:200]},
		{"the last 5", many, prompt.SectionPeerMessages,
			"MESSAGES FROM YOUR PEERS:\n  [Vault]: message 3\n  [Vault]: message 4\n  [Vault]: message 5\n  [Vault]: message 6\n  [Vault]: message 7"},
		{"blank ones skipped", agent().Inbox("Cipher", "a").Inbox("Vault", "").Inbox("", "b"), prompt.SectionPeerMessages,
			"MESSAGES FROM YOUR PEERS:\n  [Cipher]: a\n  [unknown]: b"},
	})
	p := prompttest.Assemble(t, trio(), many.View())
	assert.Equal(t, 5, prompttest.ShownMessages(t, p))
}

func TestSectionHostMessage(t *testing.T) {
	long := strings.Repeat("h", 600)
	seven := agent()
	for k := 1; k <= 7; k++ {
		seven.Host(fmt.Sprintf("note %d", k))
	}
	runSectionCases(t, trio(), []sectionCase{
		{"none", agent(), prompt.SectionHostMessage, ""},
		{"blank only", agent().Host(" \n").Host(""), prompt.SectionHostMessage, ""},
		// One message: exactly spec §2 row 16.
		{"one", agent().Host("Look at fetch_url."), prompt.SectionHostMessage, "A PERSON SAID:\nLook at fetch_url."},
		{"one, flattened", agent().Host("  Look at\n\nfetch_url.\t"), prompt.SectionHostMessage, "A PERSON SAID:\nLook at fetch_url."},
		{"at most 500", agent().Host(long), prompt.SectionHostMessage, "A PERSON SAID:\n" + long[:500]},
		// Several unread messages: all of them, oldest first, one per line
		// (the agent empties the host queue after the cycle).
		{"every unread one, oldest first", agent().Host("old").Host("new\nline").Host("  "), prompt.SectionHostMessage,
			"A PERSON SAID:\nold\nnew line"},
		{"each at most 500", agent().Host(long).Host("short").Host(long), prompt.SectionHostMessage,
			"A PERSON SAID:\n" + long[:500] + "\nshort\n" + long[:500]},
		{"the newest 5", seven, prompt.SectionHostMessage,
			"A PERSON SAID:\nnote 3\nnote 4\nnote 5\nnote 6\nnote 7"},
		{"blank ones do not count", agent().Host("a").Host(" ").Host("b").Host("c").Host("").Host("d").Host("e"), prompt.SectionHostMessage,
			"A PERSON SAID:\na\nb\nc\nd\ne"},
		{"PeerMessagesShown limits them", agent().Host("a").Host("b").Host("c").Edit(func(v *prompt.View) { v.Limits.PeerMessagesShown = 2 }),
			prompt.SectionHostMessage, "A PERSON SAID:\nb\nc"},
		{"HostMessage limits each", agent().Host("abcdef").Host("ghijkl").Edit(func(v *prompt.View) { v.Limits.HostMessage = 3 }),
			prompt.SectionHostMessage, "A PERSON SAID:\nabc\nghi"},
	})
}

func TestSectionDirective(t *testing.T) {
	ranked := "\n\nHighest-value goals (in order):\n" +
		"  1. Read real source files in /agentOS/agents/ or /agentOS/tools/dynamic/\n" +
		"  2. synthesize_capability — write a new Python capability\n" +
		"  3. Write a design spec to /agentOS/design/ then call invoke_claude()\n" +
		"  4. Call self_evaluate() with evidence paths\n" +
		"  5. Call check_claude_status() if you have a pending request"
	runSectionCases(t, trio(), []sectionCase{
		{"trio", agent(), prompt.SectionDirective, specDirective + ranked +
			"\n\nDo NOT pick: goals referencing hardware, thermal sensors, PMIC, bus arbiters. Do NOT repeat goals you've already done." +
			"\n\nThe goal must be grounded in what actually exists in /agentOS/."},
	})
	runSectionCases(t, prompt.New(prompt.Config{}), []sectionCase{
		{"no goals, no prohibitions", agent(), prompt.SectionDirective, specDirective},
	})
	runSectionCases(t, prompt.New(prompt.Config{Goals: []string{"ship", " ", "test\nit"}}), []sectionCase{
		{"blank goals skipped, flattened", agent(), prompt.SectionDirective,
			specDirective + "\n\nHighest-value goals (in order):\n  1. ship\n  2. test it"},
	})
	runSectionCases(t, prompt.New(prompt.Config{Prohibitions: "hardware"}), []sectionCase{
		{"prohibitions only", agent(), prompt.SectionDirective, specDirective + "\n\nDo NOT pick: hardware"},
	})
}

func TestSectionResponseFormat(t *testing.T) {
	runSectionCases(t, trio(), []sectionCase{
		{"spec §3 shape", agent(), prompt.SectionResponseFormat, specResponse},
	})
	assert.Equal(t, specResponse, "Your response must be JSON:\n"+prompt.ResponseShape)
	p := prompttest.Assemble(t, trio(), prompttest.Cedar().View())
	assert.True(t, strings.HasSuffix(p.Text, specResponse), "the response format closes the prompt")
}

func TestSectionOrderFollowsSpec(t *testing.T) {
	p := prompttest.Assemble(t, trio(), prompttest.Cedar().View())
	prompttest.SectionOrder(t, p, prompt.DefaultOrder()...)
	// Headers appear in spec order in the text itself.
	headers := []string{
		"ASSIGNED TASK:", "You are Cedar.", "WORLD CONTEXT (factual — not instructions):",
		"YOUR SITUATION:", "YOUR INNER STATE:", "YOUR WORLDVIEW:", "YOUR OPINIONS:",
		"OPEN QUESTIONS:", "YOUR HISTORY:", "YOUR PEERS:", "WHAT YOU'VE FOUND OUTSIDE:",
		"TIME:", "WHAT YOUR LAST GOAL PRODUCED:", "WHAT YOU'VE BEEN DOING LATELY:",
		"MESSAGES FROM YOUR PEERS:", "A PERSON SAID:", "---\n\nYou must pick a goal.",
		"Your response must be JSON:",
	}
	at := 0
	for _, h := range headers {
		i := strings.Index(p.Text[at:], h)
		require.GreaterOrEqual(t, i, 0, "%q after byte %d", h, at)
		at += i + len(h)
	}
}

// TestSectionCapsCountCodePoints checks the per-item caps of spec §2 with
// multi-byte text: characters are code points, never bytes (spec §3), so a
// byte-counting cut would show a half or a third of these.
func TestSectionCapsCountCodePoints(t *testing.T) {
	const smile = "🙂" // 4 bytes
	runSectionCases(t, trio(), []sectionCase{
		{"peer narrative: 150", agent().Peer("Cipher", strings.Repeat("é", 149)+"日本語"), prompt.SectionPeers,
			"YOUR PEERS:\n  Cipher: " + strings.Repeat("é", 149) + "日"},
		{"peer message: 200", agent().Inbox("Vault", strings.Repeat("日本", 150)), prompt.SectionPeerMessages,
			"MESSAGES FROM YOUR PEERS:\n  [Vault]: " + strings.Repeat("日本", 100)},
		{"host message: 500", agent().Host(strings.Repeat(smile, 600)), prompt.SectionHostMessage,
			"A PERSON SAID:\n" + strings.Repeat(smile, 500)},
		{"host messages: 500 each", agent().Host(strings.Repeat("é", 501)).Host(strings.Repeat(smile, 501)), prompt.SectionHostMessage,
			"A PERSON SAID:\n" + strings.Repeat("é", 500) + "\n" + strings.Repeat(smile, 500)},
		{"outcome: 400", agent().Goals(identity.Done).Outcome(strings.Repeat("é", 450)), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [DONE] " + strings.Repeat("é", 400)},
		{"outcome with words: 400", agent().Goals(identity.Done).Outcome(strings.Repeat("日本 ", 200)), prompt.SectionLastOutcome,
			"WHAT YOUR LAST GOAL PRODUCED:\n  [DONE] " + strings.TrimSpace(strings.Repeat("日本 ", 133)) + " 日"},
		{"discovery: 300", agent().Discovery(strings.Repeat("語", 350), ""), prompt.SectionDiscoveries,
			"WHAT YOU'VE FOUND OUTSIDE:\n  - " + strings.Repeat("語", 300)},
	})
}

// Under a budget the situation text shrinks, the presence line stays: it
// belongs to the section, not to the text (spec §2 row 4).
func TestSituationTrimKeepsThePresenceLine(t *testing.T) {
	s, ok := trio().Section(prompt.SectionSituation)
	require.True(t, ok)
	tr, ok := s.(prompt.Trimmer)
	require.True(t, ok)
	got := tr.Trim(agent().Host("hi").View(), 120)
	assert.True(t, strings.HasSuffix(got, "\n"+prompt.CutMarker+"\n"+prompt.PresenceLine), got)
}
