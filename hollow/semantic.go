package hollow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/memory"
)

// DefaultEmbedModel is the embedding model of the original's vectors
// (agents/semantic_memory.py embeds with nomic-embed-text, 768
// dimensions): the model the imported memories' space is named after
// unless Options.EmbedModel says otherwise.
const DefaultEmbedModel = "nomic-embed-text"

// MaxVectorFileSize is the largest embeddings.npy [ReadMemories] accepts,
// in bytes (1 GiB: 350,000 vectors of 768 float32).
const MaxVectorFileSize = 1 << 30

// deletedThought is what the original's forget writes over a memory's
// text instead of deleting its line.
const deletedThought = "[DELETED]"

// AgentMemories is one agent's semantic memory as [ReadMemories] converts
// it: the records to store, and what was read.
type AgentMemories struct {
	// AgentID is the agent's id: the name of its semantic/ directory.
	AgentID string
	// Records are the memories, oldest first, as a [memory.Store] would
	// keep them: one per distinct text.
	Records []memory.Record
	// Summary says what was read and how it was converted.
	Summary MemorySummary
}

// MemorySummary reports the conversion of one agent's semantic memory.
// Lines = Imported + Repeated + Deleted + Skipped.
type MemorySummary struct {
	// AgentID is the agent's id.
	AgentID string
	// Lines is the number of records in metadata.jsonl (blank lines not
	// counted); Rows the vectors in embeddings.npy; Indexed the entries
	// of index.json.
	Lines, Rows, Indexed int
	// Imported is the number of memories: one per distinct text.
	// Embedded of them have a vector (their memory_id is in index.json),
	// Pending have none and are embedded by the memory's backfill once
	// the agent runs with an embedder.
	Imported, Embedded, Pending int
	// Repeated counts the lines whose text an earlier line has: merged
	// into that memory, whose access count each raises by one.
	Repeated int
	// Deleted counts the lines the original's forget marked "[DELETED]":
	// skipped.
	Deleted int
	// Skipped counts the lines that could not be used (not JSON, no
	// memory_id or text); Warnings say which.
	Skipped int
	// Unused counts the rows of embeddings.npy that no line's memory_id
	// points to (index.json entries of lines no longer in
	// metadata.jsonl, or rows no entry names).
	Unused int
	// Space is the imported vectors' space: Options.EmbedModel (default
	// nomic-embed-text) and the rows' length.
	Space memory.Space
	// Written is how many memories [Import] stored; the others were in
	// the store already (Options.Replace).
	Written int
	// Warnings describe what was skipped, cut or filled in.
	Warnings []string
}

// String reads like "scout: 2796 lines → 1967 memories (70 with vectors,
// 1897 pending); 829 repeated, 0 deleted, 0 skipped; 75 rows".
func (s *MemorySummary) String() string {
	return fmt.Sprintf("%s: %d lines → %d memories (%d with vectors, %d pending); %d repeated, %d deleted, %d skipped; %d rows, %d unused",
		s.AgentID, s.Lines, s.Imported, s.Embedded, s.Pending, s.Repeated, s.Deleted, s.Skipped, s.Rows, s.Unused)
}

// semanticLine is one line of metadata.jsonl.
type semanticLine struct {
	MemoryID     string         `json:"memory_id"`
	AgentID      string         `json:"agent_id"`
	Thought      *string        `json:"thought"`
	Metadata     map[string]any `json:"metadata"`
	Timestamp    any            `json:"timestamp"`
	AccessCount  any            `json:"access_count"`
	LastAccessed any            `json:"last_accessed"`
}

// ReadMemories reads the original's semantic memory of every agent under
// dir/semantic/ (memory/semantic/{agent_id}/ in the original) and never
// writes anything. Each agent directory holds:
//
//	metadata.jsonl   one record a line: memory_id, agent_id, thought, metadata, timestamp, access_count, last_accessed (unix seconds)
//	embeddings.npy   float32 (N, 768) nomic-embed-text vectors, not normalised
//	index.json       {memory_id: row of embeddings.npy}
//
// A line's vector is the row index.json names for its memory_id. Row i is
// NOT line i: the original appends a row only when the embedding call
// succeeded, so rows and lines drift apart with every failed call (in the
// real scout sample, 63 of 75 rows belong to another line than their
// number), and the original's own search, which reads row i against line
// i, labels its results with the wrong texts. Lines without an index
// entry are imported pending (as text; the backfill embeds them).
//
// Timestamps and access counts are kept (created = timestamp, last access
// = last_accessed); vectors are normalised; a metadata "important" flag
// marks the memory important (importance 1). Lines whose thought is
// "[DELETED]" (the original's forget) are skipped. An agent holds one
// memory per distinct text, so a repeated text is merged into its first
// memory, raising its access count (and giving it a vector if it had
// none). Every case is counted in the agent's [MemorySummary].
//
// An archived directory may hold metadata.jsonl gzipped, as
// metadata.jsonl.gz; it is read when metadata.jsonl is absent, within the
// same size limit once decompressed.
//
// An agent without metadata.jsonl has no memories; embeddings.npy and
// index.json may be missing (everything is pending). Errors: a
// [*FileError] wrapping [ErrMalformed] for an index.json that is not an
// object of row numbers or an embeddings.npy that is not a 2-D float
// array; the file system's errors. No semantic/ directory: no agents, no
// error. The warnings are about semantic/ as a whole: an agent directory
// skipped because it is a symlink or its name is not an agent id.
func ReadMemories(dir string, opts Options) (_ []AgentMemories, warnings []string, _ error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("hollow: %w", err)
	}
	defer root.Close()
	r := &reader{dir: dir, root: root, opts: opts}
	ids, exists, err := r.subdirs("semantic")
	if err != nil || !exists {
		return nil, r.notes.result(), err
	}
	var out []AgentMemories
	for _, id := range ids {
		if memory.ValidateAgentID(id) != nil {
			r.notes.add("semantic/%s: skipped: not a valid agent id (1–64 of a-z 0-9 _ -)", id)
			continue
		}
		am, ok, err := r.memories(id)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out = append(out, am)
		}
	}
	return out, r.notes.result(), nil
}

// memories converts semantic/{id}/. ok is false when there is no
// metadata.jsonl.
func (r *reader) memories(id string) (AgentMemories, bool, error) {
	base := "semantic/" + id + "/"
	am := AgentMemories{AgentID: id, Summary: MemorySummary{AgentID: id}}
	sum := &am.Summary
	var n notes
	metaName := base + "metadata.jsonl"
	meta, err := r.readFile(metaName)
	if err == nil && meta == nil {
		metaName = base + "metadata.jsonl.gz"
		meta, err = r.readGzip(metaName)
	}
	if err != nil || meta == nil {
		return am, false, err
	}

	index := map[string]int{}
	if data, err := r.readFile(base + "index.json"); err != nil {
		return am, false, err
	} else if data != nil {
		var dups map[string]int
		if index, dups, err = decodeIndex(data); err != nil {
			return am, false, r.malformed(base+"index.json", fmt.Errorf("not an object of row numbers: %w", err))
		}
		for _, id := range slices.Sorted(maps.Keys(dups)) {
			n.add("%sindex.json: memory_id %s is a key %d times; its last row, %d, is used", base, id, dups[id], index[id])
		}
	}
	sum.Indexed = len(index)
	// Rows named by more than one memory id: which of them the vector
	// belongs to cannot be told, so none gets it; they are imported
	// pending and embedded again by the backfill.
	shared := sharedRows(index)
	for _, row := range slices.Sorted(maps.Keys(shared)) {
		n.add("%sindex.json: row %d is named by memory ids %s; they are imported pending", base, row, strings.Join(shared[row], ", "))
	}

	var mat *npyMatrix
	npy, err := r.readLarge(base+"embeddings.npy", MaxVectorFileSize)
	if err != nil {
		return am, false, err
	}
	if npy != nil {
		if mat, err = parseNPY(npy); err != nil {
			return am, false, r.malformed(base+"embeddings.npy", err)
		}
		sum.Rows = mat.rows
	} else if len(index) > 0 {
		n.add("%sembeddings.npy: missing; the %d indexed memories are imported pending", base, len(index))
	}
	model := r.opts.EmbedModel
	if model == "" {
		model = DefaultEmbedModel
	}
	if mat != nil && mat.rows > 0 {
		sum.Space = memory.Space{Model: model, Dimensions: mat.cols}
	}

	now := time.Now().UTC()
	if r.opts.Now != nil {
		now = r.opts.Now().UTC()
	}
	store := memory.NewMemoryStore() // applies the rules of every store: one memory per text
	used := map[int]bool{}
	seenIDs := map[string]int{}
	ctx := context.Background()
	lineNo := 0
	for line := range bytes.SplitSeq(meta, []byte("\n")) {
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		sum.Lines++
		where := fmt.Sprintf("%s:%d", metaName, lineNo)
		var sl semanticLine
		if err := json.Unmarshal(pythonJSON(line), &sl); err != nil {
			sum.Skipped++
			n.add("%s: skipped: not a JSON object: %v", where, err)
			continue
		}
		if sl.Thought == nil || strings.TrimSpace(*sl.Thought) == "" {
			sum.Skipped++
			n.add("%s: skipped: no thought", where)
			continue
		}
		text := *sl.Thought
		if text == deletedThought {
			sum.Deleted++
			continue
		}
		if strings.ContainsRune(text, 0) {
			text = strings.ReplaceAll(text, "\x00", "\uFFFD")
			n.add("%s: NUL characters replaced with U+FFFD", where)
		}
		if c := utf8.RuneCountInString(text); c > memory.MaxTextChars {
			text = runes.Head(text, memory.MaxTextChars)
			n.add("%s: thought of %d characters cut to %d", where, c, memory.MaxTextChars)
		}
		memID := sl.MemoryID
		if memory.ValidateID(memID) != nil {
			sum.Skipped++
			n.add("%s: skipped: memory_id %q is not a usable id", where, memID)
			continue
		}
		recID := memID
		if k := seenIDs[memID]; k > 0 {
			recID = fmt.Sprintf("%s-%d", memID, k+1)
			n.add("%s: memory_id %s repeats an earlier line; imported as %s", where, memID, recID)
		}
		seenIDs[memID]++
		if sl.AgentID != "" && sl.AgentID != id {
			n.add("%s: agent_id is %q; imported for %q, whose directory it is in", where, sl.AgentID, id)
		}
		created, ok := unixSeconds(sl.Timestamp)
		if !ok {
			created = now
			n.add("%s: timestamp missing or not a number; set to the import time", where)
		}
		access, ok := unixSeconds(sl.LastAccessed)
		if !ok {
			access = created
		}
		count := 0
		if f, ok := sl.AccessCount.(float64); ok && f >= 0 && f < math.MaxInt32 {
			count = int(f)
		} else if sl.AccessCount != nil {
			n.add("%s: access_count %v is not a count; 0", where, sl.AccessCount)
		}
		rec := memory.Record{ID: recID, AgentID: id, Text: text, Kind: memory.KindImported,
			Importance: memory.DefaultImportance(memory.KindImported), Created: created, LastAccess: access, AccessCount: count}
		if important, _ := sl.Metadata["important"].(bool); important {
			rec.Important, rec.Importance = true, 1
		}
		if row, ok := index[memID]; ok {
			switch {
			case mat == nil, shared[row] != nil:
			case row < 0 || row >= mat.rows:
				n.add("%s: index.json row %d of %s is outside embeddings.npy (%d rows); imported pending", where, row, memID, mat.rows)
			default:
				if v, err := memory.Normalize(mat.row(row)); err != nil {
					n.add("%s: row %d: %v; imported pending", where, row, err)
				} else {
					rec.Model, rec.Dimensions, rec.Vector = model, mat.cols, v
					used[row] = true
				}
			}
		}
		if _, dup, err := store.AddMemory(ctx, rec); err != nil {
			sum.Skipped++
			n.add("%s: skipped: %v", where, err)
		} else if dup {
			sum.Repeated++
		}
	}
	if mat != nil {
		sum.Unused = mat.rows - len(used)
	}
	recs, err := store.Memories(ctx, id)
	if err != nil {
		return am, false, err
	}
	am.Records = recs
	sum.Imported = len(recs)
	for i := range recs {
		if recs[i].Pending() {
			sum.Pending++
		} else {
			sum.Embedded++
		}
	}
	sum.Warnings = n.result()
	return am, true, nil
}

// decodeIndex decodes index.json, an object of memory_id → row number,
// as json.Unmarshal would into a map (the last of repeated keys wins),
// and returns the keys that repeat with how many times each is a key.
func decodeIndex(data []byte) (index, dups map[string]int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	index, dups = map[string]int{}, map[string]int{}
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, nil, err
	case tok == nil: // null, as json.Unmarshal takes it: no entries
		return index, dups, nil
	case tok != json.Delim('{'):
		return nil, nil, fmt.Errorf("a JSON %T, not an object", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string) // an object's keys are strings
		var row int
		if err := dec.Decode(&row); err != nil {
			return nil, nil, fmt.Errorf("memory_id %q: %w", key, err)
		}
		if _, ok := index[key]; ok {
			dups[key] = max(dups[key], 1) + 1
		}
		index[key] = row
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the object")
	}
	return index, dups, nil
}

// sharedRows returns the rows index names more than once, each with its
// memory ids, sorted.
func sharedRows(index map[string]int) map[int][]string {
	byRow := map[int][]string{}
	for id, row := range index {
		byRow[row] = append(byRow[row], id)
	}
	for row, ids := range byRow {
		if len(ids) < 2 {
			delete(byRow, row)
			continue
		}
		slices.Sort(ids)
	}
	return byRow
}

// unixSeconds reads a unix time in seconds (a JSON number, maybe with a
// fraction), to the microsecond, UTC.
func unixSeconds(v any) (time.Time, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || f <= 0 || f > 1e11 {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(math.Round(f * 1e6))).UTC(), true
}

// readLarge reads name with a size limit of its own; nil, nil when it
// does not exist.
func (r *reader) readLarge(name string, limit int64) ([]byte, error) {
	f, err := r.open2(name, limit)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, r.fileErr(name, err)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, r.fileErr(name, err)
	}
	return data, nil
}

// ImportMemories stores the memories [ReadMemories] read in store, and
// sets each agent's Summary.Written. It refuses with [ErrExists], before
// storing anything, when an agent already has memories in the store,
// unless replace is set; then memories whose id the store has are left as
// they are (importing twice changes nothing). When store is an
// [identity.Locker] it holds every agent's lock while it writes, and
// fails with [identity.ErrLocked] while one of them runs. [Import] does
// the same after saving the states.
func ImportMemories(ctx context.Context, store memory.Store, agents []AgentMemories, replace bool) (err error) {
	if l, ok := store.(identity.Locker); ok {
		for _, a := range agents {
			unlock, lerr := l.Lock(a.AgentID)
			if lerr != nil {
				return fmt.Errorf("hollow: %w", lerr)
			}
			defer func() { err = errors.Join(err, unlock()) }()
		}
	}
	if !replace {
		for _, a := range agents {
			c, err := store.CountMemories(ctx, a.AgentID)
			if err != nil {
				return fmt.Errorf("hollow: check the memories of %s in the store: %w", a.AgentID, err)
			}
			if c.Memories > 0 {
				return fmt.Errorf("%w: %s has %d memories in the store (replace adds the missing ones)", ErrExists, a.AgentID, c.Memories)
			}
		}
	}
	return importMemories(ctx, store, agents, true)
}

// importMemories stores each agent's memories in ms; with replace,
// memories whose id the store has are left as they are.
func importMemories(ctx context.Context, ms memory.Store, agents []AgentMemories, replace bool) error {
	for i := range agents {
		am := &agents[i]
		have, err := ms.Memories(ctx, am.AgentID)
		if err != nil {
			return fmt.Errorf("hollow: reading the memories of %s in the store: %w", am.AgentID, err)
		}
		if len(have) > 0 && !replace {
			return fmt.Errorf("%w: %s has %d memories in the store (set Options.Replace to add the missing ones)", ErrExists, am.AgentID, len(have))
		}
		known := make(map[string]bool, len(have))
		for _, r := range have {
			known[r.ID] = true
		}
		for _, r := range am.Records {
			if known[r.ID] {
				continue
			}
			if _, _, err := ms.AddMemory(ctx, r); err != nil {
				return fmt.Errorf("hollow: storing memory %s of %s: %w", r.ID, am.AgentID, err)
			}
			am.Summary.Written++
		}
	}
	return nil
}

// memoryAgents returns the agent ids of agents, sorted, without those in
// skip.
func memoryAgents(agents []AgentMemories, skip []*identity.AgentState) []string {
	var out []string
	for _, a := range agents {
		if !slices.ContainsFunc(skip, func(s *identity.AgentState) bool { return s.Identity.AgentID == a.AgentID }) {
			out = append(out, a.AgentID)
		}
	}
	return out
}

var errNoMemoryStore = errors.New("the store keeps no memories (not a memory.Store)")
