package hollow

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/memory"
)

// Size limits on the source files.
const (
	// MaxFileSize is the largest source file Read accepts, in bytes
	// (64 MiB). A larger file is an error.
	MaxFileSize = 64 << 20
	// MaxLineSize is the longest registry.jsonl line Read accepts, in
	// bytes (1 MiB). A longer line is skipped with a warning.
	MaxLineSize = 1 << 20
)

// Errors of [Read] and [Import]. Errors about one source file are
// [*FileError] values that wrap them.
var (
	// ErrNotMemoryDir: the directory has neither an identity/ nor a goals/
	// directory.
	ErrNotMemoryDir = errors.New("hollow: not a hollow-agentOS memory directory (no identity/ or goals/)")
	// ErrMalformed: a JSON document (profile.json, suffering.json,
	// names.json) is not a JSON object, or a source path is a directory or
	// larger than MaxFileSize. Nothing is imported: fix or remove the file
	// and run again.
	ErrMalformed = errors.New("malformed source file")
	// ErrExists: [Import] found an agent already in the store and
	// Options.Replace is false. Nothing was saved.
	ErrExists = errors.New("hollow: agent already in the store")
)

// FileError reports a source file that exists but cannot be used.
type FileError struct {
	// Path is the file's path: the memory directory joined with the
	// file's path inside it.
	Path string
	// Err is the reason: it wraps [ErrMalformed] for bad content, or is
	// the error of the file system (for example [fs.ErrPermission]).
	Err error
}

// Error returns "hollow: {path}: {reason}".
func (e *FileError) Error() string { return "hollow: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *FileError) Unwrap() error { return e.Err }

// Options configures [Read] and [Import]. The zero value is ready to use.
type Options struct {
	// Location is the time zone of the original's "YYYY-MM-DD HH:MM"
	// timestamps (the container's local time); nil means UTC. Unix-second
	// timestamps need none.
	Location *time.Location
	// Limits are the caps applied to the imported identities with
	// [identity.Identity.Enforce]; zero fields take their defaults.
	Limits identity.Limits
	// Now returns the import instant; nil means time.Now. It stands in for
	// missing or unreadable timestamps and is the resolution time of the
	// stressors demoted or merged on import.
	Now func() time.Time
	// Replace lets [Import] overwrite agents already in the store, and
	// add to memories already there (memories with an id the store has
	// are left as they are, so that importing twice changes nothing). By
	// default Import refuses with [ErrExists] before saving anything.
	Replace bool
	// EmbedModel names the embedding model of the imported vectors (the
	// memories' [memory.Space]); empty means [DefaultEmbedModel],
	// nomic-embed-text, the original's.
	EmbedModel string
	// NoMemories makes [Import] save the states only, leaving the
	// semantic memories to [ImportMemories].
	NoMemories bool
}

// Summary reports what [Read] or [Import] did. Print it with
// [Summary.String].
type Summary struct {
	// Agents has one entry per imported agent, in agent id order.
	Agents []AgentSummary
	// Memories has one entry per agent whose semantic memory was read
	// (semantic/{agent_id}/), in agent id order: [Import] fills it.
	Memories []MemorySummary
	// Warnings are about the directory as a whole, for example a
	// subdirectory skipped because its name is not a valid agent id.
	Warnings []string
}

// AgentSummary reports the import of one agent. Counts are of what was
// imported, after every cap, unless they say otherwise.
type AgentSummary struct {
	// AgentID is the agent's id: the name of its directories.
	AgentID string
	// Name is the imported display name.
	Name string
	// Opinions and Questions are the opinions and open questions imported.
	Opinions  int
	Questions int
	// Goals counts the goals read from registry.jsonl by status after
	// mapping (completed → DONE, failed → FAILED, abandoned → ABANDONED,
	// active → active), before the goal-history cap (Limits.Goals).
	Goals map[identity.GoalStatus]int
	// GoalsKept is the length of the imported goal history.
	GoalsKept int
	// StressorsActive is the number of active stressors imported (at most
	// 5, spec §4).
	StressorsActive int
	// StressorsResolved is the length of the imported resolved history,
	// which includes the demoted and merged stressors.
	StressorsResolved int
	// StressorsDemoted counts the active stressors moved to the resolved
	// history because more than 5 were active (the 5 most severe stay).
	StressorsDemoted int
	// StressorsMerged counts the active stressors moved to the resolved
	// history because another active stressor had the same type after
	// normalisation (the most severe stays).
	StressorsMerged int
	// Trimmed describes each cut made to fit the caps, e.g.
	// "goals: 162 → 100" (see [identity.Identity.Enforce]).
	Trimmed []string
	// Warnings describe what was skipped, clamped or filled in: bad
	// registry lines (with their line numbers), values out of range,
	// missing files and fields.
	Warnings []string
}

// String returns a readable report: one line per agent, then its cuts and
// warnings indented, then the directory's warnings.
func (s *Summary) String() string {
	var b strings.Builder
	for _, a := range s.Agents {
		fmt.Fprintf(&b, "%s (%s): %d opinions, %d questions; goals: %d read (%s), %d kept; stressors: %d active, %d demoted, %d merged, %d resolved\n",
			a.AgentID, a.Name, a.Opinions, a.Questions, a.goalsRead(), a.goalCounts(), a.GoalsKept,
			a.StressorsActive, a.StressorsDemoted, a.StressorsMerged, a.StressorsResolved)
		for _, t := range a.Trimmed {
			fmt.Fprintf(&b, "  trimmed: %s\n", t)
		}
		for _, w := range a.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
	}
	for _, m := range s.Memories {
		fmt.Fprintf(&b, "memories of %s\n", m.String())
		for _, w := range m.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func (a *AgentSummary) goalsRead() int {
	n := 0
	for _, c := range a.Goals {
		n += c
	}
	return n
}

func (a *AgentSummary) goalCounts() string {
	var parts []string
	for _, st := range []identity.GoalStatus{identity.Done, identity.Failed, identity.Abandoned, identity.Active} {
		if n := a.Goals[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Read reads a hollow-agentOS memory directory and converts every agent in
// it to an [identity.AgentState] that passes [identity.AgentState.Validate]. It
// never writes anything, in dir or elsewhere.
//
// The directory holds, for each agent id, any of:
//
//	identity/{agent_id}/profile.json    identity, opinions, questions, narrative
//	identity/{agent_id}/suffering.json  active_stressors, resolved_history, last_escalated
//	goals/{agent_id}/registry.jsonl     one goal per line
//	identity/names.json                 {name: agent_id}
//
// Reads are confined to dir: a symlink that leaves it is an error.
// Missing files and fields, values out of range, bad registry lines and
// over-cap lists are imported as well as they can be and reported in the
// [Summary]. A JSON document that exists but cannot be read at all is an
// error ([*FileError] wrapping [ErrMalformed] or the file-system error),
// so that no agent is imported without part of itself. Errors:
// [ErrNotMemoryDir], [*FileError], or the error opening dir.
func Read(dir string, opts Options) ([]*identity.AgentState, *Summary, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("hollow: %w", err)
	}
	defer root.Close()
	r := &reader{dir: dir, root: root, opts: opts, loc: opts.Location, limits: opts.Limits.WithDefaults()}
	if r.loc == nil {
		r.loc = time.UTC
	}
	if opts.Now != nil {
		r.now = opts.Now().UTC()
	} else {
		r.now = time.Now().UTC()
	}
	return r.read()
}

// Import reads dir with [Read] and saves every agent's state in store,
// then reads the semantic memories with [ReadMemories] and stores them
// when store is also a [memory.Store] (every SDK store is; otherwise a
// warning says they were not imported). It refuses with [ErrExists],
// before saving anything, when an agent, or memories of an agent, are
// already in the store, unless opts.Replace is set. On a save error the
// agents before it are saved; running Import again with Replace finishes
// the job (memories already stored are kept as they are). When store is
// an [identity.Locker] (as every durable store is), Import holds every
// imported agent's lock while it writes, and fails with
// [identity.ErrLocked], saving nothing, while one of them is running. The
// summary is returned whenever Read succeeded.
func Import(ctx context.Context, dir string, store identity.Store, opts Options) (_ *Summary, err error) {
	states, sum, err := Read(dir, opts)
	if err != nil {
		return nil, err
	}
	var mems []AgentMemories
	if !opts.NoMemories {
		var warnings []string
		mems, warnings, err = ReadMemories(dir, opts)
		sum.Warnings = append(sum.Warnings, warnings...)
		if err != nil {
			return sum, err
		}
	}
	for _, m := range mems {
		sum.Memories = append(sum.Memories, m.Summary)
	}
	ms, keepsMemories := store.(memory.Store)
	if len(mems) > 0 && !keepsMemories {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("semantic memory of %d agents not imported: %v", len(mems), errNoMemoryStore))
		mems = nil
	}
	// Hold every agent's lock while writing, so that a running agent's
	// state is never replaced under it (its next save would undo the
	// import).
	if l, ok := store.(identity.Locker); ok {
		ids := make([]string, 0, len(states))
		for _, s := range states {
			ids = append(ids, s.Identity.AgentID)
		}
		for _, id := range append(ids, memoryAgents(mems, states)...) {
			unlock, lerr := l.Lock(id)
			if lerr != nil {
				return sum, fmt.Errorf("hollow: %w", lerr)
			}
			defer func() { err = errors.Join(err, unlock()) }()
		}
	}
	if !opts.Replace {
		for _, s := range states {
			_, err := store.Load(ctx, s.Identity.AgentID)
			if err == nil {
				return sum, fmt.Errorf("%w: %s (set Options.Replace to overwrite it)", ErrExists, s.Identity.AgentID)
			}
			if !errors.Is(err, identity.ErrNotFound) {
				return sum, fmt.Errorf("hollow: check %s in the store: %w", s.Identity.AgentID, err)
			}
		}
		for _, m := range mems {
			c, err := ms.CountMemories(ctx, m.AgentID)
			if err != nil {
				return sum, fmt.Errorf("hollow: check the memories of %s in the store: %w", m.AgentID, err)
			}
			if c.Memories > 0 {
				return sum, fmt.Errorf("%w: %s has %d memories in the store (set Options.Replace to add the missing ones)", ErrExists, m.AgentID, c.Memories)
			}
		}
	}
	for _, s := range states {
		if err := store.Save(ctx, s); err != nil {
			return sum, fmt.Errorf("hollow: save %s: %w", s.Identity.AgentID, err)
		}
	}
	if len(mems) > 0 {
		err := importMemories(ctx, ms, mems, true)
		for i, m := range mems {
			sum.Memories[i].Written = m.Summary.Written
		}
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// reader is one Read in progress.
type reader struct {
	dir    string
	root   *os.Root
	opts   Options
	loc    *time.Location
	now    time.Time
	limits identity.Limits
	notes  notes // directory-level warnings
}

func (r *reader) read() ([]*identity.AgentState, *Summary, error) {
	idDirs, hasIdentity, err := r.subdirs("identity")
	if err != nil {
		return nil, nil, err
	}
	goalDirs, hasGoals, err := r.subdirs("goals")
	if err != nil {
		return nil, nil, err
	}
	if !hasIdentity && !hasGoals {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotMemoryDir, r.dir)
	}

	names := map[string]string{}
	const namesPath = "identity/names.json"
	data, err := r.readFile(namesPath)
	switch {
	case err != nil:
		return nil, nil, err
	case data == nil:
		r.notes.add("%s: missing; names come from the profiles", namesPath)
	default:
		d := r.decoder(&r.notes)
		if names, err = d.names(data, namesPath); err != nil {
			return nil, nil, r.malformed(namesPath, err)
		}
	}

	candidates := map[string]bool{}
	for _, id := range idDirs {
		candidates[id] = true
	}
	for _, id := range goalDirs {
		candidates[id] = true
	}
	for id := range names {
		candidates[id] = true
	}
	ids := make([]string, 0, len(candidates))
	for id := range candidates {
		ids = append(ids, id)
	}
	slices.Sort(ids)

	var states []*identity.AgentState
	sum := &Summary{}
	for _, id := range ids {
		if err := identity.ValidateID(id); err != nil {
			r.notes.add("agent %q skipped: not a valid agent id (1–64 of a-z 0-9 _ -)", id)
			continue
		}
		st, as, err := r.agent(id, names[id])
		if err != nil {
			return nil, nil, err
		}
		if st == nil {
			r.notes.add("identity/%s, goals/%s: skipped: no profile.json, suffering.json or registry.jsonl", id, id)
			continue
		}
		states = append(states, st)
		sum.Agents = append(sum.Agents, as)
	}
	if len(states) == 0 {
		r.notes.add("no agents found")
	}
	sum.Warnings = r.notes.result()
	return states, sum, nil
}

func (r *reader) decoder(n *notes) *decoder { return &decoder{loc: r.loc, now: r.now, notes: n} }

// agent reads one agent. It returns a nil state when the agent has no file
// and no entry in names.json.
func (r *reader) agent(id, nameFromNames string) (*identity.AgentState, AgentSummary, error) {
	as := AgentSummary{AgentID: id, Goals: map[identity.GoalStatus]int{}}
	var n notes
	d := r.decoder(&n)

	profilePath := path.Join("identity", id, "profile.json")
	sufferingPath := path.Join("identity", id, "suffering.json")
	registryPath := path.Join("goals", id, "registry.jsonl")
	profile, err := r.readFile(profilePath)
	if err != nil {
		return nil, as, err
	}
	suff, err := r.readFile(sufferingPath)
	if err != nil {
		return nil, as, err
	}
	registry, err := r.open(registryPath)
	if err != nil {
		return nil, as, err
	}
	if registry != nil {
		defer registry.Close()
	}
	if profile == nil && suff == nil && registry == nil && nameFromNames == "" {
		return nil, as, nil
	}

	var ident identity.Identity
	if profile != nil {
		if ident, err = d.profile(profile, profilePath); err != nil {
			return nil, as, r.malformed(profilePath, err)
		}
	} else if nameFromNames != "" {
		d.warn("%s: missing; identity built from identity/names.json", profilePath)
	} else {
		d.warn("%s: missing; identity is empty", profilePath)
	}
	if ident.AgentID != "" && ident.AgentID != id {
		d.warn("%s: agent_id is %q; imported as %q, its directory name", profilePath, ident.AgentID, id)
	}
	ident.AgentID = id
	switch {
	case ident.Name != "":
		if nameFromNames != "" && nameFromNames != ident.Name {
			d.warn("identity/names.json calls %s %q; using %q from profile.json", id, nameFromNames, ident.Name)
		}
	case nameFromNames != "":
		ident.Name = nameFromNames
	default:
		d.warn("no name in profile.json or identity/names.json; using the agent id %q", id)
		ident.Name = id
	}
	if ident.CreatedAt.IsZero() {
		if profile != nil {
			d.warn("%s: no created_at; set to the import time", profilePath)
		}
		ident.CreatedAt = r.now
	}

	state := &identity.AgentState{Identity: ident, UpdatedAt: r.now}
	if suff != nil {
		s, counts, err := d.suffering(suff, sufferingPath)
		if err != nil {
			return nil, as, r.malformed(sufferingPath, err)
		}
		state.Suffering = s
		as.StressorsDemoted, as.StressorsMerged = counts.demoted, counts.merged
		as.Trimmed = append(as.Trimmed, counts.trimmed...)
	} else {
		d.warn("%s: missing; no stressors imported", sufferingPath)
		state.Suffering.LastEscalated = r.now
	}

	if registry != nil {
		goals, err := d.registry(registry, registryPath, id)
		if err != nil {
			return nil, as, &FileError{Path: filepath.Join(r.dir, filepath.FromSlash(registryPath)), Err: err}
		}
		state.Identity.Goals = goals
		for _, g := range goals {
			as.Goals[g.Status]++
		}
	} else {
		d.warn("%s: missing; no goal history imported", registryPath)
	}
	if err := r.lastOutcome(d, state, id); err != nil {
		return nil, as, err
	}

	as.Trimmed = append(state.Identity.Enforce(r.limits), as.Trimmed...)
	if err := state.Validate(); err != nil {
		// The conversion guarantees a valid state; this is a bug.
		return nil, as, fmt.Errorf("hollow: agent %s: imported state does not validate: %w", id, err)
	}

	as.Name = state.Identity.Name
	as.Opinions = len(state.Identity.Opinions)
	as.Questions = len(state.Identity.Questions)
	as.GoalsKept = len(state.Identity.Goals)
	as.StressorsActive = len(state.Suffering.Active)
	as.StressorsResolved = len(state.Suffering.Resolved)
	as.Warnings = n.result()
	return state, as, nil
}

// lastOutcome reads goals/{id}/last_outcome.txt, the summary the original
// wrote when a goal completed, into the Outcome of the newest DONE goal
// (spec §2 row 13: an imported agent shows its goal's recorded outcome
// text). A
// missing or blank file changes nothing; a file with no DONE goal to hold
// it is skipped with a warning.
func (r *reader) lastOutcome(d *decoder, st *identity.AgentState, id string) error {
	name := path.Join("goals", id, "last_outcome.txt")
	data, err := r.readFile(name)
	if err != nil || data == nil {
		return err
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil
	}
	goals := st.Identity.Goals
	for i := len(goals) - 1; i >= 0; i-- {
		if goals[i].Status == identity.Done {
			goals[i].Outcome = text
			return nil
		}
	}
	d.warn("%s: no completed goal to hold it; skipped", name)
	return nil
}

// subdirs lists the directories inside name (a directory of the memory
// directory), sorted. exists is false when name does not exist.
func (r *reader) subdirs(name string) (dirs []string, exists bool, err error) {
	f, err := r.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, r.fileErr(name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, r.fileErr(name, err)
	}
	if !info.IsDir() {
		return nil, false, r.fileErr(name, fmt.Errorf("%w: not a directory", ErrMalformed))
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, false, r.fileErr(name, err)
	}
	for _, e := range entries {
		switch {
		case e.IsDir():
			dirs = append(dirs, e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			r.notes.add("%s/%s: skipped: a symlink", name, e.Name())
		}
	}
	slices.Sort(dirs)
	return dirs, true, nil
}

// readFile reads the file name (slash-separated, inside the memory
// directory). It returns nil, nil when the file does not exist.
func (r *reader) readFile(name string) ([]byte, error) {
	data, err := atomicfile.ReadFile(r.dir, filepath.FromSlash(name), MaxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, atomicfile.ErrTooLarge), errors.Is(err, atomicfile.ErrNotRegular):
		return nil, r.fileErr(name, fmt.Errorf("%w: %w", ErrMalformed, err))
	case err != nil:
		return nil, r.fileErr(name, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// readGzip reads the gzipped file name with the checks of readFile, and
// returns its decompressed content, at most MaxFileSize bytes (a larger
// one is malformed); nil, nil when the file does not exist.
func (r *reader) readGzip(name string) ([]byte, error) {
	f, err := r.open(name)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, r.fileErr(name, fmt.Errorf("%w: %w", ErrMalformed, err))
	}
	data, err := io.ReadAll(io.LimitReader(zr, MaxFileSize+1))
	switch {
	case err != nil:
		return nil, r.fileErr(name, fmt.Errorf("%w: %w", ErrMalformed, err))
	case int64(len(data)) > MaxFileSize:
		return nil, r.fileErr(name, fmt.Errorf("%w: more than %d bytes once decompressed", ErrMalformed, MaxFileSize))
	}
	return data, nil
}

// open opens the file name for streaming, with the checks of readFile. It
// returns nil, nil when the file does not exist.
func (r *reader) open(name string) (*os.File, error) { return r.open2(name, MaxFileSize) }

// open2 is open with a size limit of limit bytes.
func (r *reader) open2(name string, limit int64) (*os.File, error) {
	f, err := r.root.Open(filepath.FromSlash(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, r.fileErr(name, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, r.fileErr(name, err)
	case !info.Mode().IsRegular():
		f.Close()
		return nil, r.fileErr(name, fmt.Errorf("%w: not a regular file (%s)", ErrMalformed, info.Mode().Type()))
	case info.Size() > limit:
		f.Close()
		return nil, r.fileErr(name, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, info.Size(), limit))
	}
	return f, nil
}

func (r *reader) fileErr(name string, err error) error {
	return &FileError{Path: filepath.Join(r.dir, filepath.FromSlash(name)), Err: err}
}

// malformed reports a document that is not a JSON object.
func (r *reader) malformed(name string, err error) error {
	return r.fileErr(name, fmt.Errorf("%w: %w", ErrMalformed, err))
}
