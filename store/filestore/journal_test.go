package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versioned returns the sample state of agent id with worldview "v{n}".
func versioned(id string, n int) *identity.AgentState {
	s := sampleState(id)
	s.Identity.Worldview = fmt.Sprintf("v%d", n)
	return s
}

// loadedVersion loads agent id and returns its worldview ("v3").
func loadedVersion(t *testing.T, s *Store, id string) string {
	t.Helper()
	st, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	return st.Identity.Worldview
}

// journalLines returns the lines of agent id's journal ("" when missing).
func journalLines(t *testing.T, s *Store, id string) []string {
	t.Helper()
	b, err := os.ReadFile(s.JournalPath(id))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")[:bytes.Count(b, []byte("\n"))]
}

// TestFileStoreJournal follows an agent through appends and compactions:
// the first save of a store writes the document, the next JournalRecords
// saves append one record each (valid JSON Lines), the one after rewrites
// the document and empties the journal, and Load always returns the last
// save, in this store and in a new one.
func TestFileStoreJournal(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, Options{Now: fixedNow, JournalRecords: 3})
	require.NoError(t, err)
	docVersion := func() string {
		t.Helper()
		b, err := os.ReadFile(s.Path("scout"))
		require.NoError(t, err)
		st, err := decodeDocument(s.Path("scout"), "scout", b)
		require.NoError(t, err)
		return st.Identity.Worldview
	}
	steps := []struct {
		doc     string // the document's version after the save
		records int    // the journal's records after the save
	}{
		1: {"v1", 0}, // first save: compaction
		2: {"v1", 1},
		3: {"v1", 2},
		4: {"v1", 3},
		5: {"v5", 0}, // JournalRecords reached: compaction
		6: {"v5", 1},
	}
	for v := 1; v < len(steps); v++ {
		require.NoError(t, s.Save(ctx, versioned("scout", v)))
		assert.Equal(t, steps[v].doc, docVersion(), "save %d: the document", v)
		lines := journalLines(t, s, "scout")
		assert.Len(t, lines, steps[v].records, "save %d: the journal's records", v)
		for _, l := range lines {
			var rec struct {
				Base, CRC32C string
				Document     document
			}
			require.NoError(t, json.Unmarshal([]byte(l), &rec), "a record is one JSON object")
			assert.Len(t, rec.Base, 16)
			assert.Len(t, rec.CRC32C, 8)
			assert.Equal(t, identity.SchemaVersion, rec.Document.SchemaVersion)
		}
		assert.Equal(t, fmt.Sprintf("v%d", v), loadedVersion(t, s, "scout"), "save %d: Load", v)
	}

	// A new store (a new process) reads the journal, and its first save
	// compacts.
	s2, err := Open(dir, Options{Now: fixedNow, JournalRecords: 3})
	require.NoError(t, err)
	assert.Equal(t, "v6", loadedVersion(t, s2, "scout"))
	require.NoError(t, s2.Save(ctx, versioned("scout", 7)))
	s = s2
	assert.Equal(t, "v7", docVersion())
	assert.Empty(t, journalLines(t, s2, "scout"))
	ids, err := s2.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"scout"}, ids, "a journal is not an agent")
}

// TestFileStoreJournalOff: a negative JournalRecords rewrites the document
// on every save and never makes a journal.
func TestFileStoreJournalOff(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Now: fixedNow, JournalRecords: -1})
	require.NoError(t, err)
	for v := 1; v <= 3; v++ {
		require.NoError(t, s.Save(context.Background(), versioned("scout", v)))
		b, err := os.ReadFile(s.Path("scout"))
		require.NoError(t, err)
		assert.Contains(t, string(b), fmt.Sprintf(`"worldview":"v%d"`, v))
	}
	assert.NoFileExists(t, s.JournalPath("scout"))
}

// journaled returns a store whose agent "scout" has saved versions 1 (the
// document) and 2 and 3 (journal records), and the log it writes to.
func journaled(t *testing.T) (*Store, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s, err := Open(t.TempDir(), Options{Now: fixedNow, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	for v := 1; v <= 3; v++ {
		require.NoError(t, s.Save(context.Background(), versioned("scout", v)))
	}
	require.Len(t, journalLines(t, s, "scout"), 2)
	return s, &logs
}

// appendJournal appends raw bytes to agent scout's journal.
func appendJournal(t *testing.T, s *Store, raw string) {
	t.Helper()
	f, err := os.OpenFile(s.JournalPath("scout"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(raw)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestFileStoreJournalTornEnd: the end of a save interrupted before it
// returned (a partial line, or a whole line whose checksum fails) is
// ignored and logged; the last whole record is the state, and the next
// save by a new store carries on from it.
func TestFileStoreJournalTornEnd(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"partial line", `{"base":"0123456789abcdef","crc32c":"0000`},
		{"zeros", "\x00\x00\x00\x00\x00\x00\x00\x00"},
		{"whole line, bad checksum", `{"base":"0123456789abcdef","crc32c":"00000000","document":{}}` + "\n"},
		{"garbage line", "not json at all\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, logs := journaled(t)
			appendJournal(t, s, tc.raw)
			fresh := openStore(t, s.Dir())
			fresh.log = s.log
			assert.Equal(t, "v3", loadedVersion(t, fresh, "scout"))
			assert.Contains(t, logs.String(), "torn end of a journal")
			assert.Contains(t, logs.String(), s.JournalPath("scout"))

			require.NoError(t, fresh.Save(context.Background(), versioned("scout", 4)))
			assert.Empty(t, journalLines(t, fresh, "scout"), "the save compacted: the torn end is gone")
			assert.Equal(t, "v4", loadedVersion(t, openStore(t, s.Dir()), "scout"))
		})
	}
}

// TestFileStoreJournalCorrupt: an end that is more than one torn write is
// corruption: Load names the journal, Save refuses to replace it until
// Quarantine has moved the document and the journal aside, and nothing is
// lost.
func TestFileStoreJournalCorrupt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, raw string }{
		{"two bad lines", "bad one\nbad two\n"},
		{"a bad line and a partial one", "bad one\nbad tw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := journaled(t)
			appendJournal(t, s, tc.raw)
			fresh := openStore(t, s.Dir())
			before := snapshot(t, s.JournalPath("scout"))

			_, err := fresh.Load(ctx, "scout")
			var ce *identity.CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, s.JournalPath("scout"), ce.Path)
			assert.Contains(t, err.Error(), "crc32c")

			err = fresh.Save(ctx, versioned("scout", 9))
			require.ErrorIs(t, err, identity.ErrCorrupt)
			assert.Contains(t, err.Error(), "unusable journal "+s.JournalPath("scout"))
			assert.Equal(t, before, snapshot(t, s.JournalPath("scout")), "nothing written")

			moved, err := fresh.Quarantine("scout")
			require.NoError(t, err)
			assert.Contains(t, moved, "scout.json.corrupt-")
			assert.Equal(t, before, snapshot(t, s.JournalPath("scout")+".corrupt-20261121T222300Z"), "the journal is kept, aside")
			assert.NoFileExists(t, s.JournalPath("scout"))
			require.NoError(t, fresh.Save(ctx, versioned("scout", 9)))
			assert.Equal(t, "v9", loadedVersion(t, fresh, "scout"))
		})
	}
}

// TestFileStoreJournalStale: a document rewritten by a writer that knows no
// journal (an older version of this package) makes the journal stale: Load
// returns the document, not the journal's older records.
func TestFileStoreJournalStale(t *testing.T) {
	s, _ := journaled(t)
	doc, err := encodeDocument(versioned("scout", 7), 0, 0)
	require.NoError(t, err)
	writeFile(t, s.Dir(), "scout.json", doc)
	assert.Equal(t, "v7", loadedVersion(t, openStore(t, s.Dir()), "scout"))
	assert.Equal(t, "v7", loadedVersion(t, s, "scout"))
}

// TestFileStoreJournalOtherWriter: when another store wrote the agent
// since this one appended (its journal is not as this store left it), the
// save compacts instead of appending after the other's records.
func TestFileStoreJournalOtherWriter(t *testing.T) {
	ctx := context.Background()
	s, _ := journaled(t)
	other := openStore(t, s.Dir())
	require.NoError(t, other.Save(ctx, versioned("scout", 10))) // compaction
	require.NoError(t, other.Save(ctx, versioned("scout", 11))) // append
	require.NoError(t, s.Save(ctx, versioned("scout", 12)))
	assert.Empty(t, journalLines(t, s, "scout"), "compacted")
	assert.Equal(t, "v12", loadedVersion(t, openStore(t, s.Dir()), "scout"))
}

// TestFileStoreJournalSameDocument: a compaction whose document is byte for
// byte the one the journal follows (a clock standing still and a state
// gone back) truncates the journal durably and leaves the document alone,
// so that the journal's records cannot come back as newer.
func TestFileStoreJournalSameDocument(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{Now: fixedNow, JournalRecords: 1})
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx, versioned("scout", 1))) // the document
	before, err := os.Stat(s.Path("scout"))
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx, versioned("scout", 2))) // a record
	require.NoError(t, s.Save(ctx, versioned("scout", 1))) // compaction to the same bytes
	after, err := os.Stat(s.Path("scout"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the document was not rewritten")
	assert.Empty(t, journalLines(t, s, "scout"))
	assert.Equal(t, "v1", loadedVersion(t, openStore(t, s.Dir()), "scout"))
}

// TestFileStoreJournalQuarantineOnlyJournal: a journal without its
// document is moved aside on its own.
func TestFileStoreJournalQuarantineOnlyJournal(t *testing.T) {
	s, _ := journaled(t)
	require.NoError(t, os.Remove(s.Path("scout")))
	p, err := s.Quarantine("scout")
	require.NoError(t, err)
	assert.Equal(t, s.JournalPath("scout")+".corrupt-20261121T222300Z", p)
	_, err = s.Quarantine("scout")
	require.ErrorIs(t, err, identity.ErrNotFound)
}

// TestRecordRoundTrip: a sealed record parses back to its base and
// document, and any flipped byte of it is refused.
func TestRecordRoundTrip(t *testing.T) {
	buf, err := encodeDocument(sampleState("scout"), recordPrefixLen, 0)
	require.NoError(t, err)
	doc := bytes.Clone(buf[recordPrefixLen:])
	rec := sealRecord(buf, 0x0123456789abcdef)
	require.True(t, json.Valid(rec))
	require.Equal(t, byte('\n'), rec[len(rec)-1])
	base, got, ok := parseRecord(rec[:len(rec)-1])
	require.True(t, ok)
	assert.Equal(t, uint64(0x0123456789abcdef), base)
	assert.Equal(t, string(doc[:len(doc)-1]), string(got))
	for i := range len(rec) - 1 {
		bad := bytes.Clone(rec[:len(rec)-1])
		bad[i] ^= 0x01
		_, _, ok := parseRecord(bad)
		require.False(t, ok, "a flipped byte at %d of %q passed", i, bad[:min(len(bad), 80)])
	}
}

// FuzzJournalTail: lastRecord never panics, and a document it returns is a
// whole record of the input whose checksum matches.
func FuzzJournalTail(f *testing.F) {
	buf, err := encodeDocument(versioned("scout", 1), recordPrefixLen, 0)
	require.NoError(f, err)
	rec := string(sealRecord(buf, 42))
	f.Add(rec, false)
	f.Add(rec+rec, false)
	f.Add(rec+rec[:40], true)
	f.Add(rec+"bad\n", false)
	f.Add("bad\n"+rec, false)
	f.Add("", false)
	f.Fuzz(func(t *testing.T, data string, tail bool) {
		jt, err := lastRecord([]byte(data), tail)
		if err != nil || jt.doc == nil {
			return
		}
		require.Contains(t, data, string(jt.doc), "document is not in the input")
		line := `{"base":"` + string(appendHex(nil, jt.base, 16))
		require.Contains(t, data, line, "base %x is not in the input", jt.base)
		require.GreaterOrEqual(t, jt.torn, 0, "torn bytes")
		require.LessOrEqual(t, jt.torn, len(data), "torn bytes")
	})
}
