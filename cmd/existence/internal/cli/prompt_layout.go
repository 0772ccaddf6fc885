package cli

import (
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/prompt"
)

// layoutFlag registers -prompt-layout on fs.
func layoutFlag(fs *flag.FlagSet, l *prompt.Layout) {
	fs.Func("prompt-layout", "order of the prompt's sections: original (spec §2, the default), cache (what every agent shares first,\n"+
		"what changes every cycle last, so that a model server's KV cache reuses most of each prompt: for a server with\n"+
		"fewer KV-cache slots than agents) or cache-agent (the same with the agent's name first: for a server with a slot\n"+
		"per agent, such as Ollama with OLLAMA_NUM_PARALLEL at least the number of agents)", func(s string) error {
		v, err := prompt.ParseLayout(s)
		if err != nil {
			return err
		}
		*l = v
		return nil
	})
}

// cacheCounts counts a stand-in server's prompt tokens served from its KV
// cache and evaluated, by kind of call: cycle prompts (a structured-output
// request) and the rest (tool-loop turns, summaries).
type cacheCounts struct {
	mu                     sync.Mutex
	cycleCached, cycleEval int64
	otherCached, otherEval int64
}

// hook makes the stand-in configured by cfg count its calls in c: the
// latency function sees each call once its cache was looked up.
func (c *cacheCounts) hook(cfg *llmtest.ServerConfig) {
	if c == nil {
		return
	}
	prev, lat := cfg.LatencyFunc, cfg.Latency
	cfg.LatencyFunc = func(call *llmtest.Call) time.Duration {
		c.mu.Lock()
		if len(call.Format) > 0 {
			c.cycleCached += int64(call.Cached)
			c.cycleEval += int64(call.Evaluated)
		} else {
			c.otherCached += int64(call.Cached)
			c.otherEval += int64(call.Evaluated)
		}
		c.mu.Unlock()
		if prev != nil {
			return prev(call)
		}
		return lat
	}
}

// cycle returns the cycle prompts' tokens from the cache and evaluated.
func (c *cacheCounts) cycle() (cached, evaluated int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cycleCached, c.cycleEval
}

// share is cached / (cached + evaluated), 0 for none.
func share(cached, evaluated int64) float64 {
	if cached+evaluated == 0 {
		return 0
	}
	return float64(cached) / float64(cached+evaluated)
}

// report writes the counts as one line, nothing when no prompt came.
func (c *cacheCounts) report(w io.Writer, prog string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cycleCached+c.cycleEval+c.otherCached+c.otherEval == 0 {
		return
	}
	fmt.Fprintf(w, "%s: stand-in KV cache: cycle prompts %d tokens from the cache, %d evaluated (%.1f%% cached); other calls %d and %d (%.1f%%)\n",
		prog, c.cycleCached, c.cycleEval, 100*share(c.cycleCached, c.cycleEval), c.otherCached, c.otherEval, 100*share(c.otherCached, c.otherEval))
}

// prompt returns the agents' assembler for -prompt-layout: nil (the
// agent's default) for the original layout.
func (o *swarmOptions) prompt() *prompt.Assembler {
	if o.layout == prompt.LayoutOriginal {
		return nil
	}
	return prompt.New(prompt.Config{Situation: prompt.DefaultSituation, Layout: o.layout})
}
