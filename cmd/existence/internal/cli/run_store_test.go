package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/task"
)

// TestTrioSQLiteStore: -store sqlite:PATH keeps every agent, their goals
// and the tasks in one file, and -show prints a state from it.
func TestTrioSQLiteStore(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, map[string][]answer{
		"Cedar":  {{text: `{"action":"goal","content":"map the workspace","reasoning":"r","worldview_update":"Maps come first, then the tools."}`}},
		"Cipher": {{text: `{"action":"goal","content":"review the map","reasoning":"r"}`}},
		"Vault":  {{text: `{"action":"goal","content":"build a tool","reasoning":"r"}`}},
	})
	_, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-store", "sqlite:trio.db", "-task", "write a README")...)
	require.NoError(t, err, stderr)
	_, err = os.Stat("trio-state")
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing in the default directory")

	s, err := sqlitestore.Open(context.Background(), "trio.db", sqlitestore.Options{})
	require.NoError(t, err)
	ids, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"analyst", "builder", "scout"}, ids)
	tasks, err := s.Tasks().List(context.Background())
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	assert.NotEqual(t, task.Pending, tasks[0].Status, "an agent took the task")
	require.NoError(t, s.Close())

	out, _, err := runTrioTest(t, "-store", "sqlite:trio.db", "-show", "scout")
	require.NoError(t, err)
	var st identity.AgentState
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, "Maps come first, then the tools.", st.Identity.Worldview)
	assert.Contains(t, out, "\n  \"identity\": {", "indented")
}

// TestTrioShow: -show prints the compact stored document pretty; an
// unknown agent is an error naming it.
func TestTrioShow(t *testing.T) {
	t.Chdir(t.TempDir())
	fs, err := filestore.Open("trio-state", filestore.Options{})
	require.NoError(t, err)
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC))}
	st.Identity.Worldview = "Maps <first>."
	require.NoError(t, fs.Save(context.Background(), st))
	raw, err := os.ReadFile(filepath.Join("trio-state", "scout.json"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(raw), "\n"), "stored compact, on one line")

	out, _, err := runTrioTest(t, "-show", "scout")
	require.NoError(t, err)
	assert.Contains(t, out, "\"worldview\": \"Maps <first>.\"")
	assert.Greater(t, strings.Count(out, "\n"), 5)

	_, _, err = runTrioTest(t, "-show", "nobody")
	require.ErrorIs(t, err, identity.ErrNotFound)
	assert.Contains(t, err.Error(), "nobody")
}

// TestTrioFreshOnCorruptTasks: a corrupt tasks.json stops the trio with an
// error naming it; -fresh-on-corrupt moves it aside and runs.
func TestTrioFreshOnCorruptTasks(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, map[string][]answer{
		"Cedar":  {{text: `{"action":"goal","content":"map","reasoning":"r"}`}},
		"Cipher": {{text: `{"action":"goal","content":"review","reasoning":"r"}`}},
		"Vault":  {{text: `{"action":"goal","content":"build","reasoning":"r"}`}},
	})
	require.NoError(t, os.MkdirAll("trio-state", 0o700))
	require.NoError(t, os.WriteFile(filepath.Join("trio-state", "tasks.json"), []byte(`{"version":1,"tasks":[`), 0o600))
	_, _, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1")...)
	require.ErrorIs(t, err, identity.ErrCorrupt)
	assert.Contains(t, err.Error(), filepath.Join("trio-state", "tasks.json"))
	assert.Contains(t, err.Error(), "run again with -fresh-on-corrupt", "the error says how to recover")

	_, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-fresh-on-corrupt")...)
	require.NoError(t, err, stderr)
	moved, err := filepath.Glob(filepath.Join("trio-state", "tasks.json.corrupt-*"))
	require.NoError(t, err)
	require.Len(t, moved, 1, "moved aside, kept")
	b, err := os.ReadFile(moved[0])
	require.NoError(t, err)
	assert.Equal(t, `{"version":1,"tasks":[`, string(b))
}

// TestTrioCorruptStateSaysHowToRecover: a corrupt agent state stops the
// trio with an error naming the file and -fresh-on-corrupt, and leaves
// the file as it is; a corrupt requests.json, which -fresh-on-corrupt
// does not cover, says to move it aside by hand; a dry run, which writes
// nothing, gives no advice to write.
func TestTrioCorruptStateSaysHowToRecover(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, map[string][]answer{
		"Cedar":  {{text: `{"action":"goal","content":"map","reasoning":"r"}`}},
		"Cipher": {{text: `{"action":"goal","content":"review","reasoning":"r"}`}},
		"Vault":  {{text: `{"action":"goal","content":"build","reasoning":"r"}`}},
	})
	require.NoError(t, os.MkdirAll("trio-state", 0o700))
	scout := filepath.Join("trio-state", "scout.json")
	require.NoError(t, os.WriteFile(scout, []byte(`{"identity":`), 0o600))
	_, _, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1")...)
	require.ErrorIs(t, err, identity.ErrCorrupt)
	assert.Contains(t, err.Error(), scout)
	assert.Contains(t, err.Error(), "run again with -fresh-on-corrupt")
	b, err := os.ReadFile(scout)
	require.NoError(t, err)
	assert.Equal(t, `{"identity":`, string(b), "left as it is")

	_, _, err = runTrioTest(t, trioArgs(t, srv.URL, "-dry-run")...)
	require.ErrorIs(t, err, identity.ErrCorrupt)
	assert.NotContains(t, err.Error(), "-fresh-on-corrupt")

	require.NoError(t, os.Remove(scout))
	require.NoError(t, os.WriteFile(filepath.Join("trio-state", "requests.json"), []byte(`{"version":1,"requests":[`), 0o600))
	_, _, err = runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1")...)
	require.ErrorIs(t, err, identity.ErrCorrupt)
	assert.Contains(t, err.Error(), "move it aside by hand")
}

// TestTrioPostgresStore: -store postgres://... keeps the agents and the
// tasks in PostgreSQL (a real server started by internal/pgtest), and
// -show reads a state back from it.
func TestTrioPostgresStore(t *testing.T) {
	url := pgtest.New(t)
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, map[string][]answer{
		"Cedar":  {{text: `{"action":"goal","content":"map the workspace","reasoning":"r","worldview_update":"Maps come first, then the tools."}`}},
		"Cipher": {{text: `{"action":"goal","content":"review the map","reasoning":"r"}`}},
		"Vault":  {{text: `{"action":"goal","content":"build a tool","reasoning":"r"}`}},
	})
	_, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-store", url, "-task", "write a README")...)
	require.NoError(t, err, stderr)

	ctx := context.Background()
	s, err := pgstore.Open(ctx, url, pgstore.Options{})
	require.NoError(t, err)
	defer s.Close()
	ids, err := s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"analyst", "builder", "scout"}, ids)
	tasks, err := s.Tasks().List(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	assert.NotEqual(t, task.Pending, tasks[0].Status, "an agent took the task")

	out, _, err := runTrioTest(t, "-store", url, "-show", "scout")
	require.NoError(t, err)
	var st identity.AgentState
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, "Maps come first, then the tools.", st.Identity.Worldview)

	// A message another process left in the database (existence serve's
	// POST /api/messages) reaches the agent when the trio starts.
	_, err = s.Send(ctx, "scout", true, identity.AgentMessage{Text: "hello from the dashboard"})
	require.NoError(t, err)
	out, stderr, err = runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-store", url)...)
	require.NoError(t, err, stderr)
	heard := false
	for _, e := range events(t, out) {
		heard = heard || e.Kind == event.Message && e.AgentID == "scout" && e.Direction == "host" && e.Text == "hello from the dashboard"
	}
	assert.True(t, heard, "the host message was delivered:\n%s", out)
	pending, err := s.Pending(ctx, "scout")
	require.NoError(t, err)
	assert.Empty(t, pending, "acknowledged by the agent's save")
}

// cancelOnWrite cancels a context at the first write: the test's Ctrl-C
// once the trio has printed its first event.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	return w.buf.Write(p)
}

// TestTrioSaysWhereItSaved: a clean stop, by Ctrl-C (the context ends)
// or at -cycles, ends with one line saying that the agents' state is saved
// and where; a postgres:// store's password is not printed.
func TestTrioSaysWhereItSaved(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, map[string][]answer{
		"Cedar":  {{text: `{"action":"goal","content":"map","reasoning":"r"}`}},
		"Cipher": {{text: `{"action":"goal","content":"review","reasoning":"r"}`}},
		"Vault":  {{text: `{"action":"goal","content":"build","reasoning":"r"}`}},
	})
	const want = "trio: stopped; the state of scout, analyst, builder is saved in ./trio-state (run again with the same -store to continue)\n"

	o, err := parseRunFlags(trioArgs(t, srv.URL), io.Discard) // no -cycles: until Ctrl-C
	require.NoError(t, err)
	o.retry = middleware.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	o.maxGoalDuration = -1
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	require.NoError(t, runTrio(ctx, o, out, &stderr))
	assert.Equal(t, 1, strings.Count(stderr.String(), "is saved in"), stderr.String())
	assert.True(t, strings.HasSuffix(stderr.String(), want), "the last line:\n%s", stderr.String())
	_, err = os.Stat(filepath.Join("trio-state", "scout.json"))
	require.NoError(t, err, "saved where it says")

	_, errOut, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1")...)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(errOut, want), errOut)

	assert.Equal(t, "postgres://trio:xxxxx@db:5432/agents", storeName("postgres://trio:s3cret@db:5432/agents"))
	assert.Equal(t, "sqlite:trio.db", storeName("sqlite:trio.db"))
}
