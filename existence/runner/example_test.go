package runner_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
)

// Several agents as peers over one store: each sees the others in its
// "YOUR PEERS" section, and the scheduler's autonomy lane runs at most
// AutonomyWorkers existence cycles (model calls) at once.
// Compiled but not run: it needs a running Ollama server.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	model, err := ollama.New(ollama.Config{Model: "qwen3.5:9b"})
	if err != nil {
		log.Fatal(err)
	}
	store, err := filestore.Open("./state", filestore.Options{})
	if err != nil {
		log.Fatal(err)
	}

	rn, err := runner.New(runner.Config{Store: store, AutonomyWorkers: 1}) // one cycle at a time: one local GPU
	if err != nil {
		log.Fatal(err)
	}
	defer rn.Close()
	for _, m := range trio.Members() { // Cedar, Cipher and Vault
		if _, err := rn.Add(ctx, existence.Config{ID: m.ID, Name: m.Name, Traits: m.Traits, Domains: m.Domains, Model: model}); err != nil {
			log.Fatal(err)
		}
	}
	if err := rn.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// A runner over one in-memory store: the agents it holds, in the order they
// were added. Cycles start with Run (or RunVirtual); adding an agent calls no
// model.
func ExampleNew() {
	ctx := context.Background()
	rn, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rn.Close()
	model := llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, llm.ErrUnavailable // never called here
	})
	for _, m := range trio.Members() {
		if _, err := rn.Add(ctx, existence.Config{ID: m.ID, Name: m.Name, Model: model}); err != nil {
			log.Fatal(err)
		}
	}
	for _, a := range rn.Agents() {
		fmt.Println(a.ID(), a.Name())
	}
	// Output:
	// scout Cedar
	// analyst Cipher
	// builder Vault
}
