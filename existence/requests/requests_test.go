package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// queues returns a memory queue and a file queue with the same options.
func queues(t *testing.T, opts Options) map[string]*Queue {
	t.Helper()
	fq, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	return map[string]*Queue{"memory": NewMemory(opts), "file": fq}
}

func TestLifecycle(t *testing.T) {
	for name, q := range queues(t, Options{Now: (&clock{t: t0}).now}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, err := q.Submit(ctx, "scout", Approval, "  publish the notes  ")
			require.NoError(t, err)
			assert.Equal(t, Request{ID: "req-000001", Agent: "scout", Kind: Approval, Text: "publish the notes", Status: Pending, Created: t0}, r)
			r2, err := q.Submit(ctx, "builder", Question, "which format?")
			require.NoError(t, err)
			assert.Equal(t, "req-000002", r2.ID)

			open, err := q.List(ctx, Filter{Status: Pending})
			require.NoError(t, err)
			assert.Len(t, open, 2)
			mine, err := q.List(ctx, Filter{Agent: "builder"})
			require.NoError(t, err)
			require.Len(t, mine, 1)
			assert.Equal(t, "req-000002", mine[0].ID)

			got, err := q.Answer(ctx, "1", Approved, "")
			require.NoError(t, err)
			assert.Equal(t, Approved, got.Status)
			assert.Equal(t, t0, got.Ended)
			_, err = q.Answer(ctx, "req-000001", Rejected, "changed my mind")
			assert.ErrorIs(t, err, ErrEnded)
			g, err := q.Get(ctx, "#1")
			require.NoError(t, err)
			assert.Equal(t, Approved, g.Status, "a refused second answer changes nothing")

			_, err = q.Answer(ctx, "2", Answered, "   ")
			assert.ErrorIs(t, err, ErrInvalid)
			_, err = q.Answer(ctx, "2", Pending, "x")
			assert.ErrorIs(t, err, ErrInvalid)
			_, err = q.Answer(ctx, "99", Answered, "x")
			assert.ErrorIs(t, err, ErrNotFound)
			_, err = q.Get(ctx, "req-000099")
			assert.ErrorIs(t, err, ErrNotFound)
		})
	}
}

func TestSubmitRefusals(t *testing.T) {
	tests := []struct {
		name        string
		agent, text string
		kind        Kind
		want        error
	}{
		{"blank text", "scout", " \n ", Question, ErrInvalid},
		{"bad kind", "scout", "x", Kind("wish"), ErrInvalid},
		{"bad agent", "Not An Id", "x", Question, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMemory(Options{}).Submit(context.Background(), tt.agent, tt.kind, tt.text)
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestMaxOpenAndTrim(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: t0}
	q := NewMemory(Options{Now: c.now, MaxOpen: 2, MaxRequests: 1, MaxText: 5})
	r, err := q.Submit(ctx, "scout", Question, "abcdefgh")
	require.NoError(t, err)
	assert.Equal(t, "abcde", r.Text, "cut to MaxText characters")
	_, err = q.Submit(ctx, "scout", Question, "b")
	require.NoError(t, err)
	_, err = q.Submit(ctx, "scout", Question, "c")
	assert.ErrorIs(t, err, ErrFull)
	_, err = q.Submit(ctx, "analyst", Question, "c")
	assert.NoError(t, err, "the limit is per agent")

	c.add(time.Minute)
	_, err = q.Answer(ctx, "1", Answered, "one")
	require.NoError(t, err)
	c.add(time.Minute)
	_, err = q.Answer(ctx, "2", Answered, "two")
	require.NoError(t, err)
	all, err := q.List(ctx, Filter{})
	require.NoError(t, err)
	var ids []string
	for _, r := range all {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"req-000002", "req-000003"}, ids, "the oldest ended request is dropped, the pending one kept")
}

func TestParseKindAndNormalizeID(t *testing.T) {
	for in, want := range map[string]Kind{"approval": Approval, "Question": Question, "build request": BuildRequest, "build-request": BuildRequest, "build": BuildRequest} {
		k, err := ParseKind(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, k, in)
	}
	_, err := ParseKind("wish")
	assert.ErrorIs(t, err, ErrInvalid)
	for in, want := range map[string]string{"3": "req-000003", " #3 ": "req-000003", "req-3": "req-000003", "req-000003": "req-000003", "abc": "abc", "0": "0"} {
		assert.Equal(t, want, NormalizeID(in), in)
	}
}

func TestFileDurableAcrossQueues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := Open(dir, Options{})
	require.NoError(t, err)
	b, err := Open(dir, Options{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := a
			if i%2 == 1 {
				q = b
			}
			_, err := q.Submit(ctx, fmt.Sprintf("agent-%d", i), Question, "q")
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	c, err := Open(dir, Options{})
	require.NoError(t, err)
	all, err := c.List(ctx, Filter{})
	require.NoError(t, err)
	assert.Len(t, all, 20, "no request lost between two queues on one file")
	fi, err := os.Stat(filepath.Join(dir, FileName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestCorruptFileIsNeverOverwritten(t *testing.T) {
	good := `{"version":1,"seq":1,"requests":[{"id":"req-000001","agent":"scout","kind":"question","text":"x","status":"pending","created":"2026-11-23T09:00:00Z"}]}`
	tests := []struct {
		name, data, reason string
	}{
		{"empty", "", "empty file"},
		{"syntax", "{", "truncated JSON"},
		{"unknown field", `{"version":1,"seq":0,"requests":[],"extra":1}`, `unknown field "extra"`},
		{"newer version", `{"version":9,"seq":0,"requests":[]}`, "newer than this SDK"},
		{"no version", `{"seq":0,"requests":[]}`, "no schema version"},
		{"bad kind", strings.Replace(good, `"question"`, `"wish"`, 1), `unknown kind "wish"`},
		{"bad status", strings.Replace(good, `"pending"`, `"lost"`, 1), `unknown status "lost"`},
		{"answered without time", strings.Replace(good, `"pending"`, `"answered"`, 1), "no ended time"},
		{"duplicate", strings.Replace(good, `]}`, `,`+good[strings.Index(good, "[")+1:strings.LastIndex(good, "]")]+`]}`, 1), "duplicate id"},
		{"trailing", good + "{}", "data after the JSON document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			require.NoError(t, os.WriteFile(path, []byte(tt.data), 0o600))
			_, err := Open(dir, Options{})
			require.ErrorIs(t, err, identity.ErrCorrupt)
			var ce *identity.CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, path, ce.Path)
			assert.Contains(t, ce.Reason, tt.reason)
			got, _ := os.ReadFile(path)
			assert.Equal(t, tt.data, string(got), "left untouched")
		})
	}
	t.Run("good file opens", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte(good), 0o600))
		q, err := Open(dir, Options{})
		require.NoError(t, err)
		r, err := q.Get(context.Background(), "1")
		require.NoError(t, err)
		assert.Equal(t, "x", r.Text)
	})
	t.Run("corrupted after open", func(t *testing.T) {
		dir := t.TempDir()
		q, err := Open(dir, Options{})
		require.NoError(t, err)
		path := filepath.Join(dir, FileName)
		require.NoError(t, os.WriteFile(path, []byte("{oops"), 0o600))
		_, err = q.Submit(context.Background(), "scout", Question, "x")
		assert.ErrorIs(t, err, identity.ErrCorrupt)
		got, _ := os.ReadFile(path)
		assert.Equal(t, "{oops", string(got))
	})
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		q, err := Open(dir, Options{})
		require.NoError(t, err)
		q.store.(*fileStore).max = 300
		ctx := context.Background()
		_, err = q.Submit(ctx, "scout", Question, strings.Repeat("x", 400))
		assert.ErrorIs(t, err, ErrFull)
	})
}

// inbox records delivered messages.
type inbox struct{ got []identity.AgentMessage }

func (i *inbox) DeliverToInbox(_ context.Context, m identity.AgentMessage) error {
	i.got = append(i.got, m)
	return nil
}

func TestToolsAndDeliver(t *testing.T) {
	c := &clock{t: t0}
	q := NewMemory(Options{Now: c.now})
	ctx := toolloop.WithCaller(context.Background(), existence.Assignment{AgentID: "builder", AgentName: "Vault"})
	ask, check := AskHuman(q), CheckRequest(q)
	assert.Equal(t, "ask_human", ask.Name())
	assert.Equal(t, "check_request", check.Name())

	out, err := ask.Call(ctx, json.RawMessage(`{"kind":"build_request","text":"install a C compiler"}`))
	require.NoError(t, err)
	assert.Contains(t, out, "req-000001")
	_, err = ask.Call(ctx, json.RawMessage(`{"kind":"wish","text":"x"}`))
	assert.Error(t, err, "a kind outside the enum is refused")
	_, err = ask.Call(context.Background(), json.RawMessage(`{"kind":"question","text":"x"}`))
	assert.Error(t, err, "no caller")

	c.add(90 * time.Minute)
	out, err = check.Call(ctx, json.RawMessage(`{"id":"req-000001"}`))
	require.NoError(t, err)
	assert.Equal(t, `req-000001 (build_request, pending for 1h30m0s): "install a C compiler"`, out)
	other := toolloop.WithCaller(context.Background(), existence.Assignment{AgentID: "scout"})
	_, err = check.Call(other, json.RawMessage(`{"id":"1"}`))
	assert.True(t, errors.Is(err, ErrNotFound), "another agent's request is not found: %v", err)

	r, err := q.Answer(context.Background(), "1", Rejected, "no compilers here")
	require.NoError(t, err)
	out, err = check.Call(ctx, json.RawMessage(`{"id":"1"}`))
	require.NoError(t, err)
	assert.Equal(t, `req-000001 (build_request: "install a C compiler") rejected: no compilers here`, out)

	var ib inbox
	require.NoError(t, Deliver(context.Background(), &ib, r))
	require.Len(t, ib.got, 1)
	assert.Equal(t, identity.AgentMessage{From: "your human", Text: `your request req-000001 (build_request: "install a C compiler") was rejected: no compilers here`, At: t0.Add(90 * time.Minute)}, ib.got[0])
	pending, err := q.Submit(context.Background(), "builder", Question, "x")
	require.NoError(t, err)
	assert.ErrorIs(t, Deliver(context.Background(), &ib, pending), ErrInvalid)
}
