package main

import (
	"context"
	"fmt"
	"os"
)

// The trio against llm/llmtest's scripted stand-in model, two cycles
// each: the stand-in's goals depend only on the prompt, so the goals are
// the same on every run (the agents print them concurrently, in any
// order).
func Example() {
	err := run(context.Background(), options{llmURL: "standin:", model: "qwen3.5:9b", cycles: 2}, os.Stdout)
	if err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// Cedar  🎯 draft a glossary of the terms used in the files
	// Cedar  🎯 list the folders and describe each one in a short guide
	// Cipher 🎯 collect ideas for tools we could build
	// Cipher 🎯 plan my next three steps and record them
	// Vault  🎯 plan my next three steps and record them
	// Vault  🎯 summarise the newest files for a reader arriving later
}
