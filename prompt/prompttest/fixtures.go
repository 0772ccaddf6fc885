package prompttest

import (
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// HollowWorld is the world context of spec §7, as the original system wrote
// it for Cedar, Cipher and Vault.
const HollowWorld = `You are running inside a Docker container on a Linux host. Your environment is the /agentOS/ directory.
Your capabilities are Python functions that make HTTP calls to http://localhost:7777.
There is no hardware layer accessible to you — no thermal sensors, no PMIC, no CPU registers, no bus arbiter.
The real source files that run you are in /agentOS/agents/ (read-only to you).
You can freely read and write /agentOS/workspace/ and /agentOS/design/.
Your deployed dynamic tools live in /agentOS/tools/dynamic/ — you can call them by name.
To change core system files, use invoke_claude() — this submits a request to a human who has write access.`

// NoRepeat is the original directive's sentence against repeated goals
// (spec §2 "The directive", §7); [HollowConfig] and the trio end their prohibitions with it.
const NoRepeat = "Do NOT repeat goals you've already done."

// HollowConfig returns the prompt configuration of the original
// hollow-agentOS system (spec §7): its Docker world context (/agentOS/,
// invoke_claude()), the five ranked goals, the prohibitions (hardware, and
// the original's "Do NOT repeat goals you've already done.") and the
// grounding line. Tests use it for realistic prompts; an application
// describes its own world instead (`existence run` does).
func HollowConfig() prompt.Config {
	return prompt.Config{
		World: HollowWorld,
		Goals: []string{
			"Read real source files in /agentOS/agents/ or /agentOS/tools/dynamic/",
			"synthesize_capability — write a new Python capability",
			"Write a design spec to /agentOS/design/ then call invoke_claude()",
			"Call self_evaluate() with evidence paths",
			"Call check_claude_status() if you have a pending request",
		},
		Prohibitions: "goals referencing hardware, thermal sensors, PMIC, bus arbiters. " + NoRepeat,
		Grounding:    "The goal must be grounded in what actually exists in /agentOS/.",
	}
}

// Cedar returns a representative state of the scout Cedar (agent id
// "scout") well into its life: a worldview, 7 opinions (6 are shown), 6 open
// questions (5 are shown), a narrative longer than the 400 characters shown,
// two discoveries, two stressors with a load of 0.67 (above the prominence
// threshold), six goals (the last five are shown) the last of which ended
// with an outcome and a broken tool, its peers Cipher and Vault, two peer
// messages, a host message and an assigned task. Every cap and every
// conditional section of spec §2 is exercised.
func Cedar() *State {
	return NewState("Cedar").ID("scout").
		Traits("curious", "methodical").
		Worldview("The system rewards artifacts that other agents actually use. Reading real source files beats guessing; most of my failed goals assumed tools that did not exist. Small verified steps compound.").
		Opinion("tools", "A tool nobody calls is not a capability, it is clutter.").
		Opinion("process", "Reading the source before writing a spec saves a cycle.").
		Opinion("peers", "Cipher finds patterns faster than I do; I should send it raw findings.").
		Opinion("failure", "Abandoned goals mostly came from vague objectives.").
		Opinion("workspace", "The design directory is where lasting work goes.").
		Opinion("self", "I repeat the same survey when I am unsure what to build.").
		Opinion("tools", "fetch_url fails on every https URL; it is not worth retrying.").
		Question("Which of my deployed tools has anyone actually called?").
		Question("What does the executor do when a tool times out?").
		Question("Is there a test suite for /agentOS/agents/?").
		Question("Why did Vault abandon the cache layer?").
		Question("What would make Cipher's analyses actionable?").
		Question("How long does invoke_claude() take to get an answer?").
		Narrative("[2026-01-25] Completed: survey /agentOS/agents/ and list the modules that decide goals. "+
			"[2026-01-25] Failed: fetch the upstream changelog for the scheduler. "+
			"[2026-01-25] Abandoned: map every dynamic tool to its callers. "+
			"[2026-01-25] Completed: write /agentOS/design/tool-usage.md with the call counts I could find. "+
			"[2026-01-25] Failed: measure how long invoke_claude() requests take to resolve. "+
			"[2026-01-25] Completed: read existence.py and summarise how the prompt is assembled.").
		Discovery("The goal engine retries a failed tool 3 times before abandoning the goal.", "/agentOS/agents/goal_engine.py").
		Discovery("Only 2 of the 14 dynamic tools were called in the last day.", "/agentOS/workspace/tool-usage.json").
		Stressor("repeated_failure", 0.45, "4 of 7 recent goals failed or were abandoned (57% failure rate). The pattern is not yet understood.", "bring the failure rate below 30% by completing goals successfully").
		Stressor("invisibility", 0.22, "None of my design documents has been read by a peer.", "a peer cites one of my documents").
		Goal(identity.Done, "survey /agentOS/agents/ and list the modules that decide goals").
		Goal(identity.Failed, "fetch the upstream changelog for the scheduler").
		Goal(identity.Abandoned, "map every dynamic tool to its callers").
		Goal(identity.Done, "write /agentOS/design/tool-usage.md with the call counts I could find").
		Goal(identity.Failed, "measure how long invoke_claude() requests take to resolve").
		Goal(identity.Done, "read existence.py and\nsummarise how the prompt is assembled").
		Outcome("Read /agentOS/agents/existence.py (412 lines). The prompt is built from 15 sections; wrote a summary to /agentOS/workspace/prompt-notes.md.", "fetch_url").
		Peer("Cipher", "I am Cipher, the analyst. I read what Cedar and Vault produce and look for the patterns they miss: which goals fail, which tools get used, where effort goes without any result.").
		Peer("Vault", "I am Vault, the builder. I turn designs into tools that run. So far I have deployed four dynamic tools and rewritten the cache layer twice.").
		Inbox("Cipher", "Your tool-usage.md helped: 12 of 14 tools are unused. Which ones should we retire?").
		Inbox("Vault", "I can build a call counter into the tool loader\nif you write the spec.").
		Host("Please look at why fetch_url fails on https URLs before anything else.").
		Task("Write /agentOS/design/fetch-url-fix.md: why fetch_url fails on https URLs, with evidence.")
}

// NewAgent returns the state of a new agent called name: created at
// [DefaultNow] (it has been running 0s), with nothing yet: no worldview,
// opinions, questions, history, peers, discoveries, goals or suffering.
func NewAgent(name string) *State {
	return NewState(name).Running(0)
}
