package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
)

// importedMemories is one agent's semantic memory in an [importReport]:
// what happened in the store and what was read (hollow.MemorySummary).
type importedMemories struct {
	ID string `json:"id"`
	// Action is "created" (the store had no memory of the agent),
	// "added" (it had some, and -replace adds the missing ones),
	// "refused" (it had some, and the import stopped without saving
	// anything) or "not imported" (the store keeps no memories).
	Action string `json:"action"`
	// Stored is how many memories of the agent the store held before.
	Stored int `json:"stored"`
	// Lines = Imported + Repeated + Deleted + Skipped.
	Lines    int `json:"lines"`
	Imported int `json:"imported"`
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
	Repeated int `json:"repeated"`
	Deleted  int `json:"deleted"`
	Skipped  int `json:"skipped"`
	// Rows are the vectors in embeddings.npy, Unused those no line
	// points to; Model and Dim their space.
	Rows   int    `json:"rows"`
	Unused int    `json:"unused"`
	Model  string `json:"model,omitempty"`
	Dim    int    `json:"dim,omitempty"`
	// Written is how many memories the import stored.
	Written  int      `json:"written"`
	Warnings []string `json:"warnings"`
}

// memoriesPart is the semantic memories of a memory directory, as read.
type memoriesPart struct {
	agents   []hollow.AgentMemories
	warnings []string // about semantic/ as a whole
}

// readMemories reads the semantic memories of o.hollow.
func readMemories(o *importOptions, now func() time.Time) (*memoriesPart, error) {
	agents, warnings, err := hollow.ReadMemories(o.hollow, hollow.Options{Location: o.loc, Now: now})
	if err != nil {
		return nil, err
	}
	return &memoriesPart{agents: agents, warnings: warnings}, nil
}

// check reports each agent's memories and whether they are created,
// added or refused, and returns the refused agents. store is nil when it
// does not exist yet (a dry run).
func (p *memoriesPart) check(ctx context.Context, o *importOptions, store identity.Store, rep *importReport) ([]string, error) {
	var refused []string
	rep.Warnings = append(rep.Warnings, p.warnings...)
	ms, keeps := store.(memory.Store)
	for _, a := range p.agents {
		s := a.Summary
		m := importedMemories{ID: a.AgentID, Action: "created", Lines: s.Lines, Imported: s.Imported, Embedded: s.Embedded, Pending: s.Pending,
			Repeated: s.Repeated, Deleted: s.Deleted, Skipped: s.Skipped, Rows: s.Rows, Unused: s.Unused, Model: s.Space.Model, Dim: s.Space.Dimensions,
			Warnings: nonNil(s.Warnings)}
		switch {
		case store == nil:
		case !keeps:
			m.Action = "not imported"
		default:
			c, err := ms.CountMemories(ctx, a.AgentID)
			if err != nil {
				return nil, fmt.Errorf("counting the memories of %s in the store: %w", a.AgentID, err)
			}
			if m.Stored = c.Memories; m.Stored > 0 {
				m.Action = "added"
				if !o.replace {
					m.Action = "refused"
					refused = append(refused, a.AgentID)
				}
			}
		}
		rep.Memories = append(rep.Memories, m)
	}
	return refused, nil
}

// save stores the memories and fills in what was written.
func (p *memoriesPart) save(ctx context.Context, store identity.Store, rep *importReport) error {
	ms, ok := store.(memory.Store)
	if !ok || len(p.agents) == 0 {
		return nil
	}
	err := hollow.ImportMemories(ctx, ms, p.agents, true)
	for i, a := range p.agents {
		rep.Memories[i].Written = a.Summary.Written
	}
	return err
}
