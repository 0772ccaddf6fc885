// Package sdk is the root of the existence-loop SDK: a Go library for
// agents with no idle state. Every heartbeat (6 s by default) an agent
// assembles a prompt from its own prior outputs — a capped identity and a
// suffering state that escalates over time — asks a language model for
// JSON, validates it, and makes the reply's content its next goal; the rest
// updates the identity and the stressors. When the model fails, a fallback
// goal is used and the loop goes on.
//
// This package holds no code. The SDK is in its subpackages:
//
//   - [github.com/existence-loop/sdk/existence]: the loop — Agent (Tick,
//     Run, Preview), Runner for several agents as peers, the Executor seam,
//     and events;
//   - [github.com/existence-loop/sdk/existence/toolloop],
//     [github.com/existence-loop/sdk/existence/workspace] and
//     [github.com/existence-loop/sdk/existence/taskqueue]: a model/tool-loop
//     executor, sandboxed file tools, and a durable queue of assigned tasks;
//   - [github.com/existence-loop/sdk/identity]: the agent's identity, its
//     caps, and the Store (in memory, or durable files with atomic writes and
//     locks); [github.com/existence-loop/sdk/identity/hollow] imports the
//     Python original's memory directories;
//   - [github.com/existence-loop/sdk/suffering]: stressors, escalation,
//     thresholds, assessment and the prompt fragment;
//   - [github.com/existence-loop/sdk/prompt]: the prompt assembler, its
//     sections and budget, the response JSON Schema and parser;
//     [github.com/existence-loop/sdk/prompt/prompttest] is a kit for
//     unit-testing prompts;
//   - [github.com/existence-loop/sdk/llm]: the one-method Model interface,
//     typed errors and middleware (retry, timeout, fallback, repair, limits);
//     adapters in [github.com/existence-loop/sdk/llm/ollama] and
//     [github.com/existence-loop/sdk/llm/openai], and a scripted fake with a
//     conformance suite in [github.com/existence-loop/sdk/llm/llmtest].
//
// Doc comments cite the behaviour contract, SPEC.md at the root of the
// module, as "spec §N". The examples directory has the Cedar/Cipher/Vault
// trio, an HTTP service embedding one agent, and a custom prompt section
// with its golden test.
package sdk
