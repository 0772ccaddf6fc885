package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{Now: fixedNow})
	require.NoError(t, err)
	return s
}

func TestOpenFileStore(t *testing.T) {
	t.Run("creates with 0700", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "state")
		s, err := Open(dir, Options{})
		require.NoError(t, err)
		assert.Equal(t, dir, s.Dir())
		st, err := os.Stat(dir)
		require.NoError(t, err)
		require.True(t, st.IsDir())
		if runtime.GOOS != "windows" {
			assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
		}
	})
	t.Run("cleans the path", func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(dir+"/./x/../", Options{})
		require.NoError(t, err)
		assert.Equal(t, dir, s.Dir())
		assert.Equal(t, filepath.Join(dir, "scout.json"), s.Path("scout"))
	})
	t.Run("dir is a file", func(t *testing.T) {
		p := writeFile(t, t.TempDir(), "state", []byte("x"))
		_, err := Open(p, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), p)
		assert.Contains(t, err.Error(), "not a directory")
	})
	t.Run("parent is a file", func(t *testing.T) {
		p := writeFile(t, t.TempDir(), "state", []byte("x"))
		_, err := Open(filepath.Join(p, "sub"), Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a directory")
	})
	t.Run("empty", func(t *testing.T) {
		_, err := Open("", Options{})
		require.Error(t, err)
	})
}

func TestFileStoreDocumentGolden(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	st := sampleState("scout")
	st.UpdatedAt = time.Time{}
	require.NoError(t, s.Save(context.Background(), st))
	assert.True(t, st.UpdatedAt.IsZero(), "Save does not modify the caller's state")

	got, err := os.ReadFile(filepath.Join(dir, "scout.json"))
	require.NoError(t, err)
	golden := filepath.Join("testdata", "scout.v1.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "document format changed; run with -update if intended (and raise SchemaVersion if old files cannot be read)")

	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got, &top))
	assert.JSONEq(t, "1", string(top["schema_version"]))

	loaded, err := s.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, t0, loaded.UpdatedAt, "the stored copy is stamped with Options.Now")
	assert.Equal(t, stateJSON(t, sampleState("scout"), true), stateJSON(t, loaded, true))
}

func TestFileStoreMigratesV0(t *testing.T) {
	// testdata/scout.v0.json is a bare State, as json.Marshal(state) gives
	// it: the format before schema versions. It is a fixed historical
	// format, so it is not rewritten by -update.
	v0, err := os.ReadFile(filepath.Join("testdata", "scout.v0.json"))
	require.NoError(t, err)
	require.NotContains(t, string(v0), "schema_version")

	dir := t.TempDir()
	writeFile(t, dir, "scout.json", v0)
	s := openStore(t, dir)
	got, err := s.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, stateJSON(t, sampleState("scout"), true), stateJSON(t, got, true))
	assert.Equal(t, string(v0), snapshot(t, filepath.Join(dir, "scout.json"))[len("file\n"):], "Load does not rewrite the file")

	// Saving writes the current version.
	require.NoError(t, s.Save(context.Background(), got))
	data, err := os.ReadFile(filepath.Join(dir, "scout.json"))
	require.NoError(t, err)
	golden, err := os.ReadFile(filepath.Join("testdata", "scout.v1.json"))
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(data))
}

func TestMigrationChainIsComplete(t *testing.T) {
	for v, m := range migrations {
		assert.NotNil(t, m, "no migration from schema_version %d to %d", v, v+1)
	}
	// A v0 document and its v1 form decode to the same state.
	v0, err := json.Marshal(sampleState("scout"))
	require.NoError(t, err)
	a, err := decodeDocument("x", "scout", v0)
	require.NoError(t, err)
	b, err := decodeDocument("x", "scout", sampleDocument(t, "scout"))
	require.NoError(t, err)
	assert.Equal(t, stateJSON(t, b, true), stateJSON(t, a, true))
}

func TestFileStorePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permissions")
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	// A wider existing file is narrowed on the next save.
	writeFile(t, dir, "scout.json", sampleDocument(t, "scout"))
	require.NoError(t, os.Chmod(filepath.Join(dir, "scout.json"), 0o644))
	require.NoError(t, s.Save(context.Background(), sampleState("scout")))
	require.NoError(t, s.Save(context.Background(), sampleState("analyst")))
	for _, id := range []string{"scout", "analyst"} {
		st, err := os.Stat(s.Path(id))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), id)
	}
}

func TestFileStoreList(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	require.NoError(t, s.Save(ctx, sampleState("scout")))
	require.NoError(t, s.Save(ctx, sampleState("analyst")))
	for _, name := range []string{
		".scout.json.tmp-123-1-abc", // temp file left by a crash
		"scout.json.corrupt-20261121T222300Z",
		"scout.json.corrupt-20261121T222300Z-2",
		"scout.lock",
		"README.md",
		"Bad.json",
		"a b.json",
		"_x.json",
		"-x.json",
		".json",
		"scout.JSON",
		"scout.json.bak",
	} {
		writeFile(t, dir, name, []byte("{}"))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "notes"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "builder.json"), 0o700)) // listed; Load explains

	ids, err := s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"analyst", "builder", "scout"}, ids)
	_, err = s.Load(ctx, "builder")
	require.ErrorIs(t, err, identity.ErrCorrupt)
}

func TestFileStoreListMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := openStore(t, dir)
	require.NoError(t, os.Remove(dir))
	_, err := s.List(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir)
}

// corruptCase is a document (or something else) where a document should
// be, and what Load must say about it.
type corruptCase struct {
	name string
	// setup puts the bad input at dir/scout.json and returns any other
	// path whose content must survive (a symlink's target).
	setup   func(t *testing.T, dir string) (also string)
	wantIs  error    // ErrCorrupt, ErrTooLarge or ErrFutureVersion
	reasons []string // substrings of the error
}

// docCase is a corruptCase whose input is a file's bytes.
func docCase(name string, data func(t testing.TB) []byte, wantIs error, reasons ...string) corruptCase {
	return corruptCase{
		name: name,
		setup: func(t *testing.T, dir string) string {
			writeFile(t, dir, "scout.json", data(t))
			return ""
		},
		wantIs:  wantIs,
		reasons: reasons,
	}
}

// badDocuments returns the bad documents of the corruption tests, also the
// fuzz seeds.
func badDocuments() []struct {
	name    string
	data    func(t testing.TB) []byte
	wantIs  error
	reasons []string
} {
	edit := func(f func(m map[string]any)) func(t testing.TB) []byte {
		return func(t testing.TB) []byte { return mutateDocument(t, sampleDocument(t, "scout"), f) }
	}
	raw := func(s string) func(t testing.TB) []byte { return func(testing.TB) []byte { return []byte(s) } }
	type doc = struct {
		name    string
		data    func(t testing.TB) []byte
		wantIs  error
		reasons []string
	}
	return []doc{
		{"truncated", func(t testing.TB) []byte { d := sampleDocument(t, "scout"); return d[:len(d)/2] },
			identity.ErrCorrupt, []string{"truncated JSON"}},
		{"truncated to one byte", raw("{"), identity.ErrCorrupt, []string{"truncated JSON: input ends after 1 bytes"}},
		{"empty file", raw(""), identity.ErrCorrupt, []string{"empty file (0 bytes)"}},
		{"whitespace only", raw(" \n\t\n"), identity.ErrCorrupt, []string{"empty file (4 bytes)"}},
		{"NUL bytes", raw("\x00\x00\x00\x00"), identity.ErrCorrupt, []string{"invalid JSON at line 1, column 1"}},
		{"trailing garbage", func(t testing.TB) []byte { return append(sampleDocument(t, "scout"), "}x"...) },
			identity.ErrCorrupt, []string{"invalid JSON", "after top-level value"}},
		{"NaN literal", edit(func(m map[string]any) { jsonSet(m, "@@RAW:NaN@@", "state", "suffering", "active", 0, "severity") }),
			identity.ErrCorrupt, []string{"invalid JSON at line", "NaN is not a JSON number"}},
		{"Infinity literal", edit(func(m map[string]any) {
			jsonSet(m, "@@RAW:-Infinity@@", "state", "suffering", "active", 1, "peak_severity")
		}),
			identity.ErrCorrupt, []string{"-Infinity is not a JSON number"}},
		{"severity as string", edit(func(m map[string]any) { jsonSet(m, "high", "state", "suffering", "active", 0, "severity") }),
			identity.ErrCorrupt, []string{"suffering.active[0].severity: want number, got string"}},
		{"peak NaN as string", edit(func(m map[string]any) { jsonSet(m, "NaN", "state", "suffering", "active", 1, "peak_severity") }),
			identity.ErrCorrupt, []string{"suffering.active[1].peak_severity: want number, got string"}},
		{"peak overflows to Inf", edit(func(m map[string]any) {
			jsonSet(m, "@@RAW:1e999@@", "state", "suffering", "resolved", 0, "peak_severity")
		}),
			identity.ErrCorrupt, []string{"suffering.resolved[0].peak_severity: number 1e999 is out of range"}},
		{"severity 1.7", edit(func(m map[string]any) { jsonSet(m, 1.7, "state", "suffering", "active", 0, "severity") }),
			identity.ErrCorrupt, []string{"invalid state", "active[0].severity is 1.7, want 0–1"}},
		{"severity -0.2", edit(func(m map[string]any) { jsonSet(m, -0.2, "state", "suffering", "active", 1, "severity") }),
			identity.ErrCorrupt, []string{"active[1].severity is -0.2, want 0–1"}},
		{"severity -0.1 in v0", func(t testing.TB) []byte {
			st := sampleState("scout")
			b, err := json.Marshal(st)
			require.NoError(t, err)
			return []byte(strings.Replace(string(b), `"severity":0.3`, `"severity":-0.1`, 1))
		}, identity.ErrCorrupt, []string{"active[0].severity is -0.1"}},
		{"agent_id as number", edit(func(m map[string]any) { jsonSet(m, 7, "state", "identity", "agent_id") }),
			identity.ErrCorrupt, []string{"identity.agent_id: want string, got number 7"}},
		{"opinions as object", edit(func(m map[string]any) { jsonSet(m, map[string]any{"a": 1}, "state", "identity", "opinions") }),
			identity.ErrCorrupt, []string{"identity.opinions: want array, got object"}},
		{"question as number", edit(func(m map[string]any) { jsonSet(m, 3, "state", "identity", "open_questions", 1) }),
			identity.ErrCorrupt, []string{"identity.open_questions[1]: want string, got number 3"}},
		{"onset as number", edit(func(m map[string]any) { jsonSet(m, 5, "state", "suffering", "active", 0, "onset") }),
			identity.ErrCorrupt, []string{"suffering.active[0].onset: want string (an RFC 3339 time), got number 5"}},
		{"bad time", edit(func(m map[string]any) { jsonSet(m, "yesterday", "state", "identity", "created_at") }),
			identity.ErrCorrupt, []string{`identity.created_at: want an RFC 3339 time, got "yesterday"`}},
		{"crisis_cycles fractional", edit(func(m map[string]any) { jsonSet(m, 1.5, "state", "suffering", "crisis_cycles") }),
			identity.ErrCorrupt, []string{"suffering.crisis_cycles: want an integer in range, got 1.5"}},
		{"crisis_cycles negative", edit(func(m map[string]any) { jsonSet(m, -1, "state", "suffering", "crisis_cycles") }),
			identity.ErrCorrupt, []string{"crisis_cycles is -1"}},
		{"fallback as string", edit(func(m map[string]any) { jsonSet(m, "yes", "state", "identity", "goals", 2, "fallback") }),
			identity.ErrCorrupt, []string{"identity.goals[2].fallback: want boolean, got string"}},
		{"state as array", edit(func(m map[string]any) { jsonSet(m, []any{}, "state") }),
			identity.ErrCorrupt, []string{"state: want object, got array"}},
		{"no state", edit(func(m map[string]any) { delete(m, "state") }), identity.ErrCorrupt, []string{`no "state" object`}},
		{"null state", edit(func(m map[string]any) { jsonSet(m, nil, "state") }), identity.ErrCorrupt, []string{`no "state" object`}},
		{"top level array", raw(`[1, 2]`), identity.ErrCorrupt, []string{"the top level is array, want an object"}},
		{"top level null", raw(`null`), identity.ErrCorrupt, []string{"the top level is null, want an object"}},
		{"schema_version string", edit(func(m map[string]any) { jsonSet(m, "1", "schema_version") }),
			identity.ErrCorrupt, []string{"schema_version: want a positive integer, got string"}},
		{"schema_version zero", edit(func(m map[string]any) { jsonSet(m, 0, "schema_version") }),
			identity.ErrCorrupt, []string{"schema_version: want a positive integer, got 0"}},
		{"schema_version fractional", edit(func(m map[string]any) { jsonSet(m, 1.5, "schema_version") }),
			identity.ErrCorrupt, []string{"schema_version: want a positive integer, got 1.5"}},
		{"future version", edit(func(m map[string]any) { jsonSet(m, 2, "schema_version") }),
			identity.ErrFutureVersion, []string{"has schema_version 2, this version reads at most 1"}},
		{"far future version", edit(func(m map[string]any) { jsonSet(m, 99, "schema_version") }),
			identity.ErrFutureVersion, []string{"schema_version 99"}},
		{"id mismatch", edit(func(m map[string]any) { jsonSet(m, "analyst", "state", "identity", "agent_id") }),
			identity.ErrCorrupt, []string{`identity.agent_id is "analyst", want "scout" (the file's name)`}},
		{"id missing", edit(func(m map[string]any) { delete(jsonAt(m, "state", "identity").(map[string]any), "agent_id") }),
			identity.ErrCorrupt, []string{`identity.agent_id is missing, want "scout"`}},
		{"empty object (v0)", raw(`{}`), identity.ErrCorrupt, []string{`identity.agent_id is missing`}},
		{"deep nesting", raw(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), identity.ErrCorrupt, []string{"invalid JSON"}},
	}
}

func corruptCases() []corruptCase {
	var cases []corruptCase
	for _, d := range badDocuments() {
		cases = append(cases, docCase(d.name, d.data, d.wantIs, d.reasons...))
	}
	cases = append(cases,
		corruptCase{
			name: "directory where the file should be",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Mkdir(filepath.Join(dir, "scout.json"), 0o700))
				writeFile(t, filepath.Join(dir, "scout.json"), "keep.txt", []byte("keep"))
				return ""
			},
			wantIs:  identity.ErrCorrupt,
			reasons: []string{"a directory, not a regular file"},
		},
		corruptCase{
			name: "symlink pointing outside the directory",
			setup: func(t *testing.T, dir string) string {
				outside := writeFile(t, t.TempDir(), "secret.json", sampleDocument(t, "scout"))
				if err := os.Symlink(outside, filepath.Join(dir, "scout.json")); err != nil {
					t.Skipf("symlinks unavailable: %v", err)
				}
				return outside
			},
			wantIs:  identity.ErrCorrupt,
			reasons: []string{"symlink to", "symlinks that leave the state directory (or are absolute) are refused"},
		},
		corruptCase{
			name: "relative symlink climbing out",
			setup: func(t *testing.T, dir string) string {
				parent := filepath.Dir(dir)
				outside := writeFile(t, parent, "x.json", sampleDocument(t, "scout"))
				if err := os.Symlink("../x.json", filepath.Join(dir, "scout.json")); err != nil {
					t.Skipf("symlinks unavailable: %v", err)
				}
				return outside
			},
			wantIs:  identity.ErrCorrupt,
			reasons: []string{`symlink to "../x.json"`, "refused"},
		},
		corruptCase{
			name: "oversize file",
			setup: func(t *testing.T, dir string) string {
				doc := sampleDocument(t, "scout")
				big := mutateDocument(t, doc, func(m map[string]any) {
					jsonSet(m, strings.Repeat("x", identity.DefaultMaxBytes), "state", "identity", "narrative")
				})
				writeFile(t, dir, "scout.json", big)
				return ""
			},
			wantIs:  identity.ErrTooLarge,
			reasons: []string{"bytes, limit 4194304 bytes (Options.MaxBytes)"},
		},
	)
	return cases
}

// TestFileStoreCorruptInputs checks, for every bad input, that Load gives a
// clear error naming the file, that nothing is lost (the bytes are
// unchanged after the Load and after refused Saves), and that Quarantine
// then moves the input aside intact so that a new state can be saved.
func TestFileStoreCorruptInputs(t *testing.T) {
	ctx := context.Background()
	for _, tt := range corruptCases() {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			require.NoError(t, os.Mkdir(dir, 0o700))
			also := tt.setup(t, dir)
			path := filepath.Join(dir, "scout.json")
			before := snapshot(t, path)
			var alsoBefore string
			if also != "" {
				alsoBefore = snapshot(t, also)
			}
			unchanged := func(when string) {
				t.Helper()
				assert.Equal(t, before, snapshot(t, path), "document changed %s", when)
				if also != "" {
					assert.Equal(t, alsoBefore, snapshot(t, also), "symlink target changed %s", when)
				}
			}

			// A Save by a store that never loaded the document refuses too.
			fresh := openStore(t, dir)
			err := fresh.Save(ctx, sampleState("scout"))
			require.ErrorIs(t, err, tt.wantIs)
			assert.Contains(t, err.Error(), "quarantine it first")
			unchanged("after a Save without Load")

			s := openStore(t, dir)
			st, err := s.Load(ctx, "scout")
			require.Error(t, err)
			assert.Nil(t, st)
			require.ErrorIs(t, err, tt.wantIs)
			assert.NotErrorIs(t, err, identity.ErrNotFound)
			assert.Contains(t, err.Error(), path, "the error names the file")
			for _, r := range tt.reasons {
				assert.Contains(t, err.Error(), r)
			}
			if tt.wantIs == identity.ErrCorrupt {
				var ce *identity.CorruptError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, path, ce.Path)
				assert.NotEmpty(t, ce.Reason)
			}
			unchanged("after Load")

			err = s.Save(ctx, sampleState("scout"))
			require.ErrorIs(t, err, tt.wantIs)
			assert.Contains(t, err.Error(), "refusing to overwrite unusable document "+path+"; quarantine it first")
			unchanged("after a refused Save")
			_, err = s.Load(ctx, "scout")
			require.ErrorIs(t, err, tt.wantIs, "a second Load gives the same error")

			ids, err := s.List(ctx)
			require.NoError(t, err)
			assert.Equal(t, []string{"scout"}, ids)

			moved, err := s.Quarantine("scout")
			require.NoError(t, err)
			assert.Equal(t, path+".corrupt-20261121T222300Z", moved)
			assert.Equal(t, before, snapshot(t, moved), "quarantine keeps the input intact")
			if also != "" {
				assert.Equal(t, alsoBefore, snapshot(t, also))
			}
			assert.Equal(t, "missing", snapshot(t, path))

			_, err = s.Load(ctx, "scout")
			require.ErrorIs(t, err, identity.ErrNotFound)
			require.NoError(t, s.Save(ctx, sampleState("scout")), "after quarantine a new state can be saved")
			got, err := s.Load(ctx, "scout")
			require.NoError(t, err)
			assert.Equal(t, "Cedar", got.Identity.Name)
			assert.Equal(t, before, snapshot(t, moved), "the quarantined input is still intact")
		})
	}
}

func TestFileStoreRefusalClearedBySuccessfulLoad(t *testing.T) {
	// A store remembers that it found the document corrupt, even after the
	// file is repaired by hand, until a Load succeeds (or Quarantine).
	dir := t.TempDir()
	p := writeFile(t, dir, "scout.json", []byte("{"))
	s := openStore(t, dir)
	_, err := s.Load(context.Background(), "scout")
	require.ErrorIs(t, err, identity.ErrCorrupt)
	// Repaired by hand.
	require.NoError(t, os.WriteFile(p, sampleDocument(t, "scout"), 0o600))
	require.ErrorIs(t, s.Save(context.Background(), sampleState("scout")), identity.ErrCorrupt, "still refused until loaded again")
	_, err = s.Load(context.Background(), "scout")
	require.NoError(t, err)
	require.NoError(t, s.Save(context.Background(), sampleState("scout")))
}

func TestFileStoreQuarantineNaming(t *testing.T) {
	dir := t.TempDir()
	now := t0
	s, err := Open(dir, Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	want := []string{
		"scout.json.corrupt-20261121T222300Z",
		"scout.json.corrupt-20261121T222300Z-2",
		"scout.json.corrupt-20261121T222300Z-3",
	}
	for i, w := range want {
		writeFile(t, dir, "scout.json", fmt.Appendf(nil, "bad %d", i))
		p, err := s.Quarantine("scout")
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, w), p)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("bad %d", i), string(b), "nothing overwritten")
	}
	// Another instant, in another zone: the suffix is UTC.
	now = time.Date(2027, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 5*3600))
	writeFile(t, dir, "scout.json", []byte("bad"))
	p, err := s.Quarantine("scout")
	require.NoError(t, err)
	assert.Equal(t, "scout.json.corrupt-20270101T220405Z", filepath.Base(p))

	_, err = s.Quarantine("scout")
	require.ErrorIs(t, err, identity.ErrNotFound)
	_, err = s.Quarantine("../scout")
	require.ErrorIs(t, err, identity.ErrInvalidID)

	ids, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ids, "quarantined documents are not listed")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 4, "nothing deleted")
}

func TestFileStoreSaveTooLarge(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxBytes: 512, Now: fixedNow})
	require.NoError(t, err)
	err = s.Save(context.Background(), sampleState("scout"))
	require.ErrorIs(t, err, identity.ErrTooLarge)
	assert.Contains(t, err.Error(), `state of "scout" encodes to`)
	assert.Contains(t, err.Error(), "limit 512 bytes")
	assert.Equal(t, "missing", snapshot(t, filepath.Join(dir, "scout.json")))

	small := &identity.AgentState{Identity: identity.New("scout", "Cedar", t0)}
	require.NoError(t, s.Save(context.Background(), small))
	got, err := s.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, "Cedar", got.Identity.Name)
}

func TestFileStoreLoadTooLargeCustomLimit(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "scout.json", sampleDocument(t, "scout"))
	s, err := Open(dir, Options{MaxBytes: 100})
	require.NoError(t, err)
	_, err = s.Load(context.Background(), "scout")
	require.ErrorIs(t, err, identity.ErrTooLarge)
	st, _ := os.Stat(p)
	assert.Contains(t, err.Error(), fmt.Sprintf("%s is %d bytes, limit 100 bytes", p, st.Size()))
}

func TestFileStoreSymlinkInsideIsFollowed(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "real.data", sampleDocument(t, "scout"))
	if err := os.Symlink("real.data", filepath.Join(dir, "scout.json")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	s := openStore(t, dir)
	got, err := s.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, "Cedar", got.Identity.Name)
}

func TestFileStoreIgnoresTempFiles(t *testing.T) {
	// A crash can leave a half-written temp file; it never shadows the
	// document.
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	require.NoError(t, s.Save(ctx, sampleState("scout")))
	writeFile(t, dir, ".scout.json.tmp-99-1-x", []byte(`{"schema_version": 1, "sta`))
	got, err := s.Load(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, "Cedar", got.Identity.Name)
	require.NoError(t, s.Save(ctx, sampleState("scout")))
}

func TestFileStoreConcurrentSameAgent(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// Two stores on one directory, as two components of one process might.
	a, b := openStore(t, dir), openStore(t, dir)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if w%2 == 1 {
				s = b
			}
			for i := range 25 {
				st := sampleState("scout")
				st.Identity.Narrative = strings.Repeat(fmt.Sprintf("w%di%d ", w, i), 50)
				if err := s.Save(ctx, st); err != nil {
					errs <- err
				}
				got, err := s.Load(ctx, "scout")
				if err != nil {
					errs <- err
					continue
				}
				// Every load is one whole version.
				fields := strings.Fields(got.Identity.Narrative)
				for _, f := range fields {
					if f != fields[0] {
						errs <- fmt.Errorf("mixed narrative: %q", got.Identity.Narrative)
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"scout.journal", "scout.json"}, names, "no temp files left behind")
}

func TestFileStoreLoadUnreadable(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs POSIX permissions and a non-root user")
	}
	dir := t.TempDir()
	p := writeFile(t, dir, "scout.json", sampleDocument(t, "scout"))
	require.NoError(t, os.Chmod(p, 0))
	s := openStore(t, dir)
	_, err := s.Load(context.Background(), "scout")
	require.Error(t, err)
	assert.Contains(t, err.Error(), p)
	err = s.Save(context.Background(), sampleState("scout"))
	require.ErrorContains(t, err, "quarantine it first")
	require.NoError(t, os.Chmod(p, 0o600))
}

func TestDescribeSyntaxErrorPosition(t *testing.T) {
	_, err := decodeDocument("f", "scout", []byte("{\n  \"a\": 1,\n  \"b\": NaN\n}"))
	var ce *identity.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.HasPrefix(ce.Reason, "invalid JSON at line 3, column 8: "), ce.Reason)
	assert.True(t, strings.HasSuffix(ce.Reason, "(NaN is not a JSON number)"), ce.Reason)
	assert.True(t, errors.As(ce.Err, new(*json.SyntaxError)))
}

// BenchmarkFileStoreSave saves one agent over and over, fsync included:
// "journal" with the default journal (a record appended per save, the
// document rewritten every DefaultJournalRecords saves), "rewrite" with
// the journal off (every save replaces the document). Compare the two in
// one run: the ratio is what the journal saves on this disk.
func BenchmarkFileStoreSave(b *testing.B) {
	for _, bc := range []struct {
		name    string
		records int
	}{{"journal", 0}, {"rewrite", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{JournalRecords: bc.records})
			require.NoError(b, err)
			st := sampleState("scout")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Save(ctx, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFileStoreLoad(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	require.NoError(b, err)
	ctx := context.Background()
	require.NoError(b, s.Save(ctx, sampleState("scout")))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Load(ctx, "scout"); err != nil {
			b.Fatal(err)
		}
	}
}

// Over-cap and unnormalised suffering state loads as stored: the agent
// trims it (suffering.State.Enforce) and reports the cuts. It is never
// refused: over-cap state is trimmed, never refused.
func TestFileStoreLoadsOverCapSuffering(t *testing.T) {
	dir := t.TempDir()
	fs, err := Open(dir, Options{})
	require.NoError(t, err)
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC))}
	for i := range 7 {
		st.Suffering.Active = append(st.Suffering.Active, suffering.Stressor{Type: fmt.Sprint("Type ", i), Severity: 0.2, Peak: 0.2, RatePerDay: 0.03})
	}
	require.NoError(t, fs.Save(context.Background(), st))
	got, err := fs.Load(context.Background(), "scout")
	require.NoError(t, err)
	require.Len(t, got.Suffering.Active, 7)
	cuts := got.Suffering.Enforce(time.Now())
	assert.Contains(t, cuts, "active stressors: 7 → 5")
	assert.Len(t, got.Suffering.Active, 5)
	assert.Len(t, got.Suffering.Resolved, 2)
}

func TestFileStoreLoadsIndentedDocuments(t *testing.T) {
	// testdata/scout.v1-indented.json is a version-1 document as earlier
	// versions wrote it (indented); it loads as the compact form does.
	data, err := os.ReadFile(filepath.Join("testdata", "scout.v1-indented.json"))
	require.NoError(t, err)
	require.Contains(t, string(data), "\n  ")
	dir := t.TempDir()
	writeFile(t, dir, "scout.json", data)
	got, err := openStore(t, dir).Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, stateJSON(t, sampleState("scout"), true), stateJSON(t, got, true))
	pretty, err := IndentDocument(sampleDocument(t, "scout"))
	require.NoError(t, err)
	assert.Equal(t, string(data), string(pretty), "IndentDocument gives the readable form back")
}

// TestFileStoreSizeHintFollowsSavedDocuments checks that the encoding
// buffer hint comes from documents that were saved: a refused, too large
// state must not make every later save of the agent allocate its size.
func TestFileStoreSizeHintFollowsSavedDocuments(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Now: fixedNow, MaxBytes: 64 << 10})
	require.NoError(t, err)
	ctx := context.Background()
	big := sampleState("a")
	big.Identity.Narrative = strings.Repeat("x", 1<<20)
	require.ErrorIs(t, s.Save(ctx, big), identity.ErrTooLarge)
	assert.Zero(t, s.entry("a").size.Load(), "a refused encoding set the hint")

	require.NoError(t, s.Save(ctx, sampleState("a")))
	data, err := os.ReadFile(s.Path("a"))
	require.NoError(t, err)
	got := s.entry("a").size.Load()
	assert.GreaterOrEqual(t, got, int64(len(data)))
	assert.Less(t, got, int64(len(data))*2)
}
