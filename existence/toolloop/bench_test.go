package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// BenchmarkExecute measures the executor's own overhead for a goal of ten
// tool turns (argument validation, dispatch, conversation bookkeeping) with
// an instant model. Each turn's arguments differ, so that the same-call
// stall rule (4 identical calls in a row) does not end the goal.
func BenchmarkExecute(b *testing.B) {
	var args [10]json.RawMessage
	for i := range args {
		args[i] = json.RawMessage(fmt.Sprintf(`{"text":"hello %d"}`, i))
	}
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		turn := (len(req.Messages) - 2) / 2
		if turn >= 10 {
			return &llm.Response{Text: "done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: "echo", Arguments: args[turn]}}}, nil
	})
	e, err := toolloop.New(toolloop.Config{Model: model, Tools: (&kit{}).tools()[:1]})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := e.Execute(context.Background(), assignment(nil))
		if err != nil || out.Steps != 11 {
			b.Fatalf("%+v %v", out, err)
		}
	}
}
