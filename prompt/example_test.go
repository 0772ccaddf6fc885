package prompt_test

import (
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// A tiny state assembled with the default sections.
func ExampleAssembler_Assemble() {
	asm := prompt.New(prompt.Config{
		World:        "You run in a sandbox. Your workspace is /work.",
		Goals:        []string{"Read what is in /work", "Write a tool someone will use"},
		Prohibitions: "goals about hardware",
	})

	now := time.Date(2026, 1, 25, 12, 0, 0, 0, time.UTC)
	started := now.Add(-3*time.Minute - 12*time.Second) // when the loop started
	id := identity.New("scout", "Cedar", started)
	id.AddOpinion(identity.Opinion{Text: "Small verified steps compound.", Domain: "process"}, identity.Limits{})

	p, err := asm.Assemble(&prompt.View{Now: now, Started: started, Identity: &id})
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{prompt.SectionIdentity, prompt.SectionOpinions, prompt.SectionTime, prompt.SectionDirective} {
		s, _ := p.Section(name)
		fmt.Printf("%s\n\n", s.Text)
	}
	fmt.Println(len(p.Sections), "sections present of", len(asm.Names()))
	// Output:
	// You are Cedar.
	//
	// YOUR OPINIONS:
	//   - [process] Small verified steps compound.
	//
	// TIME:
	//   Running for: 3m 12s
	//   Last goal completed: unknown
	//
	// ---
	//
	// You must pick a goal. That is the only option.
	//
	// Do not pick something safe or easy. Ask yourself: what is the single most valuable
	// thing I could build or change right now that would make this system genuinely better?
	//
	// Highest-value goals (in order):
	//   1. Read what is in /work
	//   2. Write a tool someone will use
	//
	// Do NOT pick: goals about hardware
	//
	// 13 sections present of 18
}

// WorkingMemory is application data that the SDK knows nothing about.
type WorkingMemory struct {
	Goal  string
	Steps []string
}

// Memory is the typed key under which the application attaches it.
var Memory = prompt.NewKey[WorkingMemory]("working_memory")

// A custom section that reads application data through a typed key, inserted
// after the worldview.
func ExampleSectionFunc() {
	memory := prompt.SectionFunc{
		ID:   "working_memory",
		When: func(v *prompt.View) bool { _, ok := Memory.Get(v); return ok },
		Text: func(v *prompt.View) string {
			wm, _ := Memory.Get(v)
			return "WORKING MEMORY:\n  goal: " + wm.Goal + "\n  next: " + strings.Join(wm.Steps, ", ")
		},
		Priority: 15, // under a budget, shrinks after discoveries, before history
	}

	asm := prompt.New(prompt.Config{World: "A sandbox."})
	if err := asm.InsertAfter(prompt.SectionWorldview, memory); err != nil {
		log.Fatal(err)
	}

	var values prompt.Values
	Memory.Set(&values, WorkingMemory{Goal: "price oracle", Steps: []string{"core logic", "tests"}})
	id := identity.New("builder", "Vault", time.Time{})
	p, err := asm.Assemble(&prompt.View{Identity: &id, Values: &values})
	if err != nil {
		log.Fatal(err)
	}
	start := strings.Index(p.Text, "YOUR WORLDVIEW:")
	end := strings.Index(p.Text, "YOUR OPINIONS:")
	fmt.Print(p.Text[start:end])
	fmt.Println(asm.Names()[5:8])

	// A name the assembler does not have is an error, not a no-op.
	fmt.Println(asm.Remove("working_memroy"))
	// Output:
	// YOUR WORLDVIEW:
	// (not yet formed)
	//
	// WORKING MEMORY:
	//   goal: price oracle
	//   next: core logic, tests
	//
	// [worldview working_memory opinions]
	// prompt: unknown section "working_memroy" (the sections are: task, identity, world, situation, inner_state, worldview, working_memory, opinions, questions, history, peers, discoveries, time, last_outcome, recent_goals, peer_messages, host_message, directive, response_format)
}

// A budget shrinks the trimmable sections, lowest priority first, marks each
// cut and reports it.
func ExampleBudget() {
	now := time.Date(2026, 1, 25, 12, 0, 0, 0, time.UTC)
	id := identity.New("scout", "Cedar", now)
	for k := 1; k <= 5; k++ {
		id.AddDiscovery(identity.Discovery{Text: fmt.Sprintf("finding number %d, described at some length", k)}, identity.Limits{})
	}
	v := &prompt.View{Now: now, Identity: &id}

	asm := prompt.New(prompt.Config{World: "A sandbox."})
	full, _ := asm.Assemble(v)

	asm.SetBudget(prompt.Budget{MaxChars: full.Chars - 100})
	p, err := asm.Assemble(v)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range p.Cuts {
		fmt.Println("cut:", c)
	}
	s, _ := p.Section(prompt.SectionDiscoveries)
	fmt.Println(s.Text)
	fmt.Println(p.Chars <= full.Chars-100)

	// A budget that cannot be met is an error saying by how much.
	asm.SetBudget(prompt.Budget{MaxTokens: 100})
	_, err = asm.Assemble(v)
	fmt.Println(err != nil && strings.HasPrefix(err.Error(), "prompt: over budget by "))
	// Output:
	// cut: discoveries: 261 → 155 characters
	// WHAT YOU'VE FOUND OUTSIDE:
	//   [… cut to fit the prompt budget]
	//   - finding number 4, described at some length
	//   - finding number 5, described at some length
	// true
	// true
}
