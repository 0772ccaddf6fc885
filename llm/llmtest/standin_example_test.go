package llmtest_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// The stand-in model from Go, for a program or a test without a model
// server: a scripted Ollama server in the process (what `existence run
// -llm-url standin:` starts), reached by the real Ollama client over
// loopback. The agent picks a goal, the tool loop lists the workspace and
// writes a note, and the goal ends DONE.
func ExampleScriptedReply() {
	ctx := context.Background()
	srv := llmtest.NewServer(llmtest.ServerConfig{Reply: llmtest.ScriptedReply})
	defer srv.Close()
	model, err := ollama.New(ollama.Config{URL: srv.Start(), Model: "qwen3.5:9b"})
	if err != nil {
		panic(err)
	}

	dir, err := os.MkdirTemp("", "standin-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Open(dir, workspace.Limits{})
	if err != nil {
		panic(err)
	}
	exec, err := toolloop.New(toolloop.Config{Model: model, Tools: ws.Tools()})
	if err != nil {
		panic(err)
	}
	var ended atomic.Bool // print the first goal only
	agent, err := existence.New(ctx, existence.Config{
		ID: "scout", Name: "Cedar", Model: model, Executor: exec,
		Observer: func(e event.Event) {
			switch {
			case ended.Load():
			case e.Kind == event.ToolCall:
				fmt.Println("tool:", e.Tool.Name)
			case e.Kind == event.GoalEnded:
				fmt.Println("goal ended:", e.GoalStatus)
				ended.Store(true)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer agent.Close()

	// agent.Run(ctx) does this every heartbeat until ctx ends.
	_ = agent.Tick(ctx)     // a cycle: the model chooses a goal; the tool loop starts on it
	_ = agent.WaitGoal(ctx) // the tool loop: list_files, write_file, a final answer
	_ = agent.Tick(ctx)     // the goal's end is recorded; the next cycle starts
	_ = agent.WaitGoal(ctx)
	// Output:
	// tool: list_files
	// tool: write_file
	// goal ended: DONE
}
