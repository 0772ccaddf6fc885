package existence

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/prompt"
)

// Commissioning is GSV's commissioning ceremony for an agent's first run
// ([Config].Commissioning): while the state records no commissioning
// ([identity.AgentState].Commissioned is zero), every cycle's prompt
// starts with Instructions ([prompt.CommissioningSection], placed first
// by [New]); the agent completes it by calling the tool
// complete_commissioning (existence/toolloop.CommissioningTool), which
// calls [Agent.CompleteCommissioning]. A restart in the middle resumes
// it; an agent commissioned once is never commissioned again (its
// instructions are archived and not shown).
type Commissioning struct {
	// Instructions is the ceremony's text: the agent's BOOTSTRAP.md.
	Instructions string
	// Archive moves the instructions aside once the ceremony is complete
	// (a BOOTSTRAP.md is renamed, not deleted); optional. It is called
	// after the completion is saved, and again by [New] for an agent
	// already commissioned whose instructions are still there. Its error
	// is reported as an [event.Commissioning] with Err; the completion
	// stands.
	Archive func() error
}

// Caps on what [Agent.CompleteCommissioning] accepts, in characters.
const (
	MaxPersonalityChars = 300
	MaxHumanChars       = 500
)

// ErrCommissioning matches the errors of [Agent.CompleteCommissioning].
var ErrCommissioning = errors.New("existence: commissioning")

// CommissionReport is what an agent says when it completes its
// commissioning.
type CommissionReport struct {
	// Name is the name it takes ([identity.ValidateName]).
	Name string `json:"name"`
	// Personality is its personality in a few words, comma-separated
	// traits such as "curious, dry, precise"; 1–300 characters.
	Personality string `json:"personality"`
	// Human is what it learned of its human; 1–500 characters.
	Human string `json:"human"`
}

// commissioning reports whether the agent is being commissioned; a.mu
// must be held.
func (a *Agent) commissioningLocked() bool {
	return a.cfg.Commissioning != nil && a.state.Commissioned.IsZero()
}

// CompleteCommissioning completes the agent's commissioning with r: the
// identity takes r.Name as its name and r.Personality's comma-separated
// parts as its traits (at most 5, 60 characters each), what it learned
// of its human becomes a discovery (source "commissioning"), the state
// records the time, and the state is saved before the instructions are
// archived. Errors match [ErrCommissioning]: the agent has no
// commissioning, or completed it already (never twice), or r breaks a
// rule (the name, an empty or too long personality or human); and the
// save's error.
func (a *Agent) CompleteCommissioning(ctx context.Context, r CommissionReport) error {
	r.Name, r.Personality, r.Human = strings.TrimSpace(r.Name), strings.TrimSpace(r.Personality), strings.TrimSpace(r.Human)
	if err := identity.ValidateName(r.Name); err != nil {
		return fmt.Errorf("%w: name: %w", ErrCommissioning, err)
	}
	switch n := runes.Count(r.Personality); {
	case n == 0:
		return fmt.Errorf("%w: personality: empty; describe yourself in a few words", ErrCommissioning)
	case n > MaxPersonalityChars:
		return fmt.Errorf("%w: personality: %d characters, at most %d", ErrCommissioning, n, MaxPersonalityChars)
	}
	switch n := runes.Count(r.Human); {
	case n == 0:
		return fmt.Errorf("%w: human: empty; say what you learned of your human", ErrCommissioning)
	case n > MaxHumanChars:
		return fmt.Errorf("%w: human: %d characters, at most %d", ErrCommissioning, n, MaxHumanChars)
	}
	now := a.cfg.Timing.Clock.Now()
	a.mu.Lock()
	if a.cfg.Commissioning == nil {
		a.mu.Unlock()
		return fmt.Errorf("%w: %s has no commissioning to complete", ErrCommissioning, a.cfg.ID)
	}
	if !a.state.Commissioned.IsZero() {
		at := a.state.Commissioned
		a.mu.Unlock()
		return fmt.Errorf("%w: %s was commissioned already, at %s; an agent is commissioned once", ErrCommissioning, a.cfg.ID, at.Format("2006-01-02 15:04:05"))
	}
	id := &a.state.Identity
	id.Name = r.Name
	var traits []string
	for t := range strings.SplitSeq(r.Personality, ",") {
		if t = runes.Head(strings.TrimSpace(t), 60); t != "" && len(traits) < 5 {
			traits = append(traits, t)
		}
	}
	id.Traits = traits
	id.AddDiscovery(identity.Discovery{Text: "My human: " + r.Human, Source: "commissioning", At: now}, a.cfg.Limits)
	a.state.Commissioned = now
	name := r.Name
	a.name.Store(&name)
	a.queue(event.Event{Kind: event.Commissioning, Reason: "completed", Text: r.Name})
	err := a.saveLocked(ctx)
	a.unlock()
	if err != nil {
		return err
	}
	a.archiveCommissioning()
	return nil
}

// archiveCommissioning archives the instructions, reporting a failure.
func (a *Agent) archiveCommissioning() {
	if c := a.cfg.Commissioning; c != nil && c.Archive != nil {
		if err := c.Archive(); err != nil {
			a.emit(event.Event{Kind: event.Commissioning, Reason: "archive_failed", Text: "archiving the commissioning instructions failed", Err: err})
		}
	}
}

// startCommissioning, called by New, places the commissioning section
// first and reports the ceremony starting or resuming; an agent already
// commissioned has its leftover instructions archived.
func (a *Agent) startCommissioning() error {
	c := a.cfg.Commissioning
	if c == nil {
		return nil
	}
	if !a.state.Commissioned.IsZero() {
		a.emit(event.Event{Kind: event.Commissioning, Reason: "already_commissioned",
			Text: "commissioned at " + a.state.Commissioned.Format("2006-01-02 15:04:05") + "; its instructions are archived, not followed again"})
		a.archiveCommissioning()
		return nil
	}
	if strings.TrimSpace(c.Instructions) == "" {
		return errors.New("existence: Config.Commissioning.Instructions is empty")
	}
	if err := ensureSection(a.cfg.Prompt, prompt.CommissioningSection(), "", false); err != nil {
		return err
	}
	a.emit(event.Event{Kind: event.Commissioning, Reason: "started", Text: "commissioning: its instructions lead every prompt until complete_commissioning is called"})
	return nil
}
