package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
)

// Options configures a [Store]. The zero value gives the defaults.
type Options struct {
	// MaxBytes is the size limit of one document in bytes; Load refuses a
	// larger file and Save a larger encoding, with
	// [identity.ErrTooLarge]. Zero or negative means
	// [identity.DefaultMaxBytes] (4 MiB).
	MaxBytes int64
	// Now returns the current instant. It stamps AgentState.UpdatedAt on
	// Save and names quarantined files. Nil means [time.Now].
	Now func() time.Time
	// Logger receives the reports of [Store.Lock] (temp files of
	// interrupted saves removed) and of Load (the torn end of a journal
	// ignored). Nil means [slog.Default].
	Logger *slog.Logger
	// JournalRecords is how many saves of an agent are appended to its
	// journal ("{agent_id}.journal", see [Store]) before a save
	// rewrites the document and truncates the journal (a compaction).
	// Zero means [DefaultJournalRecords] (8); negative turns the journal
	// off: every save rewrites the document. The journal on disk then
	// holds at most this many documents of the agent.
	JournalRecords int
	// Siblings are names of files in the directory that are not agent
	// documents though they end in ".json": other stores' documents kept
	// beside the agents', such as a task queue's "tasks.json". List leaves
	// them out.
	Siblings []string
}

// Store is a durable [identity.Store] that keeps one JSON document per
// agent in a directory, named "{agent_id}.json" (permission 0600). Open one
// with [Open]; it is safe for concurrent use. It is also an
// [identity.Locker] ([Store.Lock]) and an [identity.Quarantiner]
// ([Store.Quarantine]).
//
// A document is {"schema_version": 1, "state": {...}} (see
// [identity.SchemaVersion]), compact JSON on one line, which costs half the
// CPU of indented JSON ([IndentDocument] gives the readable form, and
// `existence run -show AGENT` prints it). Indented
// documents written by earlier versions load as well. Documents of older
// versions are migrated on load; documents of newer versions are refused
// with [identity.ErrFutureVersion].
//
// Saves are durable when Save returns, and atomic: after a crash at any
// instant, Load returns the state of a save that returned, or of the one
// in progress, never a mix. Most saves append the whole document, as one
// checksummed line, to the agent's journal, "{agent_id}.json"'s sibling
// "{agent_id}.journal", and fdatasync it: one sync, no temp file, no
// rename. Every Options.JournalRecords saves (and at the first save of
// an agent by a store), a save instead rewrites the document (temp file in
// the same directory, fsync, atomic rename, fsync of the directory) and
// truncates the journal. So "{agent_id}.json" may be a few saves behind:
// read a state with Load (or `trio -show`), not from the file. A journal
// record names the document it follows, so a document rewritten by an
// older version of this package, which knows no journal, makes the journal
// stale, and it is ignored. The torn end of a journal (a save interrupted
// before it returned) is ignored and logged; a journal corrupt before its
// end is reported like a corrupt document. Saves of one agent are
// serialised within the process; use [Store.Lock] to keep other
// processes away.
//
// A document that cannot be used (corrupt, of a future version, too large,
// unreadable) is never overwritten or replaced silently: Save refuses to
// replace it until [Store.Quarantine] has moved it aside.
//
// Reads are confined to the directory: symlinks that leave it, and absolute
// symlinks, are refused, and so is a document larger than
// Options.MaxBytes. Only regular files are opened: a FIFO, socket,
// device or directory in place of a document is refused at once (the file
// is opened with O_NONBLOCK and checked with fstat), never waited on.
//
// The store returns what is stored: it checks [identity.AgentState.Validate]
// but does not apply [identity.Limits]; callers trim with
// [identity.Identity.Enforce] after loading.
type Store struct {
	dir            string
	maxBytes       int64
	journalRecords int // <= 0: no journal
	now            func() time.Time
	log            *slog.Logger
	siblings       []string // file names that are not agent documents

	mu     sync.Mutex
	agents map[string]*agentEntry

	memMu   sync.Mutex
	memLogs map[string]*memLog // the memory logs, by agent (memory.go)
}

// agentEntry is the in-process state of one agent's document.
type agentEntry struct {
	mu sync.Mutex // serialises Load, Save and Quarantine of the agent
	// checked is true once this store has seen the document on disk usable
	// (or absent), by a Load or its own Save.
	checked bool
	// unusable is the error of the last read that found the document
	// unusable; Save refuses while it is set.
	unusable error
	// size is the buffer size in bytes to encode the document into: the
	// last encoding that was not refused as too large, plus a sixteenth.
	// It is only a hint (it follows the agent down as well as up).
	size atomic.Int64

	// The journal, as this store left it (see filestore_journal.go).
	// base is the base of the document this store last wrote (0: none
	// yet, or the journal is in an unknown state: the next save
	// compacts).
	base          uint64
	journalExists bool
	journalSize   int64 // bytes
	records       int   // records appended since the document was written
}

var (
	_ identity.Store       = (*Store)(nil)
	_ identity.Locker      = (*Store)(nil)
	_ identity.Quarantiner = (*Store)(nil)
)

// Open opens the state directory dir, creating it (and its
// parents) with permission 0700 if it does not exist. An existing directory
// keeps its permissions. It returns an error when dir is empty, when dir or
// a parent is not a directory, or when it cannot be created.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("identity: state directory is empty")
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("identity: state directory %s: %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("identity: state directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("identity: state directory %s is a %s, not a directory", dir, atomicfile.DescribeMode(st.Mode()))
	}
	f := &Store{dir: dir, maxBytes: opts.MaxBytes, journalRecords: opts.JournalRecords, now: opts.Now, siblings: slices.Clone(opts.Siblings), agents: map[string]*agentEntry{}}
	if f.maxBytes <= 0 {
		f.maxBytes = identity.DefaultMaxBytes
	}
	if f.journalRecords == 0 {
		f.journalRecords = DefaultJournalRecords
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log = opts.Logger; f.log == nil {
		f.log = slog.Default()
	}
	return f, nil
}

// Dir returns the state directory (cleaned, as given to [Open]).
func (f *Store) Dir() string { return f.dir }

// Path returns the file of agentID's document: Dir()/{agentID}.json. It does
// not validate agentID.
func (f *Store) Path(agentID string) string {
	return filepath.Join(f.dir, agentID+".json")
}

func (f *Store) entry(id string) *agentEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.agents[id]
	if e == nil {
		e = &agentEntry{}
		f.agents[id] = e
	}
	return e
}

// Load implements [identity.Store]: it reads, migrates and validates agentID's
// document and returns a state the caller owns. Limits are not applied.
//
// Errors: [identity.ErrInvalidID]; [identity.ErrNotFound] when there is no
// document; a [*identity.CorruptError] (matching [identity.ErrCorrupt])
// naming the file and the reason for a document that is not valid JSON, has
// wrong types, a NaN or out-of-range severity, another agent's id, or is a
// directory or a symlink leaving the state directory; an error wrapping
// [identity.ErrTooLarge] above Options.MaxBytes; an error wrapping
// [identity.ErrFutureVersion] for a newer schema version. After any of these
// but the first two, Save refuses to replace the document until it is
// quarantined.
func (f *Store) Load(ctx context.Context, agentID string) (*identity.AgentState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := identity.ValidateID(agentID); err != nil {
		return nil, err
	}
	e := f.entry(agentID)
	e.mu.Lock()
	defer e.mu.Unlock()
	s, err := f.read(agentID)
	switch {
	case err == nil, errors.Is(err, identity.ErrNotFound):
		e.checked, e.unusable = true, nil
	default:
		e.checked, e.unusable = false, err
	}
	return s, err
}

// read reads and decodes agentID's state: the document, or the last
// record of the journal that follows it. Only one of them is decoded.
func (f *Store) read(id string) (*identity.AgentState, error) {
	name, path := id+".json", f.Path(id)
	data, err := atomicfile.ReadFile(f.dir, name, f.maxBytes)
	if err != nil {
		return nil, f.readError(id, path, err)
	}
	journaled, err := f.readJournal(id, baseOf(data))
	if err != nil {
		return nil, err
	}
	if journaled != nil {
		return decodeDocument(f.JournalPath(id), id, journaled)
	}
	return decodeDocument(path, id, data)
}

// readError turns an error of atomicfile.ReadFile into one of the store's.
func (f *Store) readError(id, path string, err error) error {
	lst, lerr := os.Lstat(path)
	switch {
	case errors.Is(err, atomicfile.ErrTooLarge):
		size := "over the limit"
		if st, serr := os.Stat(path); serr == nil {
			size = fmt.Sprintf("%d bytes", st.Size())
		}
		return fmt.Errorf("%w: %s is %s, limit %d bytes (Options.MaxBytes)", identity.ErrTooLarge, path, size, f.maxBytes)
	case errors.Is(err, atomicfile.ErrNotRegular):
		what := "not a regular file"
		if st, serr := os.Stat(path); serr == nil { // stat never blocks on a FIFO
			what = "a " + atomicfile.DescribeMode(st.Mode()) + ", not a regular file"
		}
		what += "; refused at once (move it away or quarantine it)"
		return &identity.CorruptError{Path: path, Reason: what, Err: err}
	case lerr == nil && lst.Mode()&fs.ModeSymlink != 0 && !errors.Is(err, fs.ErrNotExist):
		target, _ := os.Readlink(path)
		if !filepath.IsLocal(target) {
			return &identity.CorruptError{Path: path, Reason: fmt.Sprintf("symlink to %q: symlinks that leave the state directory (or are absolute) are refused", target), Err: err}
		}
		return &identity.CorruptError{Path: path, Reason: fmt.Sprintf("symlink to %q cannot be read within the state directory: %v", target, err), Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w for agent %q (%s does not exist)", identity.ErrNotFound, id, path)
	default:
		return fmt.Errorf("identity: reading %s: %w", path, err)
	}
}

// Save implements [identity.Store]: it stores s as agent s.Identity.AgentID's
// state, atomically and durably: appended to the agent's journal, or, at
// the first save of the agent by this store and every
// Options.JournalRecords saves, by rewriting the document (see
// [Store]). The stored copy's UpdatedAt is set to Options.Now(); s
// itself is not modified.
//
// Errors: [identity.ErrInvalidID] or suffering.ErrInvalid when s does not
// validate; [identity.ErrTooLarge] when the encoding exceeds
// Options.MaxBytes; and, when the document or the journal on disk is unusable
// (a Load reported it, or Save found it so before its first write of the
// agent), an error that names the file, says "quarantine it first" and wraps
// the reason ([identity.ErrCorrupt], [identity.ErrFutureVersion],
// [identity.ErrTooLarge] or an I/O error). The files on disk are then
// unchanged. A journal that is not a regular file is refused with an error
// naming it.
func (f *Store) Save(ctx context.Context, s *identity.AgentState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s == nil {
		return errors.New("identity: Save of a nil state")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	id := s.Identity.AgentID
	// A shallow copy: encoding only reads it, and s must not change during
	// Save anyway. A deep Clone of a large agent cost more than encoding.
	stored := *s
	stored.UpdatedAt = f.now().UTC()
	e := f.entry(id)
	buf, err := encodeDocument(&stored, recordPrefixLen, int(e.size.Load()))
	if err != nil {
		return fmt.Errorf("identity: encoding state of %q: %w", id, err)
	}
	if n := len(buf) - recordPrefixLen; int64(n) > f.maxBytes {
		return fmt.Errorf("%w: state of %q encodes to %d bytes, limit %d bytes (Options.MaxBytes); not saved",
			identity.ErrTooLarge, id, n, f.maxBytes)
	}
	e.size.Store(int64(len(buf) + len(buf)/16))

	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.checked && e.unusable == nil {
		// First write of this agent by this store: make sure it does not
		// replace a document nobody has looked at.
		if _, err := f.read(id); err != nil && !errors.Is(err, identity.ErrNotFound) {
			e.unusable = err
		} else {
			e.checked = true
		}
	}
	if e.unusable != nil {
		what := "document " + f.Path(id)
		if ce := (*identity.CorruptError)(nil); errors.As(e.unusable, &ce) && ce.Path == f.JournalPath(id) {
			what = "journal " + ce.Path
		}
		return fmt.Errorf("identity: refusing to overwrite unusable %s; quarantine it first (Store.Quarantine): %w",
			what, e.unusable)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.saveLocked(e, id, buf)
}

// List implements [identity.Store]: it returns the ids of the documents in the
// directory ("{id}.json" for a valid id), sorted. Temp files left by a crash
// (".{id}.json.tmp-*"), quarantined documents and lock files are not
// documents, and neither are Options.Siblings. A listed id may still fail to Load (for example a directory
// named "{id}.json").
func (f *Store) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, fmt.Errorf("identity: listing %s: %w", f.dir, err)
	}
	ids := []string{}
	for _, ent := range entries {
		id, ok := strings.CutSuffix(ent.Name(), ".json")
		if ok && identity.ValidateID(id) == nil && !slices.Contains(f.siblings, ent.Name()) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// quarantineLayout is the UTC timestamp of a quarantine suffix.
const quarantineLayout = "20060102T150405Z"

// Quarantine moves agentID's document aside, to
// "{agentID}.json.corrupt-{UTC time}" (for example
// "scout.json.corrupt-20261121T222300Z", from Options.Now), adding "-2",
// "-3", ... when that name is taken, and moves its journal aside the same
// way ("{agentID}.journal.corrupt-{UTC time}"), since the journal follows
// that document. It returns the document's new path, or the journal's when
// there was only a journal. It moves whatever is there (a file, a
// directory or a symlink) and never deletes anything. Afterwards Save may
// write a new document for agentID.
//
// Errors: [identity.ErrInvalidID]; [identity.ErrNotFound] when there is
// nothing to move.
func (f *Store) Quarantine(agentID string) (newPath string, err error) {
	if err := identity.ValidateID(agentID); err != nil {
		return "", err
	}
	e := f.entry(agentID)
	e.mu.Lock()
	defer e.mu.Unlock()
	suffix := ".corrupt-" + f.now().UTC().Format(quarantineLayout)
	moved := 0
	for _, path := range []string{f.JournalPath(agentID), f.Path(agentID)} {
		p, err := moveAside(path, suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		newPath = p
		moved++
	}
	if moved == 0 {
		return "", fmt.Errorf("%w for agent %q: nothing to quarantine at %s", identity.ErrNotFound, agentID, f.Path(agentID))
	}
	if err := atomicfile.SyncDir(f.dir); err != nil {
		return newPath, fmt.Errorf("identity: quarantine %s: moved to %s but syncing the directory: %w", f.Path(agentID), newPath, err)
	}
	e.checked, e.unusable, e.base = false, nil, 0
	return newPath, nil
}

// moveAside renames path to path+suffix, adding "-2", "-3", ... when that
// name is taken, and returns the new path. It returns an error matching
// [fs.ErrNotExist] when there is nothing at path.
func moveAside(path, suffix string) (string, error) {
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("identity: quarantine %s: %w", path, err)
	}
	base := path + suffix
	newPath := base
	for n := 2; ; n++ {
		_, err := os.Lstat(newPath)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("identity: quarantine %s: %w", path, err)
		}
		newPath = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(path, newPath); err != nil {
		return "", fmt.Errorf("identity: quarantine %s: %w", path, err)
	}
	return newPath, nil
}
