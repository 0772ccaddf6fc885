package existence_test

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// Embedding one agent: a model, an agent, a loop. A real application passes
// an llm/ollama model and an filestore.Store, and calls Run instead of
// Tick.
func Example() {
	ctx := context.Background()
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action": "goal",
		"content": "read the workspace and write down what is there",
		"reasoning": "I do not know this place yet",
		"worldview_update": "Files are the only memory that outlives a cycle."}`})

	agent, err := existence.New(ctx, existence.Config{
		ID:    "scout",
		Name:  "Cedar",
		Model: model, // e.g. ollama.New(ollama.Config{Model: "qwen3.5:9b"})
		Observer: func(e event.Event) {
			if e.Kind == event.GoalChosen || e.Kind == event.Worldview {
				fmt.Println(e.Kind, "—", e.Text)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer agent.Close()

	if err := agent.Tick(ctx); err != nil { // agent.Run(ctx) ticks every 6 s
		panic(err)
	}
	// Output:
	// worldview_changed — Files are the only memory that outlives a cycle.
	// goal_chosen — read the workspace and write down what is there
}

// When the model cannot be reached, the cycle substitutes the spec §6
// fallback goal and the loop goes on.
func Example_fallback() {
	ctx := context.Background()
	agent, err := existence.New(ctx, existence.Config{
		ID:    "builder",
		Name:  "Vault",
		Model: llmtest.NewFake(), // no scripted reply: every call fails
		Observer: func(e event.Event) {
			if e.Kind == event.GoalChosen {
				fmt.Println(e.Text, "—", e.Reasoning)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer agent.Close()
	_ = agent.Tick(ctx)
	// Output:
	// explore the workspace and build something useful — LLM unavailable — defaulting to productive work
}
