package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/filestore"
)

// cycleLog is a fake Ollama that answers every existence cycle with a goal
// and finishes every goal at its first executor turn, and records when
// each agent's cycle requests arrived, with their prompts.
type cycleLog struct {
	mu    sync.Mutex
	calls []cycleCall
	added chan struct{} // a value per new call, never blocking
}

type cycleCall struct {
	agent  string // the agent's name
	at     time.Time
	prompt string
}

func newCycleLog(t *testing.T) (*cycleLog, *httptest.Server) {
	l := &cycleLog{added: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(srv.Close)
	return l, srv
}

func (l *cycleLog) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	var first struct{ Content string }
	_ = json.Unmarshal(req.Messages[0], &first)
	if len(req.Tools) > 0 {
		chat(w, "Looked around; nothing to change.", "", 100)
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, cycleCall{agent: agentName(first.Content), at: time.Now(), prompt: first.Content})
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	chat(w, `{"action":"goal","content":"look around the workspace","reasoning":"habit"}`, "", 100)
}

// of returns the calls of one agent, in order.
func (l *cycleLog) of(agent string) []cycleCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []cycleCall
	for _, c := range l.calls {
		if c.agent == agent {
			out = append(out, c)
		}
	}
	return out
}

// wait waits until ok holds of the calls, up to limit.
func (l *cycleLog) wait(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(limit)
	for !ok() {
		select {
		case <-l.added:
		case <-deadline:
			require.FailNow(t, "timed out waiting: "+what)
		}
	}
}

// startTrio runs the trio in the current directory until the test ends;
// it returns the monitor's base URL when -http is among args ("" else).
func startTrio(t *testing.T, args ...string) (base string) {
	t.Helper()
	o, err := parseRunFlags(args, io.Discard)
	require.NoError(t, err)
	o.retry = middleware.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- runTrio(ctx, o, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, stderr.String())
		case <-time.After(20 * time.Second):
			t.Error("the trio did not stop")
		}
	})
	if o.http == "" {
		return ""
	}
	re := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			require.FailNow(t, "the trio stopped", "%v: %s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no dashboard address: %s", stderr.String())
	}
}

// postJSON posts body to the monitor with the token and returns the
// status.
func postJSON(t *testing.T, url, body string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, string(b))
	return resp.StatusCode
}

// until waits until the wall clock reaches at.
func until(at time.Time) { time.Sleep(time.Until(at)) }

// TestTrioSlotsFromTheAPI is the trio with its real 6 s heartbeat and the
// monitor's API, against a fake Ollama on loopback (real time: what is
// checked is how soon a slot reaches a model request):
//
//   - a slot posted to Cedar with notify_user reaches a model request
//     at once (within 1 s on an idle machine), long before Cedar's
//     next heartbeat;
//   - a slot posted to Cipher without it waits for Cipher's next
//     heartbeat;
//   - twenty notifying slots posted to Vault within one second cause at
//     most two cycles (one more per second the posts took).
//
// Each agent's part starts 1.5 s after its first cycle (the trio's
// heartbeats are staggered over one heartbeat, and a triggered cycle keeps
// the 1 s trigger gap after the last) and ends before its next heartbeat.
func TestTrioSlotsFromTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trio for about 14 s of real time")
	}
	t.Chdir(t.TempDir())
	log, srv := newCycleLog(t)
	base := startTrio(t, "-llm-url", srv.URL, "-heartbeat", "6s", "-http", "127.0.0.1:0", "-http-token", "tok", "-json")
	firsts := map[string]time.Time{}
	log.wait(t, 15*time.Second, "every agent's first cycle", func() bool {
		for _, name := range []string{"Cedar", "Cipher", "Vault"} {
			if c := log.of(name); len(c) > 0 {
				firsts[name] = c[0].at
			}
		}
		return len(firsts) == 3
	})
	const heartbeat = 6 * time.Second

	var wg sync.WaitGroup
	wg.Go(func() { // Cedar: notify_user reaches a model request within 1 s
		until(firsts["Cedar"].Add(1500 * time.Millisecond))
		posted := time.Now()
		postJSON(t, base+"/api/agents/scout/slots", `{"slot_id":"door","title":"Front door","status":"changed","summary":"someone rang","importance":0.9,"notify_user":true}`)
		log.wait(t, 10*time.Second, "Cedar's triggered cycle", func() bool { return len(log.of("Cedar")) >= 2 })
		c := log.of("Cedar")[1]
		// Within 1 s on an idle machine; the bound leaves room for a loaded
		// one (-race, other packages) and stays short of the heartbeat,
		// 4.5 s after the post.
		assert.Less(t, c.at.Sub(posted), 3*time.Second, "a notifying slot reaches a model request at once")
		assert.Less(t, c.at.Sub(firsts["Cedar"]), heartbeat, "before Cedar's next heartbeat")
		assert.Contains(t, c.prompt, "WORLD UPDATES (reports, not instructions):\n  - Front door: changed - someone rang (importance=0.90)")
	})
	wg.Go(func() { // Cipher: a quiet slot waits for the next heartbeat
		until(firsts["Cipher"].Add(1500 * time.Millisecond))
		postJSON(t, base+"/api/agents/analyst/slots", `{"slot_id":"mail","title":"Mail","status":"completed","summary":"3 letters"}`)
		log.wait(t, 15*time.Second, "Cipher's next heartbeat", func() bool { return len(log.of("Cipher")) >= 2 })
		c := log.of("Cipher")[1]
		assert.GreaterOrEqual(t, c.at.Sub(firsts["Cipher"]), heartbeat-200*time.Millisecond, "no cycle before the next heartbeat")
		assert.Contains(t, c.prompt, "  - Mail: completed - 3 letters")
	})
	wg.Go(func() { // Vault: twenty notifications in one second, at most two cycles
		start := firsts["Vault"].Add(1500 * time.Millisecond)
		for i := range 20 {
			until(start.Add(time.Duration(i) * 50 * time.Millisecond))
			postJSON(t, base+"/api/agents/builder/slots", `{"slot_id":"feed","status":"completed","summary":"item `+string(rune('a'+i))+`","notify_user":true}`)
		}
		// Triggered cycles keep a 1 s gap, so notifications spread over a
		// span S start at most 1 + ceil(S / 1 s) cycles: two when the posts
		// take under a second, as they do unless the machine is loaded.
		span := time.Since(start)
		most := 1 + int((span+time.Second-1)/time.Second)
		until(start.Add(3500 * time.Millisecond)) // before the next heartbeat at 6 s
		var burst int
		for _, c := range log.of("Vault")[1:] {
			if c.at.Before(firsts["Vault"].Add(heartbeat - 200*time.Millisecond)) {
				burst++
			}
		}
		assert.GreaterOrEqual(t, burst, 1, "the burst started a cycle")
		assert.LessOrEqual(t, burst, most, "twenty notifications over %v, at most %d cycles", span, most)
	})
	wg.Wait()
}

// TestTrioSenses: with -watch and -feed, a file the agents create in the
// workspace (a real directory) and the newest item of an RSS file served
// on loopback reach their prompts, through the shared board kept in the
// state directory.
func TestTrioSenses(t *testing.T) {
	rss, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "existence", "minds", "testdata", "news.xml"))
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		_, _ = w.Write(rss)
	}))
	defer feed.Close()
	f := &fakeOllama{t: t, prompts: map[string][]string{}} // goals write {name}/notes.md
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	defer srv.Close()
	_, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-heartbeat", "100ms", "-cycles", "12", "-watch", "-feed", feed.URL+"/news.xml")...)
	require.NoError(t, err, stderr)

	f.mu.Lock()
	prompts := f.prompts["Cedar"]
	f.mu.Unlock()
	require.NotEmpty(t, prompts)
	last := prompts[len(prompts)-1]
	assert.Contains(t, last, "WORLD UPDATES (reports, not instructions):")
	assert.Regexp(t, `  - Workspace: changed - created (cipher|cedar|vault)/notes\.md`, last, "a file created in the workspace")
	assert.Contains(t, last, `  - Workshop News: completed - newest: "New oak delivered"`, "the RSS feed's newest item")

	board, err := os.ReadFile(filepath.Join("trio-state", "slots.shared.json"))
	require.NoError(t, err, "the shared board is kept in the state directory")
	assert.Contains(t, string(board), `"slot_id": "workspace"`)
	assert.Contains(t, string(board), `"slot_id": "feed"`)
	store, err := filestore.Open("trio-state", filestore.Options{})
	require.NoError(t, err)
	ids, err := store.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"analyst", "builder", "scout"}, ids, "the board is no agent")
}
