package existence_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/filestore"
)

// Embedding one agent in an application: the README's example. It needs a
// running Ollama server, so it is compiled but not run by go test.
func ExampleAgent_Run() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	model, err := ollama.New(ollama.Config{Model: "qwen3.5:9b"}) // $OLLAMA_HOST or 127.0.0.1:11434
	if err != nil {
		log.Fatal(err)
	}
	store, err := filestore.Open("./state", filestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	agent, err := existence.New(ctx, existence.Config{
		ID:       "scout",
		Name:     "Cedar",
		Model:    model,
		Store:    store, // identity, suffering and goals survive restarts
		Prompt:   prompt.Solo(prompt.Config{World: "You live inside a Go service. You have no tools yet."}),
		Observer: func(e event.Event) { fmt.Println(e) }, // the thoughts log
	})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	if err := agent.Run(ctx); err != nil { // a heartbeat every 6 s until Ctrl-C; model failures never stop it
		log.Print(err) // the final save failed
	}
}
