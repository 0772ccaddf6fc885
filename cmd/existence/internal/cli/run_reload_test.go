package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineWaiter is an io.Writer that keeps what is written and lets a test
// wait, with a deadline, for a text to appear.
type lineWaiter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	change chan struct{}
}

func newLineWaiter() *lineWaiter { return &lineWaiter{change: make(chan struct{}, 1)} }

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	select {
	case w.change <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait returns once the written text holds s n times, failing after 30 s.
func (w *lineWaiter) wait(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for strings.Count(w.String(), s) < n {
		select {
		case <-w.change:
		case <-deadline:
			t.Fatalf("no %q (×%d) within 30 s; got:\n%s", s, n, w.String())
		}
	}
}

// TestRunAgentsReloads: while `run -agents` runs, a changed definition
// is applied to the running agent (its next cycle reads the new role and
// temperature), its state kept; a definition that no longer loads is
// reported with its file and line and the running one kept.
func TestRunAgentsReloads(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	def := filepath.Join("defs", "a", "agent.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(def), 0o755))
	require.NoError(t, os.WriteFile(def, []byte("id: a\nname: Alpha\nrole: You keep the OLD ROLE.\n"), 0o644))

	o, err := parseRunFlags([]string{"-agents", "defs", "-llm-url", "standin:", "-heartbeat", "1s", "-json"}, io.Discard)
	require.NoError(t, err)
	rec := &bodyRecorder{next: http.DefaultTransport}
	o.httpClient = &http.Client{Transport: rec} // the stand-in on loopback, its requests recorded
	o.maxGoalDuration = -1
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out, errw := newLineWaiter(), newLineWaiter()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runTrio(ctx, withStdin(o, stdinR), out, errw) }()
	defer func() {
		cancel()
		stdinW.Close()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the run did not stop")
		}
	}()

	out.wait(t, `"kind":"goal_ended"`, 1) // the first cycle's goal is done
	require.NoError(t, os.WriteFile(def, []byte("id: a\nname: Alpha\nrole: You keep the NEW ROLE.\ntemperature: 0.3\n"), 0o644))
	errw.wait(t, "agents: a reloaded from", 1)

	require.NoError(t, os.WriteFile(def, []byte("id: a\nname: Alpha\ntemperature: hot\n"), 0o644))
	errw.wait(t, def+":3:", 1)
	assert.Contains(t, errw.String(), "the running definitions are kept")

	n := strings.Count(out.String(), `"kind":"goal_chosen"`)
	out.wait(t, `"kind":"goal_chosen"`, n+1) // a cycle after the reload
	var cycles []string
	for _, b := range rec.all() {
		if strings.Contains(b, `"format":{`) {
			cycles = append(cycles, b)
		}
	}
	require.GreaterOrEqual(t, len(cycles), 2)
	assert.Contains(t, cycles[0], "OLD ROLE")
	last := cycles[len(cycles)-1]
	assert.Contains(t, last, "NEW ROLE", "the changed definition, not the broken one")
	assert.Contains(t, last, `"temperature":0.3`)
	assert.Contains(t, last, "WHAT YOU'VE BEEN DOING LATELY", "its state kept: the first goal is in its history")
}

// bodyRecorder records the bodies of the requests it passes on.
type bodyRecorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies []string
}

func (r *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func (r *bodyRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// withStdin sets o's host-message input.
func withStdin(o *runOptions, r io.Reader) *runOptions { o.stdin = r; return o }
