package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/prompt/prompttest"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/memstore"
)

// fakeOllama speaks Ollama's /api/chat protocol (non-streaming). Existence
// cycles (requests with a format) get the next scripted answer for the
// agent named in the prompt; goal execution (requests with tools) gets a
// write_file tool call, then a final answer.
type fakeOllama struct {
	t       *testing.T
	mu      sync.Mutex
	scripts map[string][]answer // by agent name
	prompts map[string][]string
}

type answer struct {
	status int    // HTTP status to fail with
	text   string // reply content
}

func newFakeOllama(t *testing.T, scripts map[string][]answer) *httptest.Server {
	f := &fakeOllama{t: t, scripts: scripts, prompts: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return srv
}

type chatRequest struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Format   json.RawMessage   `json:"format"`
	Tools    []json.RawMessage `json:"tools"`
	Think    *bool             `json:"think"`
}

func (f *fakeOllama) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	if req.Think == nil || *req.Think {
		f.t.Errorf("think must be sent as false")
	}
	var first struct{ Content string }
	_ = json.Unmarshal(req.Messages[0], &first)
	name := agentName(first.Content)
	// The prompt's tokens, as a server counts them: Ollama reports them in
	// prompt_eval_count, and the adapter checks them against its estimate.
	prompt := 0
	for _, m := range req.Messages {
		var msg struct{ Content string }
		_ = json.Unmarshal(m, &msg)
		prompt += llmtest.CountTokens(msg.Content) + 4
	}
	if len(req.Tools) > 0 {
		tools, _ := json.Marshal(req.Tools)
		prompt += llmtest.CountTokens(string(tools))
	}
	if len(req.Tools) > 0 {
		// Goal execution: write a file on the first turn, then finish.
		if len(req.Messages) <= 2 {
			chat(w, "", `[{"function":{"name":"write_file","arguments":{"path":"`+strings.ToLower(name)+`/notes.md","content":"notes by `+name+`"}}}]`, prompt)
			return
		}
		chat(w, "Wrote my notes.", "", prompt)
		return
	}
	f.mu.Lock()
	f.prompts[name] = append(f.prompts[name], first.Content)
	var a answer
	if s := f.scripts[name]; len(s) > 0 {
		a, f.scripts[name] = s[0], s[1:]
	} else {
		a = answer{text: `{"action":"goal","content":"keep going","reasoning":"habit"}`}
	}
	f.mu.Unlock()
	if a.status != 0 {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(a.status)
		io.WriteString(w, `{"error":"server busy"}`)
		return
	}
	chat(w, a.text, "", prompt)
}

// agentName finds the agent's name in "You are NAME." or "You are NAME, ...".
func agentName(p string) string {
	i := strings.Index(p, "You are ")
	if i < 0 {
		return ""
	}
	rest := p[i+len("You are "):]
	return rest[:strings.IndexAny(rest, ".,")]
}

func chat(w http.ResponseWriter, content, toolCalls string, prompt int) {
	msg := map[string]any{"role": "assistant", "content": content}
	reason := "stop"
	if toolCalls != "" {
		msg["tool_calls"] = json.RawMessage(toolCalls)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"model": "qwen3.5:9b", "created_at": "2026-04-13T12:00:00Z", "message": msg,
		"done": true, "done_reason": reason, "prompt_eval_count": prompt, "eval_count": 64,
	})
}

// trioArgs returns flags for a fast run against url in a temp dir.
func trioArgs(t *testing.T, url string, extra ...string) []string {
	return append([]string{"-llm-url", url, "-heartbeat", "5ms", "-json"}, extra...)
}

// runTrioTest runs the trio in the current directory with short retry waits.
func runTrioTest(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	o, err := parseRunFlags(args, io.Discard)
	require.NoError(t, err)
	o.retry = middleware.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	o.maxGoalDuration = -1 // no goal-span stalls on a loaded machine
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = runTrio(ctx, o, &out, &errb)
	return out.String(), errb.String(), err
}

func events(t *testing.T, out string) []event.Event {
	t.Helper()
	var evs []event.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "line %q", sc.Text())
		require.NotEmpty(t, e.AgentID, "every event carries the agent id")
		require.NotEmpty(t, e.Agent, "every event carries the agent name")
		evs = append(evs, e)
	}
	return evs
}

func TestTrioAgainstFakeOllama(t *testing.T) {
	t.Chdir(t.TempDir())
	long := "Map every file in the workspace, " + strings.Repeat("in detail, ", 40) + "and write the map to scout/map.md"
	srv := newFakeOllama(t, map[string][]answer{
		// Cedar: a 503 (retried), then a malformed reply (one repair
		// follow-up), then a valid one.
		"Cedar": {
			{status: http.StatusServiceUnavailable},
			{text: `I think I will map the workspace.`},
			{text: `{"action":"goal","content":"` + long + `","reasoning":"I know nothing yet","worldview_update":"The workspace is our only shared memory."}`},
		},
		// Cipher: valid at once.
		"Cipher": {{text: `<think>hmm</think>{"action":"analyse","content":"review scout/notes.md","reasoning":"Cedar wrote something"}`}},
		// Vault: malformed twice: the fallback goal.
		"Vault": {{text: `{"content": 7}`}, {text: `{"content": 8}`}},
	})

	out, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "2")...)
	require.NoError(t, err, stderr)
	evs := events(t, out)

	goals := map[string][]string{}
	var fallbacks []event.Event
	for _, e := range evs {
		switch e.Kind {
		case event.GoalChosen:
			goals[e.AgentID] = append(goals[e.AgentID], e.Text)
		case event.Fallback:
			fallbacks = append(fallbacks, e)
		}
	}
	require.Len(t, goals["scout"], 2)
	assert.Equal(t, long, goals["scout"][0], "a goal event carries the goal's full text")
	assert.Equal(t, "review scout/notes.md", goals["analyst"][0])
	assert.Equal(t, "explore the workspace and build something useful", goals["builder"][0])
	require.Len(t, fallbacks, 1)
	assert.Equal(t, "builder", fallbacks[0].AgentID)
	assert.Equal(t, "invalid_output", fallbacks[0].FailureClass)

	// Every model attempt is an event: for Cedar, the 503 (then retried),
	// the malformed reply, its repair, the second cycle, and two executor
	// turns per goal.
	var statuses []string
	for _, e := range evs {
		if e.Kind == event.ModelCall && e.AgentID == "scout" {
			statuses = append(statuses, e.Call.Outcome)
		}
	}
	assert.Equal(t, []string{"http_503", "ok", "ok", "ok", "ok", "ok", "ok", "ok"}, statuses)

	// Goals were executed with real workspace tools.
	b, err := os.ReadFile(filepath.Join("trio-workspace", "cedar", "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "notes by Cedar", string(b))

	// State survives a restart: run again and the agents remember.
	out, stderr, err = runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1")...)
	require.NoError(t, err, stderr)
	_ = events(t, out)
	store, err := filestore.Open("trio-state", filestore.Options{})
	require.NoError(t, err)
	st, err := store.Load(context.Background(), "scout")
	require.NoError(t, err)
	assert.Equal(t, "The workspace is our only shared memory.", st.Identity.Worldview)
	require.Len(t, st.Identity.Goals, 3)
	assert.Equal(t, identity.Done, st.Identity.Goals[0].Status)
	assert.Equal(t, "Wrote my notes.", st.Identity.Goals[0].Outcome)
}

func TestTrioOllamaUnreachable(t *testing.T) {
	t.Chdir(t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now

	out, stderr, err := runTrioTest(t, trioArgs(t, url, "-cycles", "1")...)
	require.NoError(t, err)
	hints := strings.Count(stderr, "ollama serve")
	assert.Equal(t, 1, hints, "one clear stderr line saying how to start Ollama:\n%s", stderr)
	assert.Contains(t, stderr, "trio: waiting for the model at "+url+"…", "something is printed while the first calls retry")
	n := 0
	for _, e := range events(t, out) {
		if e.Kind == event.GoalChosen {
			assert.Equal(t, existence.FallbackContent, e.Text)
			n++
		}
	}
	assert.Equal(t, 3, n, "every agent keeps running on the fallback goal")
}

func TestTrioStopsOnCancelAndSaves(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, nil)
	o, err := parseRunFlags([]string{"-llm-url", srv.URL}, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- runTrio(ctx, o, pw, io.Discard); pw.Close() }()
	// Stop once every agent has chosen a goal.
	sc := bufio.NewScanner(pr)
	seen := map[string]bool{}
	for sc.Scan() && len(seen) < 3 {
		if strings.Contains(sc.Text(), "🎯") {
			seen[strings.Fields(sc.Text())[1]] = true
		}
	}
	cancel()
	go io.Copy(io.Discard, pr)
	require.NoError(t, <-done)
	store, err := filestore.Open("trio-state", filestore.Options{})
	require.NoError(t, err)
	ids, err := store.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"analyst", "builder", "scout"}, ids)
	// The locks were released: a new run can start.
	unlock, err := store.Lock("scout")
	require.NoError(t, err)
	require.NoError(t, unlock())
}

// golden compares got with testdata/NAME.golden of this package, and
// rewrites it under -update (prompttest's flag). Tests that change directory
// pass the package directory.
func golden(t *testing.T, pkgDir, name, got string) {
	t.Helper()
	path := filepath.Join(pkgDir, "testdata", name+".golden")
	if prompttest.Updating() {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/existence/internal/cli -update to create it")
	assert.Equal(t, string(want), got)
}

func TestTrioDryRunGolden(t *testing.T) {
	pkg, _ := os.Getwd()
	t.Chdir(t.TempDir())
	out, stderr, err := runTrioTest(t, "-dry-run", "-now", "2026-04-13T12:00:00Z")
	require.NoError(t, err, stderr)
	for _, id := range []string{"scout", "analyst", "builder"} {
		assert.Contains(t, out, "=== prompt: "+id+" ===\nYou are ")
	}
	assert.NotContains(t, out, "/agentOS/", "the trio describes the world it really runs in")
	for _, dir := range []string{"trio-state", "trio-workspace"} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("a dry run must not create %s (stat: %v)", dir, err)
		}
	}
	golden(t, pkg, "dry-run", out)
}

func TestTrioImportHollowDryRun(t *testing.T) {
	pkg, _ := os.Getwd()
	src := filepath.Join(pkg, "..", "..", "..", "..", "hollow", "testdata", "hollow-memory")
	t.Chdir(t.TempDir())
	out, stderr, err := runTrioTest(t, "-dry-run", "-now", "2026-04-15T23:01:00Z", "-import-hollow", src)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "imported")
	scout := out[strings.Index(out, "=== prompt: scout ==="):strings.Index(out, "=== prompt: analyst ===")]
	assert.Contains(t, scout, "You are Titan.")
	assert.Contains(t, scout, "The distinction between 'self' and 'peer'")
	// Five stressors at ~0.21 escalated by two days at 0.03/day: ~1.0 load.
	assert.Contains(t, scout, "CRISIS STATE")
	golden(t, pkg, "import-hollow-dry-run", out)

	// A dry run imports into memory only: the same command works again.
	entries, _ := os.ReadDir(".")
	assert.Empty(t, entries, "nothing written")
	again, stderr, err := runTrioTest(t, "-dry-run", "-now", "2026-04-15T23:01:00Z", "-import-hollow", src)
	require.NoError(t, err, stderr)
	assert.Equal(t, out, again)
}

func TestParseFlags(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	o, err := parseRunFlags(nil, io.Discard)
	require.NoError(t, err)
	_, url, err := newModel(o)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:11434", url, "the adapter's default")
	assert.Equal(t, "qwen3.5:9b", o.model)
	assert.Equal(t, "./trio-state", o.state)
	assert.Equal(t, 6*time.Second, o.heartbeat)
	assert.Equal(t, 180*time.Second, o.llmTimeout)

	t.Setenv("OLLAMA_HOST", "http://gpu:11434")
	o, err = parseRunFlags(nil, io.Discard)
	require.NoError(t, err)
	_, url, err = newModel(o)
	require.NoError(t, err)
	assert.Equal(t, "http://gpu:11434", url, "the adapter reads $OLLAMA_HOST")

	for _, bad := range [][]string{
		{"-provider", "carrier-pigeon"},
		{"-now", "yesterday"},
		{"-cycles", "-1"},
		{"-heartbeat", "0s"},
		{"extra"},
	} {
		_, err := parseRunFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
	_, err = parseRunFlags([]string{"-h"}, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, ExitUsage, Main([]string{"run", "-provider", "x"}, nil, io.Discard, io.Discard))
	assert.Equal(t, ExitOK, Main([]string{"run", "-h"}, nil, io.Discard, io.Discard))
	_, err = parseRunFlags([]string{"-task", " "}, io.Discard)
	assert.Error(t, err, "empty task")
	o, err = parseRunFlags([]string{"-task", "a", "-task", "b", "-keep-alive", "5m"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, o.tasks)
	assert.Equal(t, 5*time.Minute, o.keepAlive)
}

func TestListenTurnsLinesIntoHostMessages(t *testing.T) {
	ctx := context.Background()
	r, err := runner.New(runner.Config{Store: memstore.New()})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, m := range members {
		_, err := r.Add(ctx, existence.Config{ID: m.id, Name: m.name, Model: llmtest.NewFake()})
		require.NoError(t, err)
	}
	var stderr bytes.Buffer
	listen(ctx, strings.NewReader("hello all\n\n@cedar just you\n@builder  and you \n@nobody hm\n"), r, nil, &stderr)

	host := func(id string) (texts []string) {
		for _, m := range r.Agent(id).State().Host {
			texts = append(texts, m.Text)
		}
		return texts
	}
	assert.Equal(t, []string{"hello all", "just you"}, host("scout"))
	assert.Equal(t, []string{"hello all"}, host("analyst"))
	assert.Equal(t, []string{"hello all", "and you"}, host("builder"))
	assert.Contains(t, stderr.String(), `no agent "nobody"`)
}

func TestTrioTaskFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	srv := newFakeOllama(t, nil)
	out, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-task", "Write design/index.md listing every file")...)
	require.NoError(t, err, stderr)
	n := 0
	for _, e := range events(t, out) {
		if e.Kind == event.GoalChosen && e.Text == "Write design/index.md listing every file" {
			n++
		}
	}
	assert.Equal(t, 1, n, "exactly one agent takes the task as its goal")
}

func TestSendMessageTool(t *testing.T) {
	ctx := context.Background()
	r, err := runner.New(runner.Config{Store: memstore.New()})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, m := range members {
		_, err := r.Add(ctx, existence.Config{ID: m.id, Name: m.name, Model: llmtest.NewFake()})
		require.NoError(t, err)
	}
	names, err := agentNames(ctx, memstore.New(), members)
	require.NoError(t, err)
	tool := sendMessage(func() *runner.Runner { return r }, "scout", names)
	asCedar := toolloop.WithCaller(ctx, existence.Assignment{AgentID: "scout", AgentName: "Cedar"})

	got, err := tool.Call(asCedar, json.RawMessage(`{"to": "Cipher", "text": "your review of map.md is wrong"}`))
	require.NoError(t, err)
	assert.Equal(t, "sent to Cipher", got)
	inbox := r.Agent("analyst").State().Inbox
	require.Len(t, inbox, 1)
	assert.Equal(t, identity.AgentMessage{From: "Cedar", Text: "your review of map.md is wrong", At: inbox[0].At}, inbox[0])

	for _, bad := range []string{`{"to": "Cedar", "text": "me"}`, `{"to": "nobody", "text": "x"}`, `{"to": "builder", "text": " "}`} {
		_, err := tool.Call(asCedar, json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
	_, err = tool.Call(ctx, json.RawMessage(`{"to": "builder", "text": "x"}`))
	assert.Error(t, err, "no calling agent")
}
