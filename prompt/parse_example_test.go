package prompt_test

import (
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/prompt"
)

// A qwen3-style reply: reasoning in a <think> block, then the JSON object
// with a non-"goal" action. The preamble is skipped and the action
// normalised.
func ExampleParseResponse() {
	raw := `<think>
Vault again. Three reads in a row — build something.
</think>

{"action": "act",
 "content": "Synthesize a diff_files capability for two workspace files",
 "reasoning": "Three reads and nothing built — the gap is real.",
 "worldview_update": null,
 "new_opinions": [{"opinion": "A capability without a test is a rumour.", "domain": "engineering"}]}`

	r, err := prompt.ParseResponse(raw)
	if err != nil {
		fmt.Println("fallback:", err)
		return
	}
	fmt.Println(r.Action)
	fmt.Println(r.Content)
	fmt.Println(r.WorldviewUpdate == nil, len(r.NewOpinions))
	// Output:
	// goal
	// Synthesize a diff_files capability for two workspace files
	// true 1
}

// An invalid reply: the error names the bad field with a JSON Pointer, and
// classifies with errors.Is.
func ExampleParseResponse_invalid() {
	raw := `{"action": "goal",
 "content": "Audit my DONE tags against /agentOS/workspace/goal_log.jsonl",
 "reasoning": "I claimed DONE without evidence.",
 "new_opinions": [{"opinion": "A status tag without an evidence path is a guess."}]}`

	_, err := prompt.ParseResponse(raw)
	var pe *prompt.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Pointer)
		fmt.Println(errors.Is(err, prompt.ErrSchema))
	}
	fmt.Println(err)
	// Output:
	// /new_opinions/0/domain
	// true
	// prompt: response invalid at /new_opinions/0/domain: missing property "domain"
}

// ValidateResponse gives the error a repair-and-retry step quotes back to
// the model.
func ExampleValidateResponse() {
	fmt.Println(prompt.ValidateResponse(`{"thought": "I should look at /agentOS/design/ first."}`))
	fmt.Println(prompt.ValidateResponse(`{"action": "goal", "content": "", "reasoning": " "}`))
	// Output:
	// prompt: response invalid: missing properties "content", "reasoning"
	// prompt: response has no goal at /content: content and reasoning are both empty
}
