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
 "new_open_questions": "How many of my DONE goals left an artifact?"}`

	_, err := prompt.ParseResponse(raw)
	var pe *prompt.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Pointer)
		fmt.Println(errors.Is(err, prompt.ErrSchema))
	}
	fmt.Println(err)
	// Output:
	// /new_open_questions
	// true
	// prompt: response invalid at /new_open_questions: expected array, but got string
}

// An incomplete reply that the original system, which read the response
// with dict.get, accepted: no reasoning, a null list, an opinion given as a
// bare string and a stressor without a description. The schema sent to the
// model still asks for all of it.
func ExampleParseResponse_lenient() {
	raw := `{"action": "goal",
 "content": "Audit my DONE tags against /agentOS/workspace/goal_log.jsonl",
 "new_open_questions": null,
 "new_opinions": ["A status tag without an evidence path is a guess."],
 "suffering_assessment": {"new_stressors": [{"type": "purposelessness", "condition": "an audit file exists"}]}}`

	r, err := prompt.ParseResponse(raw)
	if err != nil {
		fmt.Println("fallback:", err)
		return
	}
	fmt.Printf("reasoning %q, %d questions\n", r.Reasoning, len(r.NewOpenQuestions))
	fmt.Printf("%+v\n", r.NewOpinions)
	fmt.Printf("%+v\n", r.SufferingAssessment.NewStressors)
	// Output:
	// reasoning "", 0 questions
	// [{Opinion:A status tag without an evidence path is a guess. Domain:}]
	// [{Type:purposelessness Description: Condition:an audit file exists}]
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
