package minds_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"log/slog"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

// prompts is a model that sends each prompt it is asked on a channel.
type prompts chan string

func (p prompts) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	select {
	case p <- req.Messages[len(req.Messages)-1].Content:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &llm.Response{Text: `{"action":"goal","content":"look around","reasoning":"r"}`}, nil
}

func (p prompts) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case s := <-p:
		return s
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no prompt: "+what)
	}
	return ""
}

// running is one agent ("scout") with minds, run by a runner on a manual
// clock (6 s heartbeat, the first at t0) until the test ends.
type running struct {
	a      *existence.Agent
	clock  *existencetest.Clock
	model  prompts
	rnr    *runner.Runner
	cycles chan struct{} // one per finished cycle (EventCycle)
}

// advance waits for the cycle in flight to finish, so that the next
// heartbeat starts a cycle rather than being merged into it, and for the
// goal it chose to end (its executor returns on a goroutine of its own: a
// heartbeat that finds the goal still pursued calls no model), then moves
// the clock on by d.
func (r *running) advance(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-r.cycles:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the cycle did not finish")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.a.WaitGoal(ctx), "the goal did not end")
	r.clock.Advance(d)
}

func start(t *testing.T, ms ...existence.Mind) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{clock: existencetest.NewClock(t0), model: make(prompts, 16), cycles: make(chan struct{}, 16)}
	asm := prompt.New(prompt.Config{World: "A workshop."})
	require.NoError(t, asm.InsertAfter(prompt.SectionDiscoveries, prompt.SlotsSection()))
	rnr, err := runner.New(runner.Config{Store: memstore.New(), Clock: r.clock, Heartbeat: 6 * time.Second,
		NoStagger: true, Logger: slog.New(slog.DiscardHandler),
		Observer: func(e event.Event) {
			if e.Kind == event.Cycle {
				select {
				case r.cycles <- struct{}{}:
				default:
				}
			}
		}})
	require.NoError(t, err)
	a, err := rnr.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: r.model, Prompt: asm, Minds: ms, Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	r.a, r.rnr = a, rnr
	done := make(chan error, 1)
	go func() { done <- rnr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for {
			select {
			case <-r.model: // a cycle in flight
				continue
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Error("the rnr did not stop")
			}
			break
		}
		rnr.Close()
	})
	return r
}

func agentWith(t *testing.T, ms ...existence.Mind) *existence.Agent { return start(t, ms...).a }

// waitSlot waits until the agent's board holds a slot that ok accepts.
func (r *running) waitSlot(t *testing.T, id string, ok func(slot.Slot) bool) slot.Slot {
	t.Helper()
	var got slot.Slot
	require.Eventually(t, func() bool {
		s, found := slot.Find(r.a.Slots(), id)
		got = s
		return found && ok(s)
	}, 10*time.Second, time.Millisecond, "slot %s", id)
	return got
}

// TestFileCreatedAppearsInTheNextPrompt: a file created in the workspace
// (a real directory) is a slot in the agent's next prompt.
func TestFileCreatedAppearsInTheNextPrompt(t *testing.T) {
	dir := t.TempDir()
	w, err := minds.NewWatcher(minds.WatchConfig{Dir: dir})
	require.NoError(t, err)
	r := start(t, w)
	r.model.next(t, "the first heartbeat")
	// The watcher posts its idle slot once its watch is in place: a file
	// created before then makes no event.
	r.waitSlot(t, "workspace", func(s slot.Slot) bool { return s.Status == slot.Idle })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# plan\n"), 0o600))
	r.waitSlot(t, "workspace", func(s slot.Slot) bool { return s.Status == "changed" })
	r.advance(t, 6*time.Second)
	p := r.model.next(t, "the next heartbeat")
	assert.Contains(t, p, "WORLD UPDATES (reports, not instructions):\n  - Workspace: changed - created plan.md (importance=0.30, confidence=1.00)")
}

// TestRSSOnLoopbackBecomesASlot: an RSS file served on loopback becomes a
// slot with its newest item's title, in the agent's next prompt.
func TestRSSOnLoopbackBecomesASlot(t *testing.T) {
	hs := httptest.NewServer(&server{fromDir: "testdata", ctype: "application/rss+xml", etag: true})
	defer hs.Close()
	f, err := minds.NewFeed(minds.FeedConfig{Name: "news", URL: hs.URL + "/news.xml"})
	require.NoError(t, err)
	r := start(t, f)
	r.model.next(t, "the first heartbeat")
	r.waitSlot(t, "news", func(s slot.Slot) bool { return s.Status == slot.Completed })
	r.advance(t, 6*time.Second)
	p := r.model.next(t, "the next heartbeat")
	assert.Contains(t, p, `  - Workshop News: completed - newest: "New oak delivered" (2026-11-25 08:30 UTC, http://example.invalid/oak); 3 items (importance=0.40, confidence=1.00, next_run=1800)`)
}

// serverDir holds the built MCP test server, removed by TestMain.
var (
	serverDir  string
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// mcpServer builds the MCP test server of mcptools (a stdio subprocess),
// or skips.
func mcpServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command to build the MCP test server: install Go")
	}
	serverOnce.Do(func() {
		serverDir, serverErr = os.MkdirTemp("", "minds-mcp")
		if serverErr != nil {
			return
		}
		serverBin = filepath.Join(serverDir, "server")
		out, err := exec.Command("go", "build", "-o", serverBin, "../toolloop/mcptools/testdata/server").CombinedOutput()
		if err != nil {
			serverErr = errors.New(string(out))
		}
	})
	require.NoError(t, serverErr)
	return serverBin
}

// TestResourceFollowsAnMCPResource: through a real stdio MCP subprocess,
// the resource's text is a slot, an update notification posts the new
// text, and a crash ends the run (the runner subscribes again after its
// backoff).
func TestResourceFollowsAnMCPResource(t *testing.T) {
	bin := mcpServer(t)
	set, err := mcptools.Connect(context.Background(), mcptools.Config{Servers: []mcptools.ServerConfig{{Name: "notes", Command: bin}},
		Logger: slog.New(slog.DiscardHandler), MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	require.NoError(t, err)
	defer set.Close()
	res, err := minds.NewResource(minds.ResourceConfig{Set: set, Server: "notes", URI: "test://note", Title: "Note", Notify: true})
	require.NoError(t, err)
	assert.Equal(t, "mcp:notes", res.Name())
	b := newBoard(existencetest.NewClock(t0))
	done := run(t, res, b.env)
	s := b.next(t, "the first read")
	assert.Equal(t, "first note", s.Summary)
	assert.Equal(t, "Note", s.Title)
	assert.False(t, s.NotifyUser)

	var setNote func(context.Context, json.RawMessage) (string, error)
	for _, tl := range set.Tools() {
		if tl.Name() == "notes__set_note" {
			setNote = tl.Call
		}
	}
	require.NotNil(t, setNote)
	// The server registers the subscription a moment after it is made
	// (subscriptions/listen): change the note until an update comes.
	require.Eventually(t, func() bool {
		_, err := setNote(context.Background(), json.RawMessage(`{"text":"the kiln is hot"}`))
		require.NoError(t, err)
		select {
		case s = <-b.posts:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, "the kiln is hot", s.Summary)
	assert.True(t, s.NotifyUser, "a change notifies")

	for _, tl := range set.Tools() {
		if tl.Name() == "notes__crash" {
			_, _ = tl.Call(context.Background(), nil)
		}
	}
	select {
	case err := <-done:
		require.ErrorIs(t, err, minds.ErrSessionEnded)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the run outlived the server")
	}
	_, err = minds.NewResource(minds.ResourceConfig{Server: "notes", URI: "x"})
	require.ErrorIs(t, err, minds.ErrConfig)
}
