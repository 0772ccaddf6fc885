package existence_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
)

// Focus is application data for a custom prompt section.
var Focus = prompt.NewKey[string]("focus")

// Embedding one agent with prompt.Solo: the solo prompt has no peers section,
// and Config.Values feeds a custom section the application inserted.
func Example_solo() {
	ctx := context.Background()
	model := llmtest.NewFake() // e.g. ollama.New(ollama.Config{Model: "qwen3.5:9b"})

	asm := prompt.Solo(prompt.Config{World: "Your world is one workspace directory: ./work/."})
	if err := asm.InsertAfter(prompt.SectionSituation, prompt.SectionFunc{
		ID:   "focus",
		When: func(v *prompt.View) bool { _, ok := Focus.Get(v); return ok },
		Text: func(v *prompt.View) string { f, _ := Focus.Get(v); return "TODAY'S FOCUS:\n  " + f },
	}); err != nil {
		panic(err)
	}
	values := &prompt.Values{} // safe to Set while the agent runs
	Focus.Set(values, "the open bugs listed in notes.md")

	agent, err := existence.New(ctx, existence.Config{
		ID: "solo", Name: "Cedar",
		Model:  model,
		Prompt: asm,
		Values: values,
	})
	if err != nil {
		panic(err)
	}
	defer agent.Close()

	p, err := agent.Preview(ctx) // the prompt of the next cycle; agent.Run(ctx) lives it
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(p.Names(), " "))
	focus, _ := p.Section("focus")
	fmt.Println(focus.Text)
	// Output:
	// identity world situation focus inner_state worldview opinions questions history time directive response_format
	// TODAY'S FOCUS:
	//   the open bugs listed in notes.md
}
