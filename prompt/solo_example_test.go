package prompt_test

import (
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// A single agent's prompt: no YOUR PEERS section, and WHAT YOU'VE FOUND
// OUTSIDE only once there is a discovery to show.
func ExampleSolo() {
	asm := prompt.Solo(prompt.Config{World: "You run in a sandbox. Your workspace is /work."})

	now := time.Date(2026, 1, 25, 12, 0, 0, 0, time.UTC)
	id := identity.New("solo", "Cedar", now)
	p, err := asm.Assemble(&prompt.View{Now: now, Started: now, Identity: &id})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(p.Names(), " "))
	situation, _ := p.Section(prompt.SectionSituation)
	fmt.Println(situation.Text)

	id.Discoveries = append(id.Discoveries, identity.Discovery{Text: "notes.md lists three open bugs", Source: "/work/notes.md"})
	p, err = asm.Assemble(&prompt.View{Now: now, Started: now, Identity: &id})
	if err != nil {
		log.Fatal(err)
	}
	found, _ := p.Section(prompt.SectionDiscoveries)
	fmt.Println(found.Text)
	// Output:
	// identity world situation inner_state worldview opinions questions history time directive response_format
	// YOUR SITUATION:
	// You are a mind with persistent memory, and a history of your own: what you chose, what you found, what worked and what failed. Nothing here is assigned to you unless a task says so. What you do with your time is your own to decide.
	// WHAT YOU'VE FOUND OUTSIDE:
	//   - notes.md lists three open bugs (/work/notes.md)
}
