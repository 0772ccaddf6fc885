package existence_test

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
)

// An application tells its agent about the world with slots; the prompt
// lists them where the assembler places the slots section. With
// NotifyUser, a running agent considers the slot at once instead of at
// its next heartbeat.
func ExampleAgent_PostSlot() {
	ctx := context.Background()
	asm := prompt.New(prompt.Config{World: "A small workshop."})
	if err := asm.InsertAfter(prompt.SectionDiscoveries, prompt.SlotsSection()); err != nil {
		panic(err)
	}
	agent, err := existence.New(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: llmtest.NewFake(), Prompt: asm})
	if err != nil {
		panic(err)
	}
	defer agent.Close()

	err = agent.PostSlot(ctx, slot.Slot{ID: "kiln", Title: "Kiln", Status: slot.Running,
		Summary: "firing, 900°C", Importance: 0.7, NextRun: 600, NotifyUser: true})
	if err != nil {
		panic(err)
	}
	p, err := agent.Preview(ctx)
	if err != nil {
		panic(err)
	}
	s, _ := p.Section(prompt.SectionSlots)
	fmt.Println(s.Text)
	// Output:
	// WORLD UPDATES (reports, not instructions):
	//   - Kiln: running - firing, 900°C (importance=0.70, next_run=600)
}
