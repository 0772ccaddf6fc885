package filestore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
	"github.com/existence-loop/sdk/memory"
)

// The long-term memories of agent "scout" are kept in
// Dir()/memories/scout.jsonl (permission 0600): a log of the writes of
// [memory.Store], one line each,
//
//	<crc32c, 8 hex> {"op":"add","rec":{...}}
//	<crc32c, 8 hex> {"op":"update","recs":[{"id":...,"kind":...,"importance":...,...}]}
//	<crc32c, 8 hex> {"op":"vectors","recs":[{"id":...,"model":...,"dimensions":768,"vector":"<base64>"}]}
//	<crc32c, 8 hex> {"op":"delete","ids":[...]}
//
// where the CRC-32C (Castagnoli) covers the JSON after the space, and a
// vector is its little-endian float32 bytes in standard base64
// ([memory.EncodeVector]). Replaying the lines in order, with the rules of
// memory.Store (an "add" of a known text raises the access count), gives
// the memories. A write appends one line and fdatasyncs the file. When the
// log holds more than twice as many lines as memories (and at least
// [memoryCompactMin]), a write rewrites it with one "add" per memory
// (atomically: temp file, fsync, rename, directory fsync). A torn last
// line (a write interrupted before it returned) is ignored, logged and cut
// off before the next append; a bad line before the end is corruption,
// named in a [*identity.CorruptError] with the file and the line, and the
// agent's memories are refused until a person repairs or moves the file.
//
// The store keeps, per agent, an index of the memories without their
// vectors (the [memory.Memory] above it caches the vectors), and notices
// a log that another process wrote by its size. Memories are written by
// the process that holds the agent's lock ([Store.Lock]).
const memoryDir = "memories"

// memoryCompactMin is the fewest lines a log has before a write compacts
// it.
const memoryCompactMin = 256

// fileRec is a record on a memory log line; vectors in base64.
type fileRec struct {
	ID          string      `json:"id"`
	Text        string      `json:"text,omitempty"`
	Kind        memory.Kind `json:"kind,omitempty"`
	Importance  float64     `json:"importance,omitempty"`
	Important   bool        `json:"important,omitempty"`
	Created     time.Time   `json:"created,omitzero"`
	LastAccess  time.Time   `json:"last_access,omitzero"`
	AccessCount int         `json:"access_count,omitempty"`
	Model       string      `json:"model,omitempty"`
	Dimensions  int         `json:"dimensions,omitempty"`
	Vector      string      `json:"vector,omitempty"`
	Fact        string      `json:"fact,omitempty"`
	// SupersededBy is written by every "update" (empty: current).
	SupersededBy string `json:"superseded_by,omitempty"`
}

// fileOp is one memory log line.
type fileOp struct {
	Op   string    `json:"op"`
	Rec  *fileRec  `json:"rec,omitempty"`
	Recs []fileRec `json:"recs,omitempty"`
	IDs  []string  `json:"ids,omitempty"`
}

func toFile(r memory.Record) fileRec {
	return fileRec{ID: r.ID, Text: r.Text, Kind: r.Kind, Importance: r.Importance, Important: r.Important,
		Created: r.Created, LastAccess: r.LastAccess, AccessCount: r.AccessCount, Model: r.Model, Dimensions: r.Dimensions,
		Vector: base64.StdEncoding.EncodeToString(memory.EncodeVector(r.Vector)), Fact: r.Fact, SupersededBy: r.SupersededBy}
}

func (f fileRec) record(agentID string) (memory.Record, error) {
	r := memory.Record{ID: f.ID, AgentID: agentID, Text: f.Text, Kind: f.Kind, Importance: f.Importance, Important: f.Important,
		Created: f.Created.UTC(), LastAccess: f.LastAccess.UTC(), AccessCount: f.AccessCount, Model: f.Model, Dimensions: f.Dimensions,
		Fact: f.Fact, SupersededBy: f.SupersededBy}
	if f.Vector != "" {
		b, err := base64.StdEncoding.DecodeString(f.Vector)
		if err != nil {
			return r, fmt.Errorf("memory %s: vector: %w", f.ID, err)
		}
		if r.Vector, err = memory.DecodeVector(b); err != nil {
			return r, fmt.Errorf("memory %s: %w", f.ID, err)
		}
	}
	return r, nil
}

// memLog is the in-process state of one agent's memory log.
type memLog struct {
	mu     sync.Mutex
	loaded bool
	bad    error // the log is corrupt: every operation refuses
	size   int64 // the log's size in bytes after the last line this store read or wrote
	good   int64 // the end of the last whole line (size minus a torn tail)
	lines  int
	index  map[string]*memEntry
	byText map[string]string
	// lex is the BM25 index of the texts of index, built on the first
	// search after a replay and kept up to date by the writes.
	lex *memory.Index
}

// memEntry is one memory in a log's index: the record without its
// vector, and where its vector is.
type memEntry struct {
	rec memory.Record // Vector is nil
	vec lineRef       // the line that last set the vector; zero when pending
}

// lineRef locates one log line: its offset and length in bytes.
type lineRef struct{ off, n int64 }

// memLog returns agentID's log state.
func (f *Store) memLog(agentID string) *memLog {
	f.memMu.Lock()
	defer f.memMu.Unlock()
	if f.memLogs == nil {
		f.memLogs = map[string]*memLog{}
	}
	l := f.memLogs[agentID]
	if l == nil {
		l = &memLog{}
		f.memLogs[agentID] = l
	}
	return l
}

// MemoryPath returns the file of agentID's memories:
// Dir()/memories/{agentID}.jsonl. It does not validate agentID.
func (f *Store) MemoryPath(agentID string) string {
	return filepath.Join(f.dir, memoryDir, agentID+".jsonl")
}

var _ memory.Store = (*Store)(nil)

// replay reads agentID's log, rebuilds l's index, and returns the
// memories with their vectors when withVectors. l.mu is held.
func (f *Store) replay(agentID string, l *memLog, withVectors bool) (map[string]*memory.Record, error) {
	path := f.MemoryPath(agentID)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return nil, fmt.Errorf("identity: reading %s: %w", path, err)
	}
	rp := replayer{agentID: agentID, withVectors: withVectors, index: map[string]*memEntry{}, byText: map[string]string{}}
	if withVectors {
		rp.vecs = map[string][]float32{}
	}
	lines, off := 0, 0
	for off < len(data) {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			// The last line, torn: a write that never returned.
			f.log.Warn("identity: ignored the torn end of a memory log (a write interrupted before it returned)",
				"path", path, "bytes", len(data)-off)
			break
		}
		line := data[off : off+end]
		op, err := parseMemoryLine(line)
		if err == nil {
			err = rp.apply(op, lineRef{int64(off), int64(end + 1)})
		}
		if err != nil {
			cerr := &identity.CorruptError{Kind: "memory log", Path: path, Reason: fmt.Sprintf("line %d: %v", lines+1, err), Err: err}
			l.bad = cerr
			return nil, cerr
		}
		lines++
		off += end + 1
	}
	l.size, l.good, l.lines, l.loaded = int64(len(data)), int64(off), lines, true
	if !sameKeys(l.index, rp.index) {
		l.lex = nil
	}
	l.index, l.byText = rp.index, rp.byText
	if !withVectors {
		return nil, nil
	}
	out := make(map[string]*memory.Record, len(rp.index))
	for id, e := range rp.index {
		r := e.rec
		r.Vector = rp.vecs[id]
		out[id] = &r
	}
	return out, nil
}

// replayer applies log lines to an index.
type replayer struct {
	agentID     string
	withVectors bool
	index       map[string]*memEntry
	byText      map[string]string
	vecs        map[string][]float32 // with vectors only
}

// parseMemoryLine checks a line's checksum and decodes its operation.
func parseMemoryLine(line []byte) (fileOp, error) {
	var op fileOp
	if len(line) < 10 || line[8] != ' ' {
		return op, errors.New("not a checksummed memory log line")
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return op, errors.New("the checksum is not hex")
	}
	body := line[9:]
	if crc32.Checksum(body, castagnoli) != uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) {
		return op, errors.New("the crc32c does not match")
	}
	if err := json.Unmarshal(body, &op); err != nil {
		return op, err
	}
	return op, nil
}

// apply replays one operation, found at ref.
func (rp *replayer) apply(op fileOp, ref lineRef) error {
	switch op.Op {
	case "add":
		if op.Rec == nil {
			return errors.New(`an "add" without a record`)
		}
		r, err := op.Rec.record(rp.agentID)
		if err != nil {
			return err
		}
		if err := r.Validate(); err != nil {
			return err
		}
		if id, ok := rp.byText[r.Text]; ok {
			e := rp.index[id]
			old := e.rec
			if e.vec != (lineRef{}) {
				old.Vector = hasVector
			}
			m := memory.Merge(old, r)
			if old.Pending() && !m.Pending() {
				e.vec = ref
				rp.setVector(id, r.Vector)
			}
			m.Vector = nil
			e.rec = m
			return nil
		}
		if _, taken := rp.index[r.ID]; taken {
			return fmt.Errorf("memory %s is added twice with different texts", r.ID)
		}
		e := &memEntry{rec: r}
		if !r.Pending() {
			e.vec = ref
			rp.setVector(r.ID, r.Vector)
		}
		e.rec.Vector = nil
		rp.index[r.ID], rp.byText[r.Text] = e, r.ID
	case "update":
		for _, u := range op.Recs {
			if e := rp.index[u.ID]; e != nil {
				e.rec.Kind, e.rec.Importance, e.rec.Important, e.rec.LastAccess, e.rec.AccessCount = u.Kind, u.Importance, u.Important, u.LastAccess.UTC(), u.AccessCount
				e.rec.SupersededBy = u.SupersededBy
			}
		}
	case "vectors":
		for _, u := range op.Recs {
			e := rp.index[u.ID]
			if e == nil {
				continue
			}
			v, err := u.record(rp.agentID)
			if err != nil {
				return err
			}
			e.rec.Model, e.rec.Dimensions, e.vec = v.Model, v.Dimensions, lineRef{}
			if !v.Pending() {
				e.vec = ref
			}
			rp.setVector(u.ID, v.Vector)
		}
	case "delete":
		for _, id := range op.IDs {
			if e := rp.index[id]; e != nil {
				delete(rp.byText, e.rec.Text)
				delete(rp.index, id)
				rp.setVector(id, nil)
			}
		}
	default:
		return fmt.Errorf("unknown operation %q", op.Op)
	}
	return nil
}

func (rp *replayer) setVector(id string, v []float32) {
	if !rp.withVectors {
		return
	}
	if v == nil {
		delete(rp.vecs, id)
		return
	}
	rp.vecs[id] = v
}

// hasVector stands for a vector the index does not hold, so that
// memory.Merge sees a memory that has one.
var hasVector = []float32{0}

// vector reads the vector of e back from its log line. l.mu is held.
func (f *Store) vector(agentID string, e *memEntry) ([]float32, error) {
	if e.vec == (lineRef{}) {
		return nil, nil
	}
	path := f.MemoryPath(agentID)
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("identity: reading %s: %w", path, err)
	}
	defer file.Close()
	line := make([]byte, e.vec.n)
	if _, err := file.ReadAt(line, e.vec.off); err != nil {
		return nil, fmt.Errorf("identity: reading %s: %w", path, err)
	}
	op, err := parseMemoryLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		return nil, &identity.CorruptError{Kind: "memory log", Path: path, Reason: fmt.Sprintf("at byte %d: %v", e.vec.off, err), Err: err}
	}
	recs := op.Recs
	if op.Rec != nil {
		recs = append(recs, *op.Rec)
	}
	for _, fr := range recs {
		if fr.ID == e.rec.ID || fr.Text == e.rec.Text {
			r, err := fr.record(agentID)
			if err != nil {
				return nil, err
			}
			return r.Vector, nil
		}
	}
	return nil, fmt.Errorf("identity: %s: the line at byte %d holds no vector of memory %s", path, e.vec.off, e.rec.ID)
}

// ready loads l's index when needed: on first use, and when another
// process changed the log since. l.mu is held.
func (f *Store) ready(agentID string, l *memLog) error {
	if l.bad != nil {
		return l.bad
	}
	if l.loaded {
		st, err := os.Stat(f.MemoryPath(agentID))
		switch {
		case errors.Is(err, fs.ErrNotExist) && l.size == 0:
			return nil
		case err == nil && st.Size() == l.size:
			return nil
		}
	}
	_, err := f.replay(agentID, l, false)
	return err
}

// appendOp appends op to agentID's log and fdatasyncs it, and returns
// where the line went. l.mu is held.
func (f *Store) appendOp(agentID string, l *memLog, op fileOp) (lineRef, error) {
	body, err := json.Marshal(op)
	if err != nil {
		return lineRef{}, fmt.Errorf("identity: encoding a memory operation of %s: %w", agentID, err)
	}
	line := make([]byte, 0, len(body)+10)
	line = appendHex(line, uint64(crc32.Checksum(body, castagnoli)), 8)
	line = append(line, ' ')
	line = append(append(line, body...), '\n')
	dir := filepath.Join(f.dir, memoryDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return lineRef{}, fmt.Errorf("identity: memory directory %s: %w", dir, err)
	}
	file, _, err := atomicfile.OpenRegular(dir, agentID+".jsonl", os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return lineRef{}, fmt.Errorf("identity: opening %s: %w", f.MemoryPath(agentID), err)
	}
	defer file.Close()
	if l.good != l.size {
		// Cut off a torn tail before appending after it.
		if err := file.Truncate(l.good); err != nil {
			return lineRef{}, fmt.Errorf("identity: cutting the torn end of %s: %w", f.MemoryPath(agentID), err)
		}
		l.size = l.good
	}
	ref := lineRef{l.size, int64(len(line))}
	if _, err := file.WriteAt(line, l.size); err != nil {
		return lineRef{}, fmt.Errorf("identity: writing %s: %w", f.MemoryPath(agentID), err)
	}
	if err := atomicfile.Datasync(file); err != nil {
		return lineRef{}, fmt.Errorf("identity: syncing %s: %w", f.MemoryPath(agentID), err)
	}
	if l.size == 0 {
		if err := atomicfile.SyncDir(dir); err != nil {
			return lineRef{}, err
		}
	}
	l.size += ref.n
	l.good = l.size
	l.lines++
	return ref, nil
}

// maybeCompact rewrites agentID's log with one "add" per memory when it
// holds more than twice as many lines as memories (and at least
// memoryCompactMin), then reindexes it. l.mu is held.
func (f *Store) maybeCompact(agentID string, l *memLog) error {
	if l.lines < memoryCompactMin || l.lines <= 2*len(l.index) {
		return nil
	}
	recs, err := f.replay(agentID, l, true)
	if err != nil {
		return err
	}
	sorted := make([]memory.Record, 0, len(recs))
	for _, r := range recs {
		sorted = append(sorted, *r)
	}
	slices.SortFunc(sorted, func(a, b memory.Record) int { return memory.CompareRecords(&a, &b) })
	var buf bytes.Buffer
	for _, r := range sorted {
		fr := toFile(r)
		body, err := json.Marshal(fileOp{Op: "add", Rec: &fr})
		if err != nil {
			return fmt.Errorf("identity: encoding memory %s of %s: %w", r.ID, agentID, err)
		}
		buf.Write(appendHex(nil, uint64(crc32.Checksum(body, castagnoli)), 8))
		buf.WriteByte(' ')
		buf.Write(body)
		buf.WriteByte('\n')
	}
	if err := atomicfile.WriteFile(filepath.Join(f.dir, memoryDir), agentID+".jsonl", buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("identity: compacting %s: %w", f.MemoryPath(agentID), err)
	}
	_, err = f.replay(agentID, l, false)
	return err
}

// memBegin checks ctx and agentID and returns the agent's log, locked
// and ready; the caller unlocks l.mu.
func (f *Store) memBegin(ctx context.Context, agentID string) (*memLog, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := memory.ValidateAgentID(agentID); err != nil {
		return nil, err
	}
	l := f.memLog(agentID)
	l.mu.Lock()
	if err := f.ready(agentID, l); err != nil {
		l.mu.Unlock()
		return nil, err
	}
	return l, nil
}

// AddMemory implements [memory.Store]: one "add" line.
func (f *Store) AddMemory(ctx context.Context, r memory.Record) (memory.Record, bool, error) {
	if err := r.Validate(); err != nil {
		return memory.Record{}, false, err
	}
	r = r.Clone()
	r.Created, r.LastAccess = r.Created.UTC(), r.LastAccess.UTC()
	l, err := f.memBegin(ctx, r.AgentID)
	if err != nil {
		return memory.Record{}, false, err
	}
	defer l.mu.Unlock()
	id, dup := l.byText[r.Text]
	if !dup {
		if _, taken := l.index[r.ID]; taken {
			return memory.Record{}, false, fmt.Errorf("%w: agent %s already has a memory %s with another text", memory.ErrInvalid, r.AgentID, r.ID)
		}
	}
	fr := toFile(r)
	ref, err := f.appendOp(r.AgentID, l, fileOp{Op: "add", Rec: &fr})
	if err != nil {
		return memory.Record{}, false, err
	}
	var out memory.Record
	if !dup {
		e := &memEntry{rec: r}
		e.rec.Vector = nil
		if !r.Pending() {
			e.vec = ref
		}
		l.index[r.ID], l.byText[r.Text] = e, r.ID
		if l.lex != nil {
			l.lex.Add(r.ID, r.Text)
		}
		out = r
	} else {
		e := l.index[id]
		old := e.rec
		if e.vec != (lineRef{}) {
			if old.Vector, err = f.vector(r.AgentID, e); err != nil {
				return memory.Record{}, false, err
			}
		}
		out = memory.Merge(old, r)
		if old.Pending() && !out.Pending() {
			e.vec = ref
		}
		e.rec = out
		e.rec.Vector = nil
	}
	return out, dup, f.maybeCompact(r.AgentID, l)
}

// UpdateMemories implements [memory.Store]: one "update" line.
func (f *Store) UpdateMemories(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckUpdate(agentID, &recs[i]); err != nil {
			return err
		}
	}
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	op := fileOp{Op: "update"}
	for _, r := range recs {
		if l.index[r.ID] != nil {
			op.Recs = append(op.Recs, fileRec{ID: r.ID, Kind: r.Kind, Importance: r.Importance, Important: r.Important,
				LastAccess: r.LastAccess.UTC(), AccessCount: r.AccessCount, SupersededBy: r.SupersededBy})
		}
	}
	if len(op.Recs) == 0 {
		return nil
	}
	if _, err := f.appendOp(agentID, l, op); err != nil {
		return err
	}
	for _, u := range op.Recs {
		e := l.index[u.ID]
		e.rec.Kind, e.rec.Importance, e.rec.Important, e.rec.LastAccess, e.rec.AccessCount = u.Kind, u.Importance, u.Important, u.LastAccess, u.AccessCount
		e.rec.SupersededBy = u.SupersededBy
	}
	return f.maybeCompact(agentID, l)
}

// SetVectors implements [memory.Store]: one "vectors" line.
func (f *Store) SetVectors(ctx context.Context, agentID string, recs []memory.Record) error {
	for i := range recs {
		if err := memory.CheckVector(agentID, &recs[i]); err != nil {
			return err
		}
	}
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	op := fileOp{Op: "vectors"}
	for _, r := range recs {
		if l.index[r.ID] != nil {
			fr := toFile(memory.Record{ID: r.ID, Model: r.Model, Dimensions: r.Dimensions, Vector: r.Vector})
			op.Recs = append(op.Recs, fileRec{ID: fr.ID, Model: fr.Model, Dimensions: fr.Dimensions, Vector: fr.Vector})
		}
	}
	if len(op.Recs) == 0 {
		return nil
	}
	ref, err := f.appendOp(agentID, l, op)
	if err != nil {
		return err
	}
	for _, u := range op.Recs {
		e := l.index[u.ID]
		e.rec.Model, e.rec.Dimensions, e.vec = u.Model, u.Dimensions, lineRef{}
		if u.Vector != "" {
			e.vec = ref
		}
	}
	return f.maybeCompact(agentID, l)
}

// DeleteMemories implements [memory.Store]: one "delete" line.
func (f *Store) DeleteMemories(ctx context.Context, agentID string, ids []string) (int, error) {
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return 0, err
	}
	defer l.mu.Unlock()
	var gone []string
	for _, id := range ids {
		if l.index[id] != nil && !slices.Contains(gone, id) {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	if _, err := f.appendOp(agentID, l, fileOp{Op: "delete", IDs: gone}); err != nil {
		return 0, err
	}
	for _, id := range gone {
		delete(l.byText, l.index[id].rec.Text)
		delete(l.index, id)
		if l.lex != nil {
			l.lex.Remove(id)
		}
	}
	return len(gone), f.maybeCompact(agentID, l)
}

// Memories implements [memory.Store]: the log replayed.
func (f *Store) Memories(ctx context.Context, agentID string) ([]memory.Record, error) {
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	recs, err := f.replay(agentID, l, true)
	if err != nil {
		return nil, err
	}
	out := make([]memory.Record, 0, len(recs))
	for _, r := range recs {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b memory.Record) int { return memory.CompareRecords(&a, &b) })
	return out, nil
}

// CountMemories implements [memory.Store], from the index.
func (f *Store) CountMemories(ctx context.Context, agentID string) (memory.Counts, error) {
	l, err := f.memBegin(ctx, agentID)
	if err != nil {
		return memory.Counts{}, err
	}
	defer l.mu.Unlock()
	recs := make([]memory.Record, 0, len(l.index))
	for _, e := range l.index {
		c := memory.Record{Model: e.rec.Model, Dimensions: e.rec.Dimensions}
		if e.vec != (lineRef{}) {
			c.Vector = hasVector
		}
		recs = append(recs, c)
	}
	return memory.CountRecords(recs), nil
}
