package llmtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// A scripted fake answers in order and records every request.
func ExampleFake() {
	fake := llmtest.NewFake(
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503}},
		llmtest.Reply{Text: `{"action":"goal","content":"explore"}`, PromptTokens: 812, OutputTokens: 14},
		llmtest.Reply{Text: `{"action":"goal","content":"build`, DoneReason: "length"},
	)
	ctx := context.Background()
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Choose a goal."}}}

	_, err := fake.Generate(ctx, req)
	fmt.Println("1:", err)

	resp, err := fake.Generate(ctx, req)
	fmt.Println("2:", resp.Text, resp.OutputTokens, err)

	_, err = fake.Generate(ctx, req)
	fmt.Println("3: truncated:", errors.Is(err, llm.ErrTruncated))

	_, err = fake.Generate(ctx, req)
	fmt.Println("4: exhausted:", errors.Is(err, llmtest.ErrExhausted))

	fmt.Println("calls:", fake.Calls(), "first prompt:", fake.Requests()[0].Messages[0].Content)
	// Output:
	// 1: ollama: HTTP 503: Service Unavailable
	// 2: {"action":"goal","content":"explore"} 14 <nil>
	// 3: truncated: true
	// 4: exhausted: true
	// calls: 4 first prompt: Choose a goal.
}
