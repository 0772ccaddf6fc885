package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/filestore"
)

// importCommand is `existence import`.
var importCommand = &command{
	name:    "import",
	summary: "import a hollow-agentOS memory directory (identity, suffering, goals, semantic memory) into a store",
	about: `It reads every agent of a hollow-agentOS memory directory (identity/{id}/
profile.json and suffering.json, goals/{id}/registry.jsonl, identity/
names.json, and the semantic memory in semantic/{id}/: metadata.jsonl,
embeddings.npy, index.json) with hollow, converts it to the SDK's
state and long-term memories, and saves both in -store, written as run's
-store: a directory, sqlite:PATH or postgres://... Then it prints what
changed: each agent created or replaced, what was imported, and what was
cut, clamped or skipped, and each agent's memories: lines read, memories
stored (one per distinct text), with a vector or pending (embedded later
by a running agent's backfill), repeated, deleted and skipped lines.

  {prog} -hollow ~/hollow-agentOS/memory                    into ./trio-state, where run finds it
  {prog} -hollow memory/ -store sqlite:trio.db -dry-run     report only; nothing is written

An agent already in the store, or whose memories are, is refused
(nothing is saved) unless -replace is given; with -replace, memories the
store has are kept as they are and only the missing ones are added. An agent running in another process holds its lock, so
its import fails rather than being undone by its next save. The
original's "YYYY-MM-DD HH:MM" timestamps are read in -tz.`,
	setup: func(fs *flag.FlagSet) action {
		o := &importOptions{}
		fs.StringVar(&o.hollow, "hollow", "", "the hollow-agentOS memory directory to import (required)")
		fs.StringVar(&o.store, "store", "./trio-state", "where to save the agents: a directory, sqlite:PATH or postgres://... (run's -store)")
		fs.BoolVar(&o.replace, "replace", false, "replace agents already in the store (by default the import is refused and nothing is saved)")
		fs.StringVar(&o.tz, "tz", "UTC", "time zone of the original's \"YYYY-MM-DD HH:MM\" timestamps, e.g. Europe/Paris")
		fs.BoolVar(&o.dryRun, "dry-run", false, "read and report what would change; write nothing")
		fs.BoolVar(&o.json, "json", false, "print the report as one JSON object")
		return func(ctx context.Context, e *env, _ []string) error {
			if err := o.check(); err != nil {
				return usageErr(err)
			}
			rep, err := runImport(ctx, o, time.Now)
			if rep != nil {
				if perr := rep.print(e.stdout, o.json); perr != nil {
					return errors.Join(err, perr)
				}
			}
			return err
		}
	},
}

// importOptions are the import command's flags.
type importOptions struct {
	hollow  string
	store   string
	replace bool
	tz      string
	loc     *time.Location
	dryRun  bool
	json    bool
}

// check validates the parsed flags.
func (o *importOptions) check() error {
	if o.hollow == "" {
		return errors.New("-hollow DIR is required: the hollow-agentOS memory directory to import")
	}
	if _, err := storespec.Kind(o.store); err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	loc, err := time.LoadLocation(o.tz)
	if err != nil {
		return fmt.Errorf("-tz: %w", err)
	}
	o.loc = loc
	return nil
}

// importReport is what an import changed (or, with -dry-run, would
// change); its JSON is the -json output. Each part of a memory directory
// that the command imports has its own section: today the agents' states
// (identity, suffering, goals); another part is imported by a step of its
// own in runImport and reported in a section of its own.
type importReport struct {
	// Source is the memory directory; Store the -store spec.
	Source string `json:"source"`
	Store  string `json:"store"`
	// DryRun reports that nothing was written.
	DryRun bool `json:"dry_run"`
	// Agents are the agents' states, in agent id order.
	Agents []importedAgent `json:"agents"`
	// Memories are the agents' semantic memories, in agent id order.
	Memories []importedMemories `json:"memories"`
	// Warnings are about the directory as a whole.
	Warnings []string `json:"warnings"`
}

// importedAgent is one agent's state in an [importReport]: what happened
// in the store and what was imported (hollow.AgentSummary).
type importedAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Action is "created" (the store had no such agent), "replaced" (it
	// had one, and -replace overwrote it) or "refused" (it had one, and
	// the import stopped without saving anything).
	Action string `json:"action"`
	// Previous describes the state replaced or refused: its name, goals
	// and load; "" for a new agent, "unreadable: ..." for a state that
	// cannot be loaded.
	Previous          string         `json:"previous,omitempty"`
	Opinions          int            `json:"opinions"`
	Questions         int            `json:"questions"`
	Goals             map[string]int `json:"goals"`
	GoalsKept         int            `json:"goals_kept"`
	StressorsActive   int            `json:"stressors_active"`
	StressorsResolved int            `json:"stressors_resolved"`
	StressorsDemoted  int            `json:"stressors_demoted"`
	StressorsMerged   int            `json:"stressors_merged"`
	Trimmed           []string       `json:"trimmed"`
	Warnings          []string       `json:"warnings"`
}

// runImport imports o.hollow into o.store and returns the report; with
// o.dryRun it reads, compares and returns the report, writing nothing (a
// directory or SQLite file that does not exist is not created; a
// PostgreSQL database is migrated to the current schema on connecting, as
// by every command). The report is also returned with the error when
// agents were refused. Errors: hollow.Read's (not a memory directory, a
// file that cannot be read); the store's (unreachable, locked by a
// running agent).
//
// Each part of the memory directory is read first, before the store is
// opened (a directory that is not a memory directory changes nothing),
// and then imported by a step that fills its section of the report:
// today the agents' states (readStates, statesPart.apply). Another part
// becomes a read and a step of its own, with a section of its own.
func runImport(ctx context.Context, o *importOptions, now func() time.Time) (*importReport, error) {
	states, err := readStates(o, now)
	if err != nil {
		return nil, err
	}
	mems, err := readMemories(o, now)
	if err != nil {
		return nil, err
	}
	store, closer, err := openImportStore(ctx, o.store, o.dryRun)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	rep := &importReport{Source: o.hollow, Store: o.store, DryRun: o.dryRun, Agents: []importedAgent{}, Memories: []importedMemories{}, Warnings: []string{}}
	refused, err := states.check(ctx, o, store, rep)
	if err != nil {
		return nil, err
	}
	mrefused, err := mems.check(ctx, o, store, rep)
	if err != nil {
		return nil, err
	}
	if refused = append(refused, mrefused...); len(refused) > 0 {
		slices.Sort(refused)
		refused = slices.Compact(refused)
		// the report says which agents, and that nothing was saved
		return rep, fmt.Errorf("%s already in %s: nothing was imported (-replace overwrites them)", strings.Join(refused, ", "), o.store)
	}
	if o.dryRun {
		return rep, nil
	}
	if err := states.save(ctx, store); err != nil {
		return nil, err
	}
	if err := mems.save(ctx, store, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// statesPart is the agents' states (identity, suffering, goals) of a
// memory directory, as read.
type statesPart struct {
	dir    string
	opts   hollow.Options
	states []*identity.AgentState
	sum    *hollow.Summary
}

// readStates reads the agents' states of o.hollow.
func readStates(o *importOptions, now func() time.Time) (*statesPart, error) {
	opts := hollow.Options{Location: o.loc, Now: now, Replace: o.replace, NoMemories: true}
	states, sum, err := hollow.Read(o.hollow, opts)
	if err != nil {
		return nil, err
	}
	return &statesPart{dir: o.hollow, opts: opts, states: states, sum: sum}, nil
}

// check reports for each agent whether it is created, replaced or
// refused, and returns the refused ones. store is nil when it does not
// exist yet (a dry run).
func (p *statesPart) check(ctx context.Context, o *importOptions, store identity.Store, rep *importReport) ([]string, error) {
	rep.Warnings = append(rep.Warnings, p.sum.Warnings...)
	var refused []string
	for _, st := range p.states {
		a := importedAgent{ID: st.Identity.AgentID, Name: st.Identity.Name, Action: "created"}
		if store != nil {
			prev, err := store.Load(ctx, a.ID)
			switch {
			case errors.Is(err, identity.ErrNotFound):
			case err != nil && !errors.Is(err, identity.ErrCorrupt):
				return nil, fmt.Errorf("reading %s in the store: %w", a.ID, err)
			default:
				a.Action, a.Previous = "replaced", describeState(prev, err)
				if !o.replace {
					a.Action = "refused"
					refused = append(refused, a.ID)
				}
			}
		}
		if i := slices.IndexFunc(p.sum.Agents, func(s hollow.AgentSummary) bool { return s.AgentID == a.ID }); i >= 0 {
			a.fill(p.sum.Agents[i])
		}
		rep.Agents = append(rep.Agents, a)
	}
	return refused, nil
}

// save saves the states.
func (p *statesPart) save(ctx context.Context, store identity.Store) error {
	if len(p.states) == 0 {
		return nil
	}
	_, err := hollow.Import(ctx, p.dir, store, p.opts)
	return err
}

// openImportStore opens the store spec names. With dryRun, a directory or
// SQLite file that does not exist is not created: the store is nil then
// (it holds no agent).
func openImportStore(ctx context.Context, spec string, dryRun bool) (identity.Store, io.Closer, error) {
	kind, err := storespec.Kind(spec)
	if err != nil {
		return nil, nil, err
	}
	if dryRun && (kind == "dir" || kind == "sqlite") {
		if _, err := os.Stat(strings.TrimPrefix(spec, "sqlite:")); errors.Is(err, os.ErrNotExist) {
			return nil, io.NopCloser(nil), nil
		}
	}
	if kind == "dir" { // the states only: no task queue files
		store, err := filestore.Open(spec, filestore.Options{Logger: discardLogger()})
		return store, io.NopCloser(nil), err
	}
	store, _, closer, err := storespec.Open(ctx, spec, storespec.Options{Logger: discardLogger()})
	return store, closer, err
}

// describeState summarises a stored state for the report.
func describeState(st *identity.AgentState, err error) string {
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%s, %d goals, load %.2f", st.Identity.Name, len(st.Identity.Goals), st.Suffering.Load())
}

// fill copies what hollow reported of the agent.
func (a *importedAgent) fill(s hollow.AgentSummary) {
	a.Opinions, a.Questions, a.GoalsKept = s.Opinions, s.Questions, s.GoalsKept
	a.StressorsActive, a.StressorsResolved, a.StressorsDemoted, a.StressorsMerged = s.StressorsActive, s.StressorsResolved, s.StressorsDemoted, s.StressorsMerged
	a.Goals = map[string]int{}
	for st, n := range s.Goals {
		a.Goals[string(st)] = n
	}
	a.Trimmed, a.Warnings = nonNil(s.Trimmed), nonNil(s.Warnings)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// print writes the report: one JSON object, or a readable summary.
func (r *importReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	head := "imported %s into %s:\n"
	switch {
	case slices.ContainsFunc(r.Agents, func(a importedAgent) bool { return a.Action == "refused" }):
		head = "did not import %s into %s (nothing written):\n"
	case r.DryRun:
		head = "would import %s into %s (dry run: nothing written):\n"
	}
	fmt.Fprintf(w, head, r.Source, r.Store)
	for _, a := range r.Agents {
		fmt.Fprintf(w, "%s (%s): %s", a.ID, a.Name, a.Action)
		if a.Previous != "" {
			fmt.Fprintf(w, " (stored: %s)", a.Previous)
		}
		fmt.Fprintf(w, "; %d opinions, %d questions; goals: %d read (%s), %d kept; stressors: %d active, %d demoted, %d merged, %d resolved\n",
			a.Opinions, a.Questions, sumGoals(a.Goals), goalCounts(a.Goals), a.GoalsKept, a.StressorsActive, a.StressorsDemoted, a.StressorsMerged, a.StressorsResolved)
		for _, t := range a.Trimmed {
			fmt.Fprintf(w, "  trimmed: %s\n", t)
		}
		for _, x := range a.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", x)
		}
	}
	for _, m := range r.Memories {
		fmt.Fprintf(w, "memories of %s: %s; %d lines → %d memories (%d with vectors, %d pending); %d repeated, %d deleted, %d skipped",
			m.ID, m.Action, m.Lines, m.Imported, m.Embedded, m.Pending, m.Repeated, m.Deleted, m.Skipped)
		if m.Stored > 0 {
			fmt.Fprintf(w, " (stored: %d)", m.Stored)
		}
		if !r.DryRun && m.Action != "refused" {
			fmt.Fprintf(w, "; %d written", m.Written)
		}
		fmt.Fprintln(w)
		for _, x := range m.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", x)
		}
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
	return nil
}

func sumGoals(g map[string]int) int {
	n := 0
	for _, c := range g {
		n += c
	}
	return n
}

// goalCounts renders goal counts as "3 DONE, 1 FAILED", in status order.
func goalCounts(g map[string]int) string {
	var parts []string
	for _, st := range []identity.GoalStatus{identity.Done, identity.Failed, identity.Abandoned, identity.Active} {
		if n := g[string(st)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
