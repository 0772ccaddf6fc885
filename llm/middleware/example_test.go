package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// checkGoal is a small validator in the style of the prompt package's
// parser: its errors name the JSON Pointer of the bad field.
func checkGoal(text string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return fmt.Errorf("jsonschema: '' does not validate: not a JSON object: %v", err)
	}
	if _, ok := v["content"].(string); !ok {
		return errors.New("jsonschema: '/content' does not validate: expected string")
	}
	return nil
}

var goalSchema = json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)

// A typical stack: every attempt is observed, limited to 180 s, retried with
// backoff, and a reply that fails validation gets one repair. The fake model
// answers 503 once, then a reply without the required field, then a valid
// one.
func Example() {
	fake := llmtest.NewFake(
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503, Message: "server busy"}},
		llmtest.Reply{Text: `{"thought": "I could map the workspace"}`, PromptTokens: 812, OutputTokens: 14},
		llmtest.Reply{Text: `{"content": "map the workspace"}`, PromptTokens: 840, OutputTokens: 9},
	)
	report := func(a middleware.Attempt) {
		fmt.Printf("attempt: model=%s outcome=%s tokens=%d+%d\n", a.Model, a.Outcome, a.PromptTokens, a.OutputTokens)
	}
	policy := middleware.RetryPolicy{
		// Print the wait instead of sleeping, and fix the jitter.
		Sleep: func(_ context.Context, d time.Duration) error { fmt.Println("waiting", d); return nil },
		Rand:  func() float64 { return 0.5 },
	}

	var m llm.Model = middleware.Instrument(fake, "qwen3.5:9b", report)
	m = middleware.WithTimeout(m, middleware.DefaultTimeout)
	m = middleware.WithRetry(m, policy)
	m = middleware.WithRepair(m, checkGoal)

	resp, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Choose a goal."}},
		Format:   goalSchema,
	})
	if err != nil {
		fmt.Println("error:", middleware.Classify(err), err)
		return
	}
	fmt.Println(resp.Text)
	fmt.Println("tokens:", resp.PromptTokens, resp.OutputTokens)
	// Output:
	// attempt: model=qwen3.5:9b outcome=http_503 tokens=0+0
	// waiting 10s
	// attempt: model=qwen3.5:9b outcome=ok tokens=812+14
	// attempt: model=qwen3.5:9b outcome=ok tokens=840+9
	// {"content": "map the workspace"}
	// tokens: 1652 23
}

func ExampleFallback() {
	hosted := llmtest.NewFake(llmtest.Reply{Err: llm.StatusError{Provider: "openai", StatusCode: 429, Message: "rate limit"}})
	local := llmtest.NewFake(llmtest.Reply{Text: "answer from the local model"})

	resp, err := middleware.Fallback(hosted, local).Generate(context.Background(), &llm.Request{})
	fmt.Println(resp.Text, err)
	// Output:
	// answer from the local model <nil>
}

func ExampleClassify() {
	for _, err := range []error{
		nil,
		llm.StatusError{Provider: "ollama", StatusCode: 503},
		&llm.ModelNotFoundError{Provider: "ollama", Model: "qwen3.5:9b"},
		fmt.Errorf("cycle: %w", llm.ErrTimeout),
		context.Canceled,
		errors.New("something else"),
	} {
		fmt.Printf("%-15s retryable=%v\n", middleware.Classify(err), middleware.Retryable(err))
	}
	// Output:
	// ok              retryable=false
	// http_503        retryable=true
	// model_not_found retryable=false
	// timeout         retryable=true
	// canceled        retryable=false
	// error           retryable=false
}

func ExampleWithRepair() {
	fake := llmtest.NewFake(
		llmtest.Reply{Text: `{"content": 42}`},
		llmtest.Reply{Text: `{"content": "write a design spec"}`},
	)
	m := middleware.WithRepair(fake, checkGoal)
	resp, _ := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Choose a goal."}},
		Format:   goalSchema,
	})
	fmt.Println(resp.Text)
	followUp := fake.Requests()[1].Messages
	fmt.Println(followUp[len(followUp)-1].Content)
	// Output:
	// {"content": "write a design spec"}
	// Your previous reply is not valid: jsonschema: '/content' does not validate: expected string
	//
	// Reply again with the corrected JSON object only: no prose, no code fences, no explanation.
}

// The same stack built in its one order by Stack: the observer gets each
// attempt with its context, and the context hook marks every call as a
// priority one, so that retry waits only WaitPriority after the 503.
func ExampleStack() {
	fake := llmtest.NewFake(
		llmtest.Reply{Err: llm.StatusError{Provider: "ollama", StatusCode: 503, Message: "server busy"}},
		llmtest.Reply{Text: `{"content": "map the workspace"}`, PromptTokens: 840, OutputTokens: 9},
	)
	m := middleware.Stack(fake, middleware.StackConfig{
		Context: middleware.WithPriority,
		Repair: func(text string) (any, error) {
			return nil, checkGoal(text)
		},
		Retry: middleware.RetryPolicy{
			Sleep: func(_ context.Context, d time.Duration) error { fmt.Println("waiting", d); return nil },
			Rand:  func() float64 { return 0.5 },
		},
		Observe: func(ctx context.Context, a middleware.Attempt) {
			fmt.Printf("attempt: outcome=%s priority=%v tokens=%d+%d\n", a.Outcome, middleware.IsPriority(ctx), a.PromptTokens, a.OutputTokens)
		},
	})
	resp, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Choose a goal."}},
		Format:   goalSchema,
	})
	if err != nil {
		fmt.Println("error:", middleware.Classify(err), err)
		return
	}
	fmt.Println(resp.Text)
	// Output:
	// attempt: outcome=http_503 priority=true tokens=0+0
	// waiting 250ms
	// attempt: outcome=ok priority=true tokens=840+9
	// {"content": "map the workspace"}
}
