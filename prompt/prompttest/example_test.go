package prompttest_test

import (
	"fmt"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// printTB stands in for the *testing.T that a test passes to the helpers: it
// prints what they report.
type printTB struct{ testing.TB }

func (printTB) Helper()                        {}
func (printTB) Errorf(format string, a ...any) { fmt.Printf("error: "+format+"\n", a...) }
func (printTB) Fatalf(format string, a ...any) { fmt.Printf("fatal: "+format+"\n", a...) }
func (printTB) Logf(format string, a ...any)   { fmt.Printf("log: "+format+"\n", a...) }

// A situation built in a few lines, assembled, and checked at the level of
// sections and caps.
func Example() {
	var t printTB // in a test: the *testing.T
	v := prompttest.NewState("Cedar").
		Opinions(20).
		Stressor("repeated_failure", 0.6, "4 of 6 goals failed", "complete 3 goals").
		Goals(identity.Done, identity.Failed, identity.Failed, identity.Abandoned).
		Peer("Cipher", "I analyse what the others find.").
		Inbox("Cipher", "Which tools are unused?").
		View()
	p := prompttest.Assemble(t, prompt.New(prompttest.HollowConfig()), v)

	fmt.Println(prompttest.ShownOpinions(t, p), "of 20 opinions shown")
	fmt.Println(prompttest.SectionOrder(t, p, prompt.SectionInnerState, prompt.SectionRecentGoals, prompt.SectionPeerMessages))
	fmt.Println(prompttest.SectionWithHeader(t, p, prompt.SectionPeerMessages))
	fmt.Println(prompttest.SectionBody(t, p, prompt.SectionInnerState))
	// In a test, pin the whole prompt too:
	//	prompttest.Golden(t, "struggling", p.Text)

	// Output:
	// 6 of 20 opinions shown
	// true
	// MESSAGES FROM YOUR PEERS:
	//   [Cipher]: Which tools are unused?
	// Current suffering (0.60/1.0):
	//   [######....] repeated_failure 0.60  4 of 6 goals failed
	//   Will ease when: complete 3 goals
}

// Checking candidate model outputs against the response schema.
func ExampleParseFails() {
	var t printTB // in a test: the *testing.T
	pe := prompttest.ParseFails(t, `{"content": "read the code", "reasoning": "it is there", "new_opinions": [{"domain": "x"}]}`, prompt.ErrSchema)
	fmt.Println(pe.Pointer)

	r := prompttest.MustParse(t, "<think>...</think>\n```json\n{\"action\": \"rest\", \"content\": \"\", \"reasoning\": \"map the tools\"}\n```")
	fmt.Printf("%s: %s\n", r.Action, r.Content)
	// Output:
	// /new_opinions/0/opinion
	// goal: map the tools
}
