package agentdef

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/workflow"
	"github.com/existence-loop/sdk/prompt"
)

// ConfigOptions are what [Definition.Config] needs beside the shared
// configuration.
type ConfigOptions struct {
	// Prompt is the prompt configuration every agent starts from (its
	// world, goals, prohibitions); the agent's role text follows its
	// Situation (default prompt.DefaultSituation).
	Prompt prompt.Config
	// Sections, when set, adjusts each agent's assembler after it is
	// built (an application's own sections, such as the slots).
	Sections func(*prompt.Assembler) error
	// Actions are the workflows' code-step functions beside the built-in
	// ones (workflow.Workflow.Actions).
	Actions map[string]workflow.Action
	// Now stamps the archived BOOTSTRAP.md's name; default time.Now.
	Now func() time.Time
}

// Config returns base configured by d: its ID, Name, Traits and Domains
// (when set), Temperature, MaxTokens, Heartbeat and Budget (when set), a
// prompt of opts.Prompt with the role text after the situation, the rag
// block (MemoryK and MemoryQuery, and the memories section, when base
// has a Memory), the working memory, the workflow as the cycle strategy
// (package existence/workflow) and, with a BOOTSTRAP.md, the
// commissioning ([existence.Commissioning]: archiving renames the file
// BOOTSTRAP.commissioned-YYYYMMDDTHHMMSSZ.md in the agent's folder). The
// model (llm_model, model_server) and the tools are the caller's to
// build: base's are kept. Errors: the workflow's ([workflow.New]) or a
// section that cannot be placed.
func (d *Definition) Config(base existence.Config, opts ConfigOptions) (existence.Config, error) {
	cfg := base
	cfg.ID, cfg.Name = d.ID, d.Name
	if d.Traits != nil {
		cfg.Traits = d.Traits
	}
	if d.Domains != nil {
		cfg.Domains = d.Domains
	}
	if d.Temperature != nil {
		t := *d.Temperature
		cfg.Calls.Temperature = &t
	}
	if d.MaxTokens > 0 {
		cfg.Calls.MaxTokens = d.MaxTokens
	}
	if d.Heartbeat > 0 {
		cfg.Timing.Heartbeat = d.Heartbeat
	}
	if d.Budget.Tokens > 0 {
		cfg.Calls.Budget = d.Budget
	}
	asm, err := d.Prompt(opts)
	if err != nil {
		return cfg, err
	}
	cfg.Prompt = asm
	if d.RAG.Enabled && cfg.Memory.LongTerm != nil {
		cfg.Memory.K = d.RAG.Limit
		if q := strings.TrimSpace(d.RAG.QueryTemplate); q != "" {
			cfg.Memory.Query = func(*prompt.View) string { return q }
		}
	}
	cfg.Memory.Working = existence.WorkingMemory{Enabled: d.WorkingMemory.Enabled, MaxBytes: d.WorkingMemory.MaxBytes}
	cfg.Calls.Cycle = nil
	if d.Workflow != nil {
		w := *d.Workflow
		w.Actions = opts.Actions
		s, err := workflow.New(w)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", d.File, err)
		}
		cfg.Calls.Cycle = s
	}
	cfg.Commissioning = nil
	if d.Bootstrap != "" {
		folder := filepath.Dir(d.File)
		now := opts.Now
		if now == nil {
			now = time.Now
		}
		cfg.Commissioning = &existence.Commissioning{
			Instructions: d.Bootstrap,
			Archive:      func() error { return ArchiveBootstrap(folder, now()) },
		}
	}
	return cfg, nil
}

// Prompt returns d's prompt assembler: opts.Prompt with the role text
// after the situation, the memories section when the rag block is on,
// then opts.Sections.
func (d *Definition) Prompt(opts ConfigOptions) (*prompt.Assembler, error) {
	pc := opts.Prompt
	if pc.Situation == "" {
		pc.Situation = prompt.DefaultSituation
	}
	if d.Role != "" {
		pc.Situation += "\n" + d.Role
	}
	asm := prompt.New(pc)
	if d.RAG.Enabled {
		if err := asm.InsertAfter(prompt.SectionLastOutcome, prompt.Memories()); err != nil {
			return nil, err
		}
	}
	if opts.Sections != nil {
		if err := opts.Sections(asm); err != nil {
			return nil, err
		}
	}
	return asm, nil
}

// ArchiveBootstrap renames folder's BOOTSTRAP.md to
// BOOTSTRAP.commissioned-YYYYMMDDTHHMMSSZ.md (at, in UTC), through an
// os.Root on folder: the ceremony's instructions are kept, and no longer
// start one. A folder without BOOTSTRAP.md is not an error.
func ArchiveBootstrap(folder string, at time.Time) error {
	root, err := os.OpenRoot(folder)
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Lstat(BootstrapFile); os.IsNotExist(err) {
		return nil
	}
	return root.Rename(BootstrapFile, "BOOTSTRAP.commissioned-"+at.UTC().Format("20060102T150405Z")+".md")
}

// Configs returns the enabled definitions' configurations
// ([Definition.Config]), in the Set's order.
func (s *Set) Configs(base existence.Config, opts ConfigOptions) ([]existence.Config, error) {
	var out []existence.Config
	for _, d := range s.Enabled() {
		cfg, err := d.Config(base, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg)
	}
	return out, nil
}
