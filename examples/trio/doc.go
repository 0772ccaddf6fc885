// Command trio wires the SDK's public packages into the reference
// system's three agents, Cedar the scout, Cipher the analyst and Vault the
// builder (the roster of package existence/trio), and prints each goal as
// an agent chooses it:
//
//	go run ./examples/trio -llm-url standin: -cycles 3   // llm/llmtest's stand-in model, in process
//	go run ./examples/trio -model qwen3.5:9b -for 10m     // Ollama at http://localhost:11434
//
// Each agent is an existence.Agent with its own model adapter
// (llm/ollama, against Ollama or the stand-in), one shared store
// (store/filestore under -dir, else in memory) and the default executor,
// which ends each goal at once. The agents cycle back to back, a new
// existence prompt as soon as the previous goal has ended (spec §1), until
// each has run -cycles cycles or -for has passed.
//
// The full version, with peers, messages, the workspace tools, tasks and
// the scheduler, is `existence run` (cmd/existence).
package main
