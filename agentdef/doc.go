// Package agentdef defines agents as data: a definitions directory holds
// one folder per agent, with an agent.yaml, an optional system_prompt.md
// (its role text) and an optional BOOTSTRAP.md (its commissioning), as in
// agent_ecology (agents/<name>/agent.yaml and system_prompt.md) and GSV
// (BOOTSTRAP.md). Nobody needs to recompile to add an agent, change its
// model or its role.
//
// [Load] reads a directory strictly and returns a [Set] of
// [Definition]s, the top-level keys it ignored (agent_ecology's
// starting_scrip) and, when anything is wrong, every problem as an
// [Error] naming the file and line. [Definition.Config] turns a
// definition into an existence.Config over the parts the agents share
// (model, store, executor); [Watch] reloads a directory when it changes.
// `existence run -agents DIR` runs a directory, `existence init DIR`
// writes the trio as one to start from ([Write]).
//
// The file format, every key and how each maps to agent_ecology and GSV:
// docs/agents.md.
package agentdef
