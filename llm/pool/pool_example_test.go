package pool_test

import (
	"context"
	"fmt"
	"syscall"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/pool"
)

// A pool of two servers: each agent keeps to one, and moves to the other
// when its own stops answering.
func ExamplePool() {
	server := func(name string, up *bool) llm.Model {
		return llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			if !*up {
				return nil, &llm.UnavailableError{Provider: "ollama", URL: name, Err: syscall.ECONNREFUSED}
			}
			return &llm.Response{Text: name}, nil
		})
	}
	upA, upB := true, true
	p, err := pool.New(pool.Config{Servers: []pool.Server{
		{Name: "gpu-a", Model: server("gpu-a", &upA)},
		{Name: "gpu-b", Model: server("gpu-b", &upB)},
	}})
	if err != nil {
		panic(err)
	}
	ask := func(agent string) string {
		resp, err := p.Generate(pool.WithAgent(context.Background(), agent), &llm.Request{})
		if err != nil {
			return err.Error()
		}
		return resp.Text
	}
	fmt.Println("scout:", p.Rank("scout"), "answered by", ask("scout"))
	fmt.Println("analyst:", p.Rank("analyst"), "answered by", ask("analyst"))
	upB = false
	fmt.Println("with gpu-b down, analyst answered by", ask("analyst"))
	// Output:
	// scout: [gpu-a gpu-b] answered by gpu-a
	// analyst: [gpu-b gpu-a] answered by gpu-b
	// with gpu-b down, analyst answered by gpu-a
}
