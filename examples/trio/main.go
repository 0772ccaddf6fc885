package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/trio"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
)

// options are the command's flags.
type options struct {
	llmURL string        // Ollama's URL, or "standin:" for llm/llmtest's stand-in
	model  string        // the model name
	dir    string        // the state directory; "" keeps the state in memory
	cycles int           // existence cycles per agent; 0 means until -for passes
	dur    time.Duration // how long to run; 0 means until -cycles are done
}

func main() {
	var o options
	flag.StringVar(&o.llmURL, "llm-url", "http://localhost:11434", `Ollama's URL, or "standin:" for llm/llmtest's stand-in model`)
	flag.StringVar(&o.model, "model", "qwen3.5:9b", "the model's name")
	flag.StringVar(&o.dir, "dir", "", "directory of the agents' saved state (default: in memory)")
	flag.IntVar(&o.cycles, "cycles", 0, "existence cycles per agent (default 3 when -for is not set)")
	flag.DurationVar(&o.dur, "for", 0, "how long to run, e.g. 10m")
	flag.Parse()
	if o.cycles == 0 && o.dur == 0 {
		o.cycles = 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "trio:", err)
		os.Exit(1)
	}
}

// run builds Cedar, Cipher and Vault and runs them until each has run
// o.cycles cycles, o.dur has passed or ctx ends, printing every goal
// chosen to w.
func run(ctx context.Context, o options, w io.Writer) error {
	url := o.llmURL
	if strings.HasPrefix(url, "standin:") {
		srv := llmtest.NewServer(llmtest.ServerConfig{Reply: llmtest.ScriptedReply})
		defer srv.Close()
		url = srv.Start()
	}
	store, err := openStore(o.dir)
	if err != nil {
		return err
	}
	if o.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dur)
		defer cancel()
	}
	var mu sync.Mutex // the agents print from their own goroutines
	show := func(e event.Event) {
		if e.Kind == event.GoalChosen {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(w, "%-6s 🎯 %s\n", e.Agent, e.Goal)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(trio.Members()))
	for i, m := range trio.Members() {
		model, err := ollama.New(ollama.Config{URL: url, Model: o.model})
		if err != nil {
			return err
		}
		agent, err := existence.New(ctx, existence.Config{
			ID: m.ID, Name: m.Name, Traits: m.Traits, Domains: m.Domains,
			Model: model, Store: store, Observer: show,
			Timing: existence.TimingConfig{MaxCycles: o.cycles}, // Tick runs no cycle past it
		})
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		wg.Go(func() { errs[i] = errors.Join(live(ctx, agent, o.cycles), agent.Close()) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// live runs agent's existence cycles back to back (spec §1: a new prompt
// as soon as the previous goal has ended) until it has run cycles of them
// (0: no limit) or ctx ends, which is not an error.
func live(ctx context.Context, agent *existence.Agent, cycles int) error {
	for cycles == 0 || agent.Cycles() < cycles {
		if err := agent.Tick(ctx); err != nil { // a cycle when no goal is active
			return ignoreEnd(ctx, err)
		}
		if err := agent.WaitGoal(ctx); err != nil { // the executor's return
			return ignoreEnd(ctx, err)
		}
	}
	return ignoreEnd(ctx, agent.Tick(ctx)) // records the last goal's outcome (MaxCycles: no new cycle)
}

// ignoreEnd returns err, or nil when it is ctx's end.
func ignoreEnd(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// openStore opens the store of the agents' state: a file store in dir, or
// an in-memory store when dir is "".
func openStore(dir string) (identity.Store, error) {
	if dir == "" {
		return memstore.New(), nil
	}
	return filestore.Open(dir, filestore.Options{})
}
