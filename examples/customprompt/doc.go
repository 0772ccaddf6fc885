// Package customprompt is a worked example of a custom prompt section: a
// WORKING MEMORY section backed by a small JSON document that the agent
// keeps about its current goal (a working memory in the style of agent-ecology loops), capped at
// max_size_bytes so that it cannot bloat the prompt.
//
// The application attaches a [WorkingMemory] to the agent's [prompt.View]
// through the typed key [Key]; the SDK never learns its type. [Install]
// inserts the section after the worldview:
//
//	asm := prompt.New(cfg)
//	if err := customprompt.Install(asm, customprompt.DefaultMaxSizeBytes); err != nil {
//		return err
//	}
//	customprompt.Key.Set(values, wm) // before each cycle
//
// The package's tests show the whole prompt-testing workflow: exact section
// text, truncation, placement, budget, and a golden file of the full prompt
// (go test ./examples/customprompt, then -update to accept a change).
package customprompt
