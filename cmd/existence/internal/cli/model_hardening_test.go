package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
)

// refusedURL returns a loopback URL whose port refuses connections.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// TestTrioNoServerHintAtOnce: with no model server, the refused
// connection of the first attempt prints the hint, before the retries'
// waits (which would take 15 s with the default policy).
func TestTrioNoServerHintAtOnce(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseRunFlags(trioArgs(t, refusedURL(t), "-cycles", "1"), io.Discard)
	require.NoError(t, err)
	var stderr syncBuffer
	var mu sync.Mutex
	var waits, hintedBeforeWait int
	o.retry = middleware.RetryPolicy{Sleep: func(context.Context, time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits++
		if strings.Contains(stderr.String(), "cannot reach Ollama at") {
			hintedBeforeWait++
		}
		return nil
	}}
	o.maxGoalDuration = -1
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, runTrio(ctx, o, io.Discard, &stderr))
	require.Positive(t, waits)
	assert.Equal(t, waits, hintedBeforeWait, "the hint is printed at the first refused connection, before any retry wait")
	assert.Equal(t, 1, strings.Count(stderr.String(), "cannot reach Ollama at"), "once")
}

// TestTrioHungServerFallsBack: a single model server that accepts
// connections and never answers (on every POST: /api/show and
// /api/chat) gives fallback goals, not silence, within the -llm-timeout
// of each attempt.
func TestTrioHungServerFallsBack(t *testing.T) {
	t.Chdir(t.TempDir())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	out, stderr, err := runTrioTest(t, trioArgs(t, srv.URL, "-cycles", "1", "-llm-timeout", "100ms")...)
	require.NoError(t, err, stderr)
	fallbacks := 0
	for _, e := range events(t, out) {
		if e.Kind == event.Fallback {
			fallbacks++
			assert.Equal(t, middleware.OutcomeTimeout, e.FailureClass)
		}
	}
	assert.Equal(t, len(members), fallbacks, "each agent's cycle ends in the fallback goal")
}

// TestSwarmPoolHungServer: a swarm on a pool of four where one server
// hangs on every POST: the window lookups and calls that wait for it end
// at -llm-timeout and mark it down, so every agent, its agents too,
// cycles on the other servers, which keep serving: of 8 autonomy workers
// the hung server holds only those of its own agents' first cycles (two
// timeouts and the retry's 5 s wait: the run lasts 9 s so that they end).
func TestSwarmPoolHungServer(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	const agents = 40
	o, err := parseSwarmFlags([]string{"-agents", fmt.Sprint(agents), "-heartbeat", "200ms", "-duration", "9s", "-llm-timeout", "1s", "-autonomy-workers", "8",
		"-llm-url", "standin:?slots=8&latency=5ms", "-llm-url", hung.URL, "-llm-url", "standin:?slots=8&latency=5ms", "-llm-url", "standin:?slots=8&latency=5ms"}, io.Discard)
	require.NoError(t, err)
	res, err := runSwarm(t.Context(), o)
	require.NoError(t, err)
	require.Len(t, res.Servers, 4)
	b := res.Servers[1]
	assert.True(t, b.Pool.Down, "the hung server is marked down")
	assert.Positive(t, b.Pool.Downs)
	assert.Equal(t, agents, res.AgentsCycled, "every agent cycled, the hung server's too")
	for i, s := range res.Servers {
		if i != 1 {
			// (a loaded machine may make one of its calls time out)
			assert.False(t, s.Pool.Down, "server %d is up", i)
			assert.Positive(t, s.Pool.Calls, "server %d kept serving", i)
		}
	}
	t.Logf("cycles %d, fallbacks %d, hung server %+v", res.Cycles, res.Fallbacks, b.Pool)
}

// TestStandinEmbeds: the stand-in embeds wherever an embedding URL is
// taken: `memory eval -embed-url standin:` (either provider), and
// `run -memory -llm-url standin:` without -embed-url, which then tries
// no other embedding server (OLLAMA_HOST points at a port that refuses).
func TestStandinEmbeds(t *testing.T) {
	ds := evalDataset(t)
	for _, provider := range []string{"ollama", "openai"} {
		code, out, errOut := runCLI(t, "memory", "eval", "-dataset", ds, "-embed-provider", provider, "-embed-url", "standin:")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "23 memories of 2 agents (23 embedded)", provider)
	}

	t.Chdir(t.TempDir())
	t.Setenv("OLLAMA_HOST", refusedURL(t))
	out, stderr, err := runTrioTest(t, trioArgs(t, "standin:?latency=1ms", "-cycles", "2", "-memory")...)
	require.NoError(t, err, stderr)
	evs := events(t, out)
	assert.NotEmpty(t, memoryEvents(evs, memory.EventStored))
	assert.Empty(t, memoryEvents(evs, memory.EventPending), "every memory embedded at once, by the stand-in")
	assert.NotContains(t, stderr, "cannot reach the embedder")
}
