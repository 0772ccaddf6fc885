package filestore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/atomicfile"
)

// DefaultJournalRecords is the default of Options.JournalRecords: how
// many saves of an agent the [Store] appends to its journal before it
// rewrites the document.
const DefaultJournalRecords = 8

// The journal of agent "scout" is "scout.journal", beside "scout.json". It
// is JSON Lines: each line is one record,
//
//	{"base":"<16 hex>","crc32c":"<8 hex>","document":{"schema_version":1,"state":{...}}}
//
// where document is the whole state document as a save would write it, crc32c
// is the CRC-32C (Castagnoli) of base's 16 hex digits followed by document's
// bytes as they appear on the line, and base names the document file the
// record follows: the CRC-32C of its bytes in the high 32 bits and its length
// in bytes (mod 2^32) in the low 32. The state is the last record whose base
// names the document on disk; without one, it is the document.
//
// A save appends one record and fdatasyncs the journal: no temp file, no
// rename and no directory fsync, which is what made a save of a large
// agent cost two fsyncs. Every Options.JournalRecords
// appends, and on the first save of an agent by a store, the save is a
// compaction instead: the document is rewritten atomically (temp file,
// fsync, rename, directory fsync) and the journal is truncated. A crash
// between the two leaves records whose base no longer matches: they are
// stale and ignored, and the next compaction truncates them.
const (
	recordBase     = `{"base":"`
	recordCRC      = `","crc32c":"`
	recordDocument = `","document":`
	// recordPrefixLen is the length of a record up to its document.
	recordPrefixLen = len(recordBase) + 16 + len(recordCRC) + 8 + len(recordDocument)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// journalName returns the file name of agent id's journal.
func journalName(id string) string { return id + ".journal" }

// JournalPath returns the file of agentID's journal: Dir()/{agentID}.journal
// (see [Options.JournalRecords]). It does not validate agentID.
func (f *Store) JournalPath(agentID string) string {
	return filepath.Join(f.dir, journalName(agentID))
}

// baseOf returns the base of a document file's bytes: its CRC-32C in the
// high 32 bits and its length in the low 32.
func baseOf(doc []byte) uint64 {
	return uint64(crc32.Checksum(doc, castagnoli))<<32 | uint64(uint32(len(doc)))
}

// sealRecord turns buf, recordPrefixLen reserved bytes followed by a
// document ending in a newline, into a journal record following base, in
// place, and returns it.
func sealRecord(buf []byte, base uint64) []byte {
	doc := buf[recordPrefixLen : len(buf)-1] // without its newline
	p := buf[:0]
	p = append(p, recordBase...)
	p = appendHex(p, base, 16)
	crc := recordCRC32C(p[len(recordBase):], doc)
	p = append(p, recordCRC...)
	p = appendHex(p, uint64(crc), 8)
	_ = append(p, recordDocument...)
	buf[len(buf)-1] = '}'
	return append(buf, '\n')
}

// recordCRC32C returns a record's checksum: the CRC-32C of its base's hex
// digits and its document.
func recordCRC32C(baseHex, doc []byte) uint32 {
	return crc32.Update(crc32.Checksum(baseHex, castagnoli), castagnoli, doc)
}

// appendHex appends v as n lower-case hex digits, zero-padded.
func appendHex(dst []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, "0123456789abcdef"[v>>(4*uint(i))&0xf])
	}
	return dst
}

// parseRecord reads one journal line (without its newline) and returns the
// base it follows and its document. ok is false when the line is not a
// whole record whose checksum matches: a torn write.
func parseRecord(line []byte) (base uint64, doc []byte, ok bool) {
	if len(line) < recordPrefixLen+2 || line[len(line)-1] != '}' ||
		string(line[:len(recordBase)]) != recordBase {
		return 0, nil, false
	}
	rest := line[len(recordBase):]
	baseHex := rest[:16]
	b, ok1 := parseHex(baseHex)
	rest = rest[16:]
	if string(rest[:len(recordCRC)]) != recordCRC {
		return 0, nil, false
	}
	rest = rest[len(recordCRC):]
	crc, ok2 := parseHex(rest[:8])
	rest = rest[8:]
	if !ok1 || !ok2 || string(rest[:len(recordDocument)]) != recordDocument {
		return 0, nil, false
	}
	doc = line[recordPrefixLen : len(line)-1]
	if uint64(recordCRC32C(baseHex, doc)) != crc {
		return 0, nil, false
	}
	return b, doc, true
}

// parseHex parses lower-case hex digits.
func parseHex(b []byte) (uint64, bool) {
	var dst [8]byte
	if len(b) > 16 || len(b)%2 != 0 || bytes.ContainsAny(b, "ABCDEF") {
		return 0, false
	}
	n, err := hex.Decode(dst[:], b)
	if err != nil {
		return 0, false
	}
	var v uint64
	for _, c := range dst[:n] {
		v = v<<8 | uint64(c)
	}
	return v, true
}

// journalTail is what the end of a journal says.
type journalTail struct {
	doc  []byte // the document of the last whole record; nil when none
	base uint64 // the base that record follows
	// torn is the number of bytes after that record that are not a whole
	// record: the end of a save that was interrupted (never acknowledged).
	torn int
}

// lastRecord finds the last whole record of data, the end of a journal
// (tail is true when data does not start at the journal's start). A line
// that is not a whole record is a torn write when nothing but at most one
// line and a partial line follow it; an earlier one, or a journal whose end
// has two bad lines, is corruption, reported as an error.
func lastRecord(data []byte, tail bool) (journalTail, error) {
	var t journalTail
	end := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		t.torn = len(data) - (i + 1) // a partial line: the write stopped mid-record
		end = i + 1
	}
	for bad := 0; end > 0; bad++ {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		if start == 0 && tail {
			return t, errors.New("its last record is larger than the part read (Options.MaxBytes)")
		}
		base, doc, ok := parseRecord(data[start : end-1])
		if ok {
			t.doc, t.base = doc, base
			return t, nil
		}
		if bad > 0 || t.torn > 0 {
			return t, fmt.Errorf("the record ending at byte %d is not a whole record with a matching crc32c", end)
		}
		t.torn += end - start
		end = start
	}
	return t, nil
}

// readJournal returns the document of agent id's journal that follows the
// document file whose base is base, or nil when the journal is missing,
// empty or stale. Errors: a [*identity.CorruptError] naming the journal for a
// journal that is not a regular file or whose end is corrupt; I/O errors.
// A torn end is reported to the logger.
func (f *Store) readJournal(id string, base uint64) ([]byte, error) {
	path := f.JournalPath(id)
	jf, st, err := atomicfile.OpenRegular(f.dir, journalName(id), os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, f.readError(id, path, err)
	}
	defer jf.Close()
	// The last record and one torn line after it are at most two
	// documents: read no more than that from the end.
	window := 2*(f.maxBytes+int64(recordPrefixLen)+2) + 1
	var data []byte
	var off int64
	for try := 0; ; try++ {
		off = max(0, st.Size()-window)
		data = make([]byte, st.Size()-off)
		_, err := jf.ReadAt(data, off)
		if err == nil {
			break
		}
		// Another store truncated the journal while it was read
		// (compaction): read it again.
		if !errors.Is(err, io.EOF) || try == 2 {
			return nil, fmt.Errorf("identity: reading %s: %w", path, err)
		}
		if st, err = jf.Stat(); err != nil {
			return nil, fmt.Errorf("identity: reading %s: %w", path, err)
		}
	}
	t, err := lastRecord(data, off > 0)
	if err != nil {
		return nil, &identity.CorruptError{Path: path, Reason: err.Error(), Err: err}
	}
	if t.torn > 0 {
		f.log.Warn("identity: ignored the torn end of a journal (a save interrupted before it returned); the next save rewrites the document",
			"path", path, "bytes", t.torn)
	}
	if t.doc == nil || t.base != base {
		return nil, nil // empty, or it follows an older document
	}
	return t.doc, nil
}

// saveLocked stores the encoded document (in buf after recordPrefixLen
// reserved bytes, ending in a newline) for agent id: appended to the
// journal when e has a base and room, else by a compaction. e.mu is held.
func (f *Store) saveLocked(e *agentEntry, id string, buf []byte) error {
	if e.base != 0 && f.journalRecords > 0 && e.records < f.journalRecords {
		appended, err := f.appendRecord(e, id, sealRecord(buf, e.base))
		if appended || err != nil {
			return err
		}
		buf[len(buf)-1] = '\n' // unseal: the document ends in its newline again
	}
	return f.compact(e, id, buf[recordPrefixLen:])
}

// appendRecord appends rec to agent id's journal and fdatasyncs it. It
// returns false and no error when the journal is not as this store left
// it (another process wrote to it), so that the caller compacts instead.
func (f *Store) appendRecord(e *agentEntry, id string, rec []byte) (appended bool, err error) {
	path := f.JournalPath(id)
	flag := os.O_WRONLY | os.O_APPEND
	if !e.journalExists {
		flag |= os.O_CREATE
	}
	jf, st, err := atomicfile.OpenRegular(f.dir, journalName(id), flag, 0o600)
	if err != nil {
		e.base = 0
		return false, fmt.Errorf("identity: saving %s: %w", path, err)
	}
	defer jf.Close()
	if st.Size() != e.journalSize {
		return false, nil
	}
	// Whatever happens below, a failure leaves the journal in a state this
	// store does not know: the next save compacts.
	base := e.base
	e.base = 0
	if _, err := jf.Write(rec); err != nil {
		return false, fmt.Errorf("identity: saving %s: %w", path, err)
	}
	if err := atomicfile.Datasync(jf); err != nil {
		return false, fmt.Errorf("identity: saving %s: %w", path, err)
	}
	if !e.journalExists {
		if err := atomicfile.SyncDir(f.dir); err != nil {
			return false, fmt.Errorf("identity: saving %s: syncing the directory: %w", path, err)
		}
	}
	e.base, e.journalExists = base, true
	e.journalSize += int64(len(rec))
	e.records++
	return true, nil
}

// compact writes doc as agent id's document and truncates the journal,
// whose records follow the document it replaced. The truncation is not
// synced: if a crash undoes it, those records are stale all the same.
// When doc is the very document the journal follows (a clock that stood
// still and a state that went back), the journal is truncated durably
// instead, and the document is not rewritten.
func (f *Store) compact(e *agentEntry, id string, doc []byte) error {
	base := baseOf(doc)
	path, jpath := f.Path(id), f.JournalPath(id)
	sameDoc := base == e.base && e.journalSize > 0
	e.base = 0
	if !sameDoc {
		if err := atomicfile.WriteFile(f.dir, id+".json", doc, 0o600); err != nil {
			return fmt.Errorf("identity: saving %s: %w", path, err)
		}
	}
	jf, _, err := atomicfile.OpenRegular(f.dir, journalName(id), os.O_WRONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.journalExists = false
	case err != nil:
		return fmt.Errorf("identity: saved %s, but its journal %s cannot be reset: %w", path, jpath, err)
	default:
		defer jf.Close()
		if err := jf.Truncate(0); err != nil {
			return fmt.Errorf("identity: saved %s, but truncating its journal %s: %w", path, jpath, err)
		}
		if sameDoc {
			if err := atomicfile.Datasync(jf); err != nil {
				return fmt.Errorf("identity: saving %s: truncating its journal %s: %w", path, jpath, err)
			}
		}
		e.journalExists = true
	}
	e.base, e.journalSize, e.records = base, 0, 0
	return nil
}
