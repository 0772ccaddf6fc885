package toolloop_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// BenchmarkExecute measures the executor's own overhead for a goal of ten
// tool turns (argument validation, dispatch, conversation bookkeeping) with
// an instant model.
func BenchmarkExecute(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	model := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages) >= 2+2*10 {
			return &llm.Response{Text: "done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: "echo", Arguments: args}}}, nil
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
