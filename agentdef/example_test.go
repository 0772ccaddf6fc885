package agentdef_test

import (
	"context"
	"fmt"
	"log"

	"github.com/existence-loop/sdk/agentdef"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
)

// Load a definitions directory, turn each enabled agent into a
// configuration over the parts they share, and run them with a Runner.
func Example() {
	set, err := agentdef.Load("testdata/ecology", agentdef.Options{})
	if err != nil {
		log.Fatal(err) // every problem, with its file and line
	}
	for _, i := range set.Ignored {
		fmt.Println("ignored:", i.Key)
	}
	base := existence.Config{Model: llmtest.NewFake()} // your model; llm_model names one per agent
	cfgs, err := set.Configs(base, agentdef.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	rn, err := runner.New(runner.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rn.Close()
	for _, cfg := range cfgs {
		if _, err := rn.Add(context.Background(), cfg); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%s): workflow %v, working memory %v\n", cfg.ID, cfg.Name, cfg.Calls.Cycle != nil, cfg.Memory.Working.Enabled)
	}
	// Output:
	// ignored: starting_scrip
	// ignored: working_memory.include_in_rag
	// alice (alice): workflow false, working memory false
	// alpha_2 (Architect): workflow true, working memory true
}
