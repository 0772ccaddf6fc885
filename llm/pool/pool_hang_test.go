package pool_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/pool"
)

// ollamaServer starts an Ollama-like server: "ok" answers every chat,
// "hang" hangs on every POST (/api/show and /api/chat) until the test
// ends, "garbage" answers every POST with 200 and a body that is not
// JSON.
func ollamaServer(t *testing.T, kind string) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case kind == "hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case kind == "garbage":
			_, _ = io.WriteString(w, "<html>this is not Ollama</html>")
		case r.URL.Path == "/api/show":
			_, _ = io.WriteString(w, `{"model_info":{"general.architecture":"qwen3","qwen3.context_length":8192}}`)
		case r.URL.Path == "/api/version":
			_, _ = io.WriteString(w, `{"version":"0.13.0"}`)
		default:
			_, _ = io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":"fine"},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":1}`)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: releases the hung handlers
	return srv.URL
}

// newPool builds a pool of one Ollama adapter per URL, on a clock that stands
// still (no probe comes due).
func newPool(t *testing.T, urls ...string) *pool.Pool {
	t.Helper()
	var servers []pool.Server
	for _, u := range urls {
		m, err := ollama.New(ollama.Config{URL: u, Model: "m"})
		require.NoError(t, err)
		servers = append(servers, pool.Server{Name: u, Model: m})
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	p, err := pool.New(pool.Config{Servers: servers, Now: func() time.Time { return now }})
	require.NoError(t, err)
	return p
}

// TestPoolHungServer: a pool of four where one server hangs on every
// POST. Each agent's cycle asks the window (llm.ContextWindowOf) and then
// calls the model, each through the per-call timeout: the hung server is
// marked down after the first round, its agents fail over within two
// timeouts, and the others' agents are not held up by it at all: their
// window lookup waits for their own server only.
func TestPoolHungServer(t *testing.T) {
	const timeout = 2 * time.Second // long enough for a loaded machine under -race
	hung := ollamaServer(t, "hang")
	p := newPool(t, ollamaServer(t, "ok"), hung, ollamaServer(t, "ok"), ollamaServer(t, "ok"))
	m := middleware.WithTimeout(p, timeout)
	var agents, onHung []string
	for i := 0; len(agents) < 16 || len(onHung) < 3; i++ {
		id := fmt.Sprintf("agent-%02d", i)
		agents = append(agents, id)
		if p.Rank(id)[0] == hung {
			onHung = append(onHung, id)
		}
	}

	type outcome struct {
		err     error
		server  string
		elapsed time.Duration
	}
	cycle := func() map[string]outcome {
		var mu sync.Mutex
		out := map[string]outcome{}
		var wg sync.WaitGroup
		for _, id := range agents {
			wg.Go(func() {
				ctx := pool.WithAgent(t.Context(), id)
				start := time.Now()
				_, _, _ = llm.ContextWindowOf(ctx, m)
				resp, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
				o := outcome{err: err, elapsed: time.Since(start)}
				if resp != nil {
					o.server = resp.Server
				}
				mu.Lock()
				out[id] = o
				mu.Unlock()
			})
		}
		wg.Wait()
		return out
	}

	first := cycle()
	for _, id := range agents {
		assert.Less(t, first[id].elapsed, 3*timeout, "%s: no call waits beyond its deadline", id)
		if !slices.Contains(onHung, id) {
			// The window lookup waits for the agent's own server only: an
			// agent held up by the hung server would fail at its deadline
			// (how long a healthy call takes depends on the machine's load).
			require.NoError(t, first[id].err, "%s is not held up by the hung server", id)
		}
	}
	var stats pool.ServerStats
	for _, s := range p.Stats() {
		if s.Name == hung {
			stats = s
		}
	}
	assert.True(t, stats.Down, "the hung server is marked down: %+v", stats)

	for round := range 2 {
		next := cycle()
		for _, id := range agents {
			o := next[id]
			require.NoError(t, o.err, "round %d, %s (the hung server is %s)", round, id, hung)
			assert.NotEqual(t, hung, o.server, "%s is not on the hung server", id)
			assert.Less(t, o.elapsed, 2*timeout, "%s fails over within two timeouts", id)
		}
	}
}

// TestPoolGarbageServer: a pool member answering 200 with a body that is
// not the protocol is marked down after DefaultFailures replies, and
// its agents move.
func TestPoolGarbageServer(t *testing.T) {
	bad := ollamaServer(t, "garbage")
	p := newPool(t, bad, ollamaServer(t, "ok"))
	agent := ""
	for i := 0; agent == ""; i++ {
		if id := fmt.Sprintf("agent-%d", i); p.Rank(id)[0] == bad {
			agent = id
		}
	}
	ctx := pool.WithAgent(t.Context(), agent)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for i := range pool.DefaultFailures {
		_, err := p.Generate(ctx, req)
		require.ErrorIs(t, err, llm.ErrProtocol, "reply %d", i)
	}
	resp, err := p.Generate(ctx, req)
	require.NoError(t, err)
	assert.NotEqual(t, bad, resp.Server, "the agent moved")
	s := p.Stats()[0]
	assert.True(t, s.Down)
	assert.Equal(t, int64(1), s.Downs)
	assert.Equal(t, int64(pool.DefaultFailures), s.Errors)
}

// hungEmbedder never answers: each call waits until its context ends.
type hungEmbedder struct{}

func (hungEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("embedding: %w", ctx.Err())
}
func (hungEmbedder) Model() string   { return "e" }
func (hungEmbedder) Dimensions() int { return 2 }

type okEmbedder struct{}

func (okEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}
func (okEmbedder) Model() string   { return "e" }
func (okEmbedder) Dimensions() int { return 2 }

// TestEmbedPoolHungServer: calls to an embedding server that hangs end
// at their deadline and count as failures: the server is marked down and
// the calls go to the other.
func TestEmbedPoolHungServer(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	p, err := pool.NewEmbed(pool.EmbedConfig{
		Servers: []pool.EmbedServer{{Name: "hung", Embedder: hungEmbedder{}}, {Name: "ok", Embedder: okEmbedder{}}},
		Now:     func() time.Time { return now },
	})
	require.NoError(t, err)
	for range 10 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_, _ = p.Embed(ctx, []string{"x"})
		cancel()
	}
	s := p.Stats()[0]
	assert.True(t, s.Down, "%+v", s)
	assert.Equal(t, int64(pool.DefaultFailures), s.Errors)
	for range 3 {
		_, err := p.Embed(t.Context(), []string{"x"})
		require.NoError(t, err, "the calls go to the other server")
	}
}
