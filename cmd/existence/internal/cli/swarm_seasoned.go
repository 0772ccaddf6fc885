package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// seasonedState returns the state of an agent that has lived long: every
// list of its identity at its cap (identity.DefaultLimits: 100 goals, 20
// opinions, 20 discoveries, 12 questions; a full narrative) and a full
// resolved history (suffering.MaxResolved), with text of realistic length
// that no other agent shares. A run of such agents (-seasoned) measures the
// memory of a population at steady state: a fresh agent's state grows
// until its lists reach their caps, which takes longer than a run.
func seasonedState(id, name string, now time.Time) *identity.AgentState {
	l := identity.DefaultLimits()
	at := func(i int) time.Time { return now.Add(-time.Duration(1000-i) * time.Minute) }
	st := &identity.AgentState{Identity: identity.New(id, name, at(0))}
	ident := &st.Identity
	ident.Worldview = fmt.Sprintf("%s: the workspace is the only shared memory we have; what is not written down is gone.", name)
	entry := fmt.Sprintf("[2026-11-23] Completed: a map for %s. ", name)
	ident.Narrative = strings.Repeat(entry, l.NarrativeKept/len(entry)+1)[:l.NarrativeKept]
	for i := range l.Goals {
		ident.Goals = append(ident.Goals, identity.Goal{
			ID:        fmt.Sprintf("goal-%s-%03d", id, i),
			Objective: fmt.Sprintf("%s, goal %d: read design/index.md and write a one-page map of what exists, with paths", name, i),
			Status:    identity.Done, Started: at(i), Ended: at(i).Add(30 * time.Second),
			Outcome: fmt.Sprintf("design/map-%d.md: a map of 14 files with their paths (%s)", i, id),
		})
	}
	for i := range l.Opinions {
		ident.Opinions = append(ident.Opinions, identity.Opinion{Text: fmt.Sprintf("A map with paths beats a summary without them (%s, %d)", id, i), Domain: "method", Formed: at(i)})
	}
	for i := range l.Questions {
		ident.Questions = append(ident.Questions, fmt.Sprintf("Does anyone read %s/review-%d.md?", id, i))
	}
	for i := range l.Discoveries {
		ident.Discoveries = append(ident.Discoveries, identity.Discovery{Text: fmt.Sprintf("design/index.md lists %d designs (%s)", i, id), Source: fmt.Sprintf("design/%s-%d.md", id, i), At: at(i)})
	}
	for i := range suffering.MaxResolved {
		st.Suffering.Resolved = append(st.Suffering.Resolved, suffering.Stressor{
			Type: "invisibility", Description: fmt.Sprintf("no one cites my notes (%s, %d)", id, i),
			Severity: 0.2, Peak: 0.3, RatePerDay: 0.03, Condition: "a peer cites a note of mine",
			Onset: at(i), ResolvedAt: at(i).Add(time.Hour), Resolution: "Cipher cited design/map.md",
		})
	}
	return st
}

// season saves a seasoned state for each of ids in store, so that the
// agents added next load it.
func season(ctx context.Context, store identity.Store, ids []string, name func(string) string, now time.Time) error {
	for _, id := range ids {
		if err := store.Save(ctx, seasonedState(id, name(id), now)); err != nil {
			return fmt.Errorf("-seasoned: %w", err)
		}
	}
	return nil
}
