package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/suffering"
	"github.com/existence-loop/sdk/task"
)

var serveT0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// trioStates are the trio as another process left them in its store:
// Cedar pursuing a goal under a stressor, Cipher after a goal, Vault fresh.
func trioStates() []*identity.AgentState {
	scout := &identity.AgentState{Identity: identity.New("scout", "Cedar", serveT0)}
	scout.Identity.Goals = []identity.Goal{{ID: "g1", Objective: "map the workspace", Status: identity.Active, Started: serveT0}}
	scout.Suffering.Active = []suffering.Stressor{{Type: suffering.Invisibility, Description: "nobody reads my notes", Severity: 0.4, Peak: 0.4, Onset: serveT0}}
	analyst := &identity.AgentState{Identity: identity.New("analyst", "Cipher", serveT0)}
	analyst.Identity.Goals = []identity.Goal{{ID: "g2", Objective: "review the map", Status: identity.Done, Started: serveT0, Ended: serveT0.Add(time.Minute), Outcome: "wrote analyst/review.md"}}
	builder := &identity.AgentState{Identity: identity.New("builder", "Vault", serveT0)}
	return []*identity.AgentState{scout, analyst, builder}
}

func saveAll(t *testing.T, s identity.Store, states []*identity.AgentState) {
	t.Helper()
	for _, st := range states {
		require.NoError(t, s.Save(context.Background(), st))
	}
}

// startServe runs `existence serve` with args until the test ends and
// returns the monitor's base URL and its stderr.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	fs := newFlagSet("serve")
	o := &serveOptions{}
	o.flags(fs)
	require.NoError(t, fs.Parse(append([]string{"-http", "127.0.0.1:0", "-http-token", ""}, args...)))
	require.NoError(t, o.check())
	ready := make(chan string, 1)
	o.ready = func(u string) { ready <- u }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stderr := &syncBuffer{}
	go func() { done <- serve(ctx, o, &env{prog: "existence serve", stdout: io.Discard, stderr: stderr}) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case u := <-ready:
		return u, stderr
	case err := <-done:
		done <- err
		t.Fatalf("serve stopped: %v\n%s", err, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}
	return "", nil
}

// call sends a request to the monitor at base, as the dashboard would
// with no token (the page's CSRF token on POST), and returns the status
// and body.
func call(t *testing.T, base, method, path, body string) (int, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	hc := &http.Client{Jar: jar} // a browser: the page's session cookie goes with the POST
	var csrf string
	if method != "GET" {
		resp, err := hc.Get(base + "/")
		require.NoError(t, err)
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		csrf = csrfToken(string(page))
		require.NotEmpty(t, csrf)
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf != "" {
		req.Header.Set(hostaccess.CSRFHeader, csrf)
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestServe serves the agents another process left in a directory and in
// a SQLite file: the API lists them, a task lands in the store's queue, a
// host message is refused with the reason.
func TestServe(t *testing.T) {
	tests := []struct {
		kind  string
		open  func(t *testing.T, dir string) (spec string, s identity.Store, tasks func() []task.Task)
		wantN string
	}{
		{"dir", func(t *testing.T, dir string) (string, identity.Store, func() []task.Task) {
			spec := filepath.Join(dir, "trio-state")
			s, err := filestore.Open(spec, filestore.Options{})
			require.NoError(t, err)
			return spec, s, func() []task.Task {
				q, err := taskqueue.Open(spec, taskqueue.Options{})
				require.NoError(t, err)
				ts, err := q.List(context.Background())
				require.NoError(t, err)
				return ts
			}
		}, "a directory store cannot carry a message"},
		{"sqlite", func(t *testing.T, dir string) (string, identity.Store, func() []task.Task) {
			path := filepath.Join(dir, "trio.db")
			s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return "sqlite:" + path, s, func() []task.Task {
				ts, err := s.Tasks().List(context.Background())
				require.NoError(t, err)
				return ts
			}
		}, "a SQLite store cannot carry a message"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			spec, store, tasks := tt.open(t, t.TempDir())
			saveAll(t, store, trioStates())
			base, stderr := startServe(t, "-store", spec, "-refresh", "1h")
			assert.Contains(t, stderr.String(), "existence serve: dashboard at "+base+"/")
			assert.Contains(t, stderr.String(), "(3 agents)")

			status, body := call(t, base, "GET", "/api/agents?sort=name", "")
			require.Equal(t, 200, status, body)
			var page monitor.AgentsPage
			require.NoError(t, json.Unmarshal([]byte(body), &page))
			require.Equal(t, 3, page.Total)
			byID := map[string]existence.Status{}
			for _, a := range page.Agents {
				byID[a.ID] = a.Status
			}
			assert.Equal(t, "map the workspace", byID["scout"].Goal)
			assert.Equal(t, "prominent", byID["scout"].Level)
			assert.Equal(t, "DONE: wrote analyst/review.md", byID["analyst"].LastOutcome)
			assert.Equal(t, "Vault", byID["builder"].Name)

			status, body = call(t, base, "GET", "/api/agents/analyst", "")
			require.Equal(t, 200, status, body)
			assert.Contains(t, body, `"objective":"review the map"`)

			status, body = call(t, base, "POST", "/api/tasks", `{"description":"write design/index.md","agent":"builder"}`)
			require.Equal(t, 201, status, body)
			ts := tasks()
			require.Len(t, ts, 1, "the task is in the store's queue")
			assert.Equal(t, "write design/index.md", ts[0].Description)
			assert.Equal(t, "builder", ts[0].Agent)

			status, body = call(t, base, "POST", "/api/messages", `{"text":"hello"}`)
			assert.Equal(t, 501, status)
			assert.Contains(t, body, tt.wantN)
			status, _ = call(t, base, "GET", "/api/agents/nobody", "")
			assert.Equal(t, 404, status)
		})
	}
}

// TestServePostgres: through PostgreSQL a host message waits in the
// database for the process that runs the agent, and the live leases show
// who runs which agent.
func TestServePostgres(t *testing.T) {
	url := pgtest.New(t)
	ctx := context.Background()
	s, err := pgstore.Open(ctx, url, pgstore.Options{Owner: "runner-a"})
	require.NoError(t, err)
	defer s.Close()
	saveAll(t, s, trioStates())
	unlock, err := s.Lock("scout") // scout runs in "another process"
	require.NoError(t, err)
	defer unlock()

	base, _ := startServe(t, "-store", url, "-refresh", "1h")
	status, body := call(t, base, "POST", "/api/messages", `{"text":"hello from the dashboard","agents":["scout"]}`)
	require.Equal(t, 202, status, body)
	pending, err := s.Pending(ctx, "scout")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.True(t, pending[0].Host)
	assert.Equal(t, "hello from the dashboard", pending[0].Text)

	status, body = call(t, base, "GET", "/api/agents/scout", "")
	require.Equal(t, 200, status, body)
	var detail monitor.AgentDetail
	require.NoError(t, json.Unmarshal([]byte(body), &detail))
	require.NotNil(t, detail.Status.Lease)
	assert.Equal(t, "runner-a", detail.Status.Lease.Owner)
	status, _ = call(t, base, "POST", "/api/messages", `{"text":"x","agents":["nobody"]}`)
	assert.Equal(t, 404, status)
}

func TestServeErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing directory", []string{"-store", filepath.Join(t.TempDir(), "none")}, 1, "nothing to watch"},
		{"missing sqlite file", []string{"-store", "sqlite:" + filepath.Join(t.TempDir(), "none.db")}, 1, "nothing to watch"},
		{"bad store", []string{"-store", "mysql://x"}, 2, "unknown scheme"},
		{"bad refresh", []string{"-refresh", "0s"}, 2, "-refresh must be positive"},
		{"bad address", []string{"-http", "8080"}, 2, `-http "8080"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"serve"}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// TestServeDerivesEvents: between two refreshes, the goals chosen and
// ended and a new worldview become events; the first sight of an agent
// derives none, and an unreadable state keeps the last status.
func TestServeDerivesEvents(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	saveAll(t, store, trioStates())
	var got []event.Event
	var logged bytes.Buffer
	src := newStoreSource(store, "dir", slog.New(slog.NewTextHandler(&logged, nil)))
	src.observe = func(e event.Event) { got = append(got, e) }
	require.NoError(t, src.refresh(ctx))
	assert.Empty(t, got, "the first refresh is the baseline")

	scout, err := store.Load(ctx, "scout")
	require.NoError(t, err)
	g := &scout.Identity.Goals[0]
	g.Status, g.Ended, g.Outcome = identity.Done, serveT0.Add(time.Minute), "wrote scout/map.md"
	scout.Identity.Goals = append(scout.Identity.Goals,
		identity.Goal{ID: "g3", Objective: "explore the workspace and build something useful", Status: identity.Failed, Started: serveT0.Add(2 * time.Minute), Ended: serveT0.Add(3 * time.Minute), Outcome: "no action taken", Fallback: true, Cause: "unavailable: cannot reach Ollama at http://127.0.0.1:11434"},
		identity.Goal{ID: "g4", Objective: "index the designs", Status: identity.Active, Started: serveT0.Add(4 * time.Minute)})
	scout.Identity.Worldview = "Maps come first."
	scout.UpdatedAt = serveT0.Add(4 * time.Minute)
	require.NoError(t, store.Save(ctx, scout))
	require.NoError(t, src.refresh(ctx))

	var lines []string
	for _, e := range got {
		assert.Equal(t, "scout", e.AgentID)
		lines = append(lines, e.String())
	}
	assert.Equal(t, []string{
		"09:01:00 Cedar 🏁 [DONE] wrote scout/map.md",
		"09:02:00 Cedar 🎯 explore the workspace and build something useful — fallback goal: the model failed (unavailable)",
		"09:03:00 Cedar 🏁 [FAILED] no action taken",
		"09:04:00 Cedar 🎯 index the designs",
		"09:04:00 Cedar 🧠 Maps come first.",
	}, lines)
	assert.InDelta(t, 0.4, got[3].Load, 1e-9, "a goal event carries the load, for the chart")

	// A corrupt state keeps the agent's last status and is logged once.
	got = nil
	broken := &brokenStore{Store: store, broken: "analyst"}
	src.store = broken
	require.NoError(t, src.refresh(ctx))
	require.NoError(t, src.refresh(ctx))
	statuses, err := src.Statuses(ctx)
	require.NoError(t, err)
	require.Len(t, statuses, 3)
	assert.Equal(t, "DONE: wrote analyst/review.md", statuses[0].LastOutcome, "analyst, from the last good load")
	assert.Equal(t, 1, strings.Count(logged.String(), "loading an agent's state failed"))
	assert.Empty(t, got)
}

// brokenStore fails to load one agent, as a corrupt document does.
type brokenStore struct {
	*memstore.Store
	broken string
}

func (b *brokenStore) Load(ctx context.Context, id string) (*identity.AgentState, error) {
	if id == b.broken {
		return nil, &identity.CorruptError{Path: id + ".json", Reason: "unexpected end of JSON input"}
	}
	return b.Store.Load(ctx, id)
}

// TestExposureRefused: run and serve refuse -http on a non-loopback
// address without -http-token (exit 2, naming the flag), unless the
// operator opts out for a proxy that authenticates.
func TestExposureRefused(t *testing.T) {
	for _, tt := range []struct {
		addr, token string
		optOut      bool
		refused     bool
	}{
		{"127.0.0.1:8080", "", false, false},
		{"localhost:8080", "", false, false},
		{"[::1]:8080", "", false, false},
		{"0.0.0.0:8080", "", false, true},
		{":8080", "", false, true},
		{"192.168.1.5:8080", "", false, true},
		{"0.0.0.0:8080", "f3a9c01e7b2d8645", false, false},
		{"0.0.0.0:8080", "aaaaaaaaaaaaaaaa", false, true},
		{"0.0.0.0:8080", "", true, false},
		{"0.0.0.0:8080", "s3cret", false, true},
		{"0.0.0.0:8080", "x", false, true},
		{"0.0.0.0:8080", "                ", false, true},
		{"0.0.0.0:8080", "x", true, true},
		{"127.0.0.1:8080", "x", false, false},
	} {
		err := checkExposure(tt.addr, tt.token, tt.optOut)
		assert.Equal(t, tt.refused, err != nil, "%s %q %v", tt.addr, tt.token, tt.optOut)
		if err != nil {
			assert.Contains(t, err.Error(), "-http-token")
			if tt.token == "" {
				assert.Contains(t, err.Error(), "-"+noTokenFlag)
			} else {
				assert.ErrorIs(t, err, hostaccess.ErrWeakToken)
			}
		}
	}
	for _, cmd := range [][]string{{"run", "-http", "0.0.0.0:0", "-dry-run"}, {"serve", "-http", "0.0.0.0:0"}} {
		t.Setenv("EXISTENCE_TOKEN", "")
		var out, errb strings.Builder
		code := Main(cmd, strings.NewReader(""), &out, &errb)
		assert.Equal(t, 2, code, "%v", cmd)
		assert.Contains(t, errb.String(), "set -http-token", "%v", cmd)
	}
	// `existence run -http 0.0.0.0:PORT -http-token x` is refused, and so
	// is a token of spaces, from the flag or the environment.
	for _, cmd := range [][]string{
		{"run", "-http", "0.0.0.0:0", "-http-token", "x", "-dry-run"},
		{"run", "-http", "0.0.0.0:0", "-http-token", "                    ", "-dry-run"},
		{"serve", "-http", "0.0.0.0:0", "-http-token", "x"},
		{"run", "-http", "0.0.0.0:0", "-dry-run"}, // $EXISTENCE_TOKEN of spaces
		{"run", "-http", "0.0.0.0:0", "-http-token", "aaaaaaaaaaaaaaaa", "-dry-run"},
		{"serve", "-http", "0.0.0.0:0", "-http-token", "abcdefghijklmnopqrst"},
	} {
		t.Setenv("EXISTENCE_TOKEN", "                    ")
		var out, errb strings.Builder
		code := Main(cmd, strings.NewReader(""), &out, &errb)
		assert.Equal(t, 2, code, "%q", cmd)
		assert.Contains(t, errb.String(), "too weak", "%q", cmd)
		assert.Contains(t, errb.String(), "-http-token auto is better", "%q", cmd)
	}
}
