package existence

import (
	"fmt"

	"github.com/existence-loop/sdk/prompt"
)

// Update is a change to a running agent's configuration ([Agent.Update]):
// the parts of [Config] that can change between two cycles without a
// restart. A nil field is left as it is.
type Update struct {
	// Prompt replaces the assembler (a new role text, say). The working
	// memory and commissioning sections are placed in it as [New] does.
	Prompt *prompt.Assembler
	// Temperature replaces Config.Calls.Temperature (a pointer to nil: not
	// sent).
	Temperature **float64
	// MaxTokens replaces Config.Calls.MaxTokens (0: the default).
	MaxTokens *int
	// Cycle replaces Config.Calls.Cycle; a pointer to nil goes back to the
	// existence prompt.
	Cycle *CycleStrategy
	// WorkingMemory replaces Config.Memory.Working. Turning it off keeps
	// the stored memory (it is shown again when turned back on).
	WorkingMemory *WorkingMemory
}

// Update applies u between two cycles: it waits for a tick in progress
// to end, and the agent's state (identity, suffering, goals, working
// memory) is kept. Errors: a negative MaxTokens or WorkingMemory.MaxBytes,
// or a Prompt where a section cannot be placed; then nothing changes.
func (a *Agent) Update(u Update) error {
	a.tickMu.Lock()
	defer a.tickMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	// Check everything first: an error changes nothing.
	asm, maxTokens, wm := a.cfg.Prompt, a.cfg.Calls.MaxTokens, a.cfg.Memory.Working
	if u.Prompt != nil {
		asm = u.Prompt
	}
	if u.MaxTokens != nil {
		switch {
		case *u.MaxTokens < 0:
			return fmt.Errorf("existence: Update.MaxTokens is negative (%d)", *u.MaxTokens)
		case *u.MaxTokens == 0:
			maxTokens = DefaultMaxTokens
		default:
			maxTokens = *u.MaxTokens
		}
	}
	if u.WorkingMemory != nil {
		wm = *u.WorkingMemory
		if wm.MaxBytes < 0 {
			return fmt.Errorf("existence: Update.WorkingMemory.MaxBytes is negative (%d)", wm.MaxBytes)
		}
		if wm.MaxBytes == 0 {
			wm.MaxBytes = DefaultWorkingMemoryBytes
		}
	}
	if wm.Enabled && (u.Prompt != nil || u.WorkingMemory != nil) {
		if err := ensureSection(asm, prompt.WorkingMemorySection(), prompt.SectionDirective, false); err != nil {
			return fmt.Errorf("existence: the working memory section: %w", err)
		}
	}
	if u.Prompt != nil && a.cfg.Commissioning != nil {
		if err := ensureSection(asm, prompt.CommissioningSection(), "", false); err != nil {
			return err
		}
	}
	// Each field alone: other goroutines read other fields of a.cfg
	// without a lock (the id, the observer).
	a.cfg.Prompt, a.cfg.Calls.MaxTokens, a.cfg.Memory.Working = asm, maxTokens, wm
	if u.Temperature != nil {
		a.cfg.Calls.Temperature = *u.Temperature
	}
	if u.Cycle != nil {
		if *u.Cycle != nil && a.stepModel == nil {
			a.buildStepModels()
		}
		a.cfg.Calls.Cycle = *u.Cycle
	}
	return nil
}
