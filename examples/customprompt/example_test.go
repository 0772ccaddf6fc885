package customprompt_test

import (
	"fmt"
	"log"
	"time"

	"github.com/existence-loop/sdk/examples/customprompt"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// Install the WORKING MEMORY section, attach a document, and look at what the
// agent will read after its worldview.
func ExampleInstall() {
	asm := prompt.New(prompt.Config{World: "A market of artifacts."})
	if err := customprompt.Install(asm, 160); err != nil { // a small cap, to show the cut
		log.Fatal(err)
	}

	wm, err := customprompt.Parse([]byte(`{
		"current_goal": "Build price oracle",
		"progress": {"stage": "Implementation", "next_steps": ["core logic", "tests"]},
		"lessons": ["escrow needs ownership transfer first"]
	}`))
	if err != nil {
		log.Fatal(err)
	}
	var values prompt.Values
	customprompt.Key.Set(&values, wm)

	id := identity.New("builder", "Vault", time.Time{})
	p, err := asm.Assemble(&prompt.View{Identity: &id, Values: &values})
	if err != nil {
		log.Fatal(err)
	}
	s, _ := p.Section(customprompt.SectionName)
	fmt.Println(s.Text)
	fmt.Println(asm.Names()[4:7])
	// Output:
	// WORKING MEMORY:
	// {
	//   "current_goal": "Build price oracle",
	//   "progress": {
	//     "stage": "Implementation",
	//     "next_steps": [
	//       "core logic",
	//       "tests"
	//     ]
	//   },
	// [… working memory truncated to max_size_bytes]
	// [inner_state worldview working_memory]
}
