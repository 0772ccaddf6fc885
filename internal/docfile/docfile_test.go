package docfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type doc struct {
	Version int    `json:"version"`
	Items   []item `json:"items"`
}

var errTestCorrupt = errors.New("corrupt")

type corruptError struct {
	path, reason string
	err          error
}

func (e *corruptError) Error() string        { return e.path + ": " + e.reason }
func (e *corruptError) Unwrap() error        { return e.err }
func (e *corruptError) Is(target error) bool { return target == errTestCorrupt }

var testFormat = &Format[doc, item]{
	Version: 2,
	List:    "items",
	Fields:  func(d *doc) (*int, *[]item) { return &d.Version, &d.Items },
	ID:      func(it item) string { return it.ID },
	Validate: func(it item) error {
		if it.ID == "" {
			return errors.New("no id")
		}
		return nil
	},
	Corrupt: func(path, reason string, err error) error { return &corruptError{path, reason, err} },
}

func TestFormatRoundTrip(t *testing.T) {
	d := testFormat.New()
	assert.Equal(t, &doc{Version: 2, Items: []item{}}, d)
	d.Version = 0 // Encode writes the current version whatever d says
	d.Items = append(d.Items, item{ID: "a", Text: "<b>"})
	got, err := testFormat.Encode(d)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"version\": 2,\n  \"items\": [\n    {\n      \"id\": \"a\",\n      \"text\": \"<b>\"\n    }\n  ]\n}\n", string(got))
	assert.Equal(t, 0, d.Version, "Encode leaves d unchanged")
	back, err := testFormat.Decode(got, "f.json")
	require.NoError(t, err)
	assert.Equal(t, []item{{ID: "a", Text: "<b>"}}, back.Items)

	c := testFormat.Clone(back)
	c.Items[0].Text = "changed"
	assert.Equal(t, "<b>", back.Items[0].Text, "Clone copies the item list")

	nilList, err := testFormat.Encode(&doc{})
	require.NoError(t, err)
	assert.Contains(t, string(nilList), `"items": []`)
}

func TestFormatDecodeRefusals(t *testing.T) {
	tests := []struct{ name, data, reason string }{
		{"empty", " \n", "empty file"},
		{"syntax", `{"version":`, "truncated JSON"},
		{"bad JSON", `{"version":x}`, "invalid character"},
		{"unknown field", `{"version":1,"items":[],"extra":1}`, `unknown field "extra"`},
		{"trailing", `{"version":1,"items":[]}{}`, "data after the JSON document"},
		{"no version", `{"items":[]}`, "no schema version"},
		{"newer", `{"version":3,"items":[]}`, "schema version 3 is newer than this SDK reads (2)"},
		{"negative", `{"version":-1,"items":[]}`, "invalid schema version -1"},
		{"invalid item", `{"version":1,"items":[{"id":""}]}`, `items[0] (id ""): no id`},
		{"duplicate", `{"version":1,"items":[{"id":"a"},{"id":"a"}]}`, `items[1]: duplicate id "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testFormat.Decode([]byte(tt.data), "f.json")
			var ce *corruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "f.json", ce.path)
			assert.Contains(t, ce.reason, tt.reason)
		})
	}
	d, err := testFormat.Decode([]byte(`{"version":1,"items":null}`), "f.json")
	require.NoError(t, err)
	assert.NotNil(t, d.Items, "a null list decodes as empty")
}

func newTestFile(dir string, describe bool) *File[doc, item] {
	return NewFile(Config[doc, item]{Dir: dir, Name: "f.json", LockName: "f.lock", Prefix: "test", Format: testFormat, DescribeIrregular: describe})
}

func TestFileReadWrite(t *testing.T) {
	dir := t.TempDir()
	f := newTestFile(dir, false)
	d, err := f.Read(1 << 10)
	require.NoError(t, err)
	assert.Equal(t, testFormat.New(), d, "a missing file is an empty document")

	d.Items = append(d.Items, item{ID: "a"})
	data, err := f.Encode(d)
	require.NoError(t, err)
	require.NoError(t, f.Write(data))
	st, err := os.Stat(f.Path())
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
	back, err := f.Read(1 << 10)
	require.NoError(t, err)
	assert.Equal(t, d.Items, back.Items)

	_, err = f.Read(10)
	var ce *corruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "larger than 10 bytes", ce.reason)
	assert.ErrorIs(t, err, errTestCorrupt)
}

func TestFileNotRegular(t *testing.T) {
	for _, describe := range []bool{false, true} {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "f.json"), 0o700))
		_, err := newTestFile(dir, describe).Read(1 << 10)
		var ce *corruptError
		require.ErrorAs(t, err, &ce)
		if describe {
			assert.Equal(t, "a directory, not a regular file; refused at once", ce.reason)
		} else {
			assert.Equal(t, "not a regular file", ce.reason)
		}
	}
}

func TestFileLock(t *testing.T) {
	dir := t.TempDir()
	a, b := newTestFile(dir, false), newTestFile(dir, false)
	unlock, err := a.Lock(context.Background())
	require.NoError(t, err)
	ok, err := b.TryLock()
	require.NoError(t, err)
	assert.False(t, ok, "the lock is exclusive")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Lock(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	unlock()
	ok, err = b.TryLock()
	require.NoError(t, err)
	assert.True(t, ok)
	b.Unlock()
}

func TestUpdate(t *testing.T) {
	m := NewMemory(testFormat)
	sem := make(chan struct{}, 1)
	ctx := context.Background()
	require.NoError(t, Update(ctx, sem, Store[doc](m), func(d *doc) error {
		d.Items = append(d.Items, item{ID: "a"})
		return m.Save(d)
	}))
	want := errors.New("refused")
	assert.ErrorIs(t, Update(ctx, sem, Store[doc](m), func(*doc) error { return want }), want)
	d, err := m.Load()
	require.NoError(t, err)
	assert.Equal(t, []item{{ID: "a"}}, d.Items)

	sem <- struct{}{} // held elsewhere: waiting honours ctx
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, Update(short, sem, Store[doc](m), func(*doc) error { return nil }), context.DeadlineExceeded)
}

func TestPrepareDirAndQuarantine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, PrepareDir(dir, "test"))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), st.Mode().Perm())
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	err = PrepareDir(notDir, "test")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "test: "), err.Error())

	now := time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)
	_, err = Quarantine(dir, "f.json", "test", now)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	for _, want := range []string{"f.json.corrupt-20261121T222300Z", "f.json.corrupt-20261121T222300Z-2"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f.json"), []byte("x"), 0o600))
		moved, err := Quarantine(dir, "f.json", "test", now)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, want), moved)
	}
}
