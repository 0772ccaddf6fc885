// Package toolloop pursues goals through a model/tool loop: the
// [existence.Executor] that makes agents act.
//
// An [Executor] calls the model with the goal, the definitions of its
// tools ([Tool]) and the conversation so far; it dispatches each tool call the model
// asks for, appends the results as tool messages, and repeats until the model
// answers with no tool calls (a gateway-style model/tool loop). The goal
// then ends:
//
//   - DONE when the final answer passes the artifact check
//     ([Config.Check]; by default [RequireEvidence]: the answer comes after
//     at least one successful tool call, so that a goal cannot end DONE
//     on words alone, since only observable behaviour counts, spec §4);
//   - ABANDONED by a stall rule, after the original's daemon.py: the same
//     tool call (same name and arguments) 4 times in a row, 4 consecutive
//     tool failures, or the step budget of 20 model turns running out;
//     [existence.Outcome].Stall names the rule ([StallSameCall], [StallNoProgress], [StallStepBudget]) and an
//     [event.Stall] reports it. Also ABANDONED when ctx is
//     cancelled (a host message interrupting the goal);
//   - FAILED on a model error, or when the artifact check refuses the
//     answer: "no action taken" without any tool call, "no tool call
//     succeeded" when every call failed.
//
// A tool that fails 3 times within a goal is listed in
// [existence.Outcome.BrokenTools], which the next prompts show as broken.
//
// Tools are a small interface: a name, a description, the JSON Schema of the
// argument object, and Call. [NewTool] builds one from a Go function, with
// the schema generated from the argument struct (github.com/invopop/jsonschema).
// Arguments are validated against the schema before every call
// (github.com/santhosh-tekuri/jsonschema/v5); a validation error goes back
// to the model as the tool result, for example
//
//	Error: invalid arguments: /path: expected string, but got number
//
// and counts as a tool failure. Each call runs under a per-tool timeout
// (default 60 s); a call that exceeds it returns [TimedOut] ("Error: tool
// timed out") to the model and the loop goes on.
//
// The ctx of every Tool.Call carries the running goal's
// [existence.Assignment]: [Caller] returns it, so a tool such as
// send_message knows the sending agent. Through the same ctx tools report
// what they produced with [ReportArtifact] (the paths end up in
// [existence.Outcome.Artifacts], which feed the futility assessment,
// spec §4) and what they found outside the agent with [ReportDiscovery]
// (the discoveries end up in [existence.Outcome.Discoveries], which feed
// the "WHAT YOU'VE FOUND OUTSIDE:" section, spec §2 row 11). Only
// successful calls count. Code that calls a [Tool] directly sets the caller
// with [WithCaller] and sees the reports with [CollectArtifacts] and
// [CollectDiscoveries].
//
// With a long-term memory ([Config].Memory, or the agent's,
// existence.Assignment.Memory), the loop learns as the original's
// autonomy loop did: the goal's first turn carries the 3 memories
// recalled for its objective under "Relevant past experience (use this
// to avoid repeating mistakes and build on prior work):" (a block that
// compaction keeps with the goal); each successful tool call is stored
// as "Goal '{objective}' step {tool}: {result cut to 200 characters}"
// ([OutcomeMemory]); a goal that ends DONE is stored as "Goal completed:
// …" and one that fails or stalls as "FAILED: …"; and the model gets the
// remember and recall tools ([RememberTool], [RecallTool]). Interrupted
// goals and model errors are not stored.
//
// The sandboxed workspace tools (read_file, write_file, ...) are in package
// [github.com/existence-loop/sdk/existence/workspace]; the tools of MCP
// servers come from existence/toolloop/mcptools, and ask_human and
// check_request from existence/requests.
package toolloop
