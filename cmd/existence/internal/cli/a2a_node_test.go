package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/npmtest"
)

// lineWatch is an io.Writer, safe for concurrent use, that sends the
// first match of re in what is written on found.
type lineWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan string
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.found != nil {
		if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
			w.found <- m[1]
			w.found = nil
		}
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startTrioHTTP runs the trio on the stand-in model with -http on a free
// loopback port and the token tok, and returns the server's base URL.
// The run stops at the end of the test.
func startTrioHTTP(t *testing.T, tok string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"-llm-url", "standin:", "-http", "127.0.0.1:0", "-http-token", tok, "-heartbeat", "1s",
		"-state", filepath.Join(dir, "state"), "-workspace", filepath.Join(dir, "ws")}, extra...)
	o, err := parseRunFlags(args, &bytes.Buffer{})
	require.NoError(t, err)
	found := make(chan string, 1) // read here, never through w (which clears its field)
	w := &lineWatch{re: regexp.MustCompile(`dashboard at (http://[^/ ]+)/`), found: found}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runTrio(ctx, o, &bytes.Buffer{}, w) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})
	select {
	case base := <-found:
		return base
	case err := <-done:
		require.FailNow(t, "the run stopped", "%v: %s", err, w.String())
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no dashboard address", w.String())
	}
	return ""
}

// jsClientResult is what testdata/a2a/client.mjs prints.
type jsClientResult struct {
	States    []string `json:"states"`
	Final     string   `json:"final"`
	Task      string   `json:"task"`
	Artifacts []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"artifacts"`
	Stored []string `json:"stored_artifacts"`
}

// TestA2AFromTheJavaScriptSDK: a client built with @a2a-js/sdk, the
// protocol's JavaScript SDK, gives an agent of `existence run -llm-url
// standin:` a task over each binding, streams it to completion and reads
// its artifacts.
func TestA2AFromTheJavaScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trio and Node.js for seconds")
	}
	node := npmtest.Bin(t, "node")
	sdk := filepath.Dir(npmtest.File(t, "@a2a-js/sdk/package.json"))
	const tok = "js-client-token-0123456789"
	base := startTrioHTTP(t, tok)
	for _, tc := range []struct{ agent, binding string }{{"scout", "JSONRPC"}, {"analyst", "HTTP+JSON"}} {
		t.Run(tc.binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "a2a", "client.mjs"), base+"/a2a/"+tc.agent+"/agent-card.json", tok, "write a short report on the workspace", tc.binding)
			cmd.Env = append(npmtest.Env(), "A2A_SDK_DIR="+sdk)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			var res jsClientResult
			require.NoError(t, json.Unmarshal(out, &res), string(out))
			assert.Equal(t, "TASK_STATE_COMPLETED", res.Final)
			assert.Equal(t, []string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, res.States)
			require.NotEmpty(t, res.Artifacts)
			assert.Equal(t, "summary", res.Artifacts[0].Name)
			assert.True(t, strings.HasPrefix(res.Artifacts[0].Text, "Done: wrote notes/"), res.Artifacts[0].Text)
			assert.Contains(t, res.Stored, "summary")
			assert.Len(t, res.Stored, len(res.Artifacts), "the stored task has the streamed artifacts")
		})
	}
}

// TestA2ASwarmFromTheJavaScriptSDK: the same client gives a task to one
// agent of a 1,000-agent swarm through the swarm's one endpoint, the
// agent chosen by its tenant (its id, named in its card).
func TestA2ASwarmFromTheJavaScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,000 agents and Node.js for seconds")
	}
	node := npmtest.Bin(t, "node")
	sdk := filepath.Dir(npmtest.File(t, "@a2a-js/sdk/package.json"))
	const tok = "js-swarm-token-0123456789"
	o, err := parseSwarmFlags([]string{"-agents", "1000", "-http", "127.0.0.1:0", "-http-token", tok, "-duration", "5m",
		"-heartbeat", "2s", "-model-latency", "50ms", "-jitter", "10ms"}, &bytes.Buffer{})
	require.NoError(t, err)
	found := make(chan string, 1) // read here, never through w (which clears its field)
	w := &lineWatch{re: regexp.MustCompile(`dashboard at (http://[^/ ]+)/`), found: found}
	o.stderr = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runSwarm(ctx, o)
		done <- err
	}()
	t.Cleanup(func() { cancel(); <-done })
	var base string
	select {
	case base = <-found:
	case err := <-done:
		require.FailNow(t, "the swarm stopped", "%v: %s", err, w.String())
	case <-time.After(time.Minute):
		require.FailNow(t, "no dashboard address", w.String())
	}
	cctx, ccancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer ccancel()
	cmd := exec.CommandContext(cctx, node, filepath.Join("testdata", "a2a", "client.mjs"), base+"/a2a/agent-00777/agent-card.json", tok, "count the stars")
	cmd.Env = append(npmtest.Env(), "A2A_SDK_DIR="+sdk)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var res jsClientResult
	require.NoError(t, json.Unmarshal(out, &res), string(out))
	assert.Equal(t, "TASK_STATE_COMPLETED", res.Final)
	require.NotEmpty(t, res.Artifacts)
	assert.Equal(t, "completed: count the stars", res.Artifacts[0].Text)
}
