package pool_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/pool"
)

// fakeServer is a model server that can be killed: it then refuses
// connections, as a stopped Ollama does.
type fakeServer struct {
	mu    sync.Mutex
	dead  bool
	calls map[string]int // by agent
}

func (f *fakeServer) model(name string) llm.Model {
	return llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.dead {
			return nil, &llm.UnavailableError{Provider: "ollama", URL: name, Err: syscall.ECONNREFUSED}
		}
		if f.calls == nil {
			f.calls = map[string]int{}
		}
		f.calls[pool.AgentFrom(ctx)]++
		return &llm.Response{Text: name}, nil
	})
}

func (f *fakeServer) set(dead bool) { f.mu.Lock(); f.dead = dead; f.mu.Unlock() }

// TestPoolPinsAndMovesAgents: 200 agents over two servers each keep to
// one server, about half on each; when one dies its agents carry on
// against the other from their next call, and move back once a probe
// finds it up again.
func TestPoolPinsAndMovesAgents(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var a, b fakeServer
	p, err := pool.New(pool.Config{
		Servers: []pool.Server{{Name: "A", Model: a.model("A")}, {Name: "B", Model: b.model("B")}},
		Probe:   10 * time.Second,
		Now:     func() time.Time { return now },
	})
	require.NoError(t, err)
	call := func(agent string) string {
		t.Helper()
		resp, err := p.Generate(pool.WithAgent(context.Background(), agent), &llm.Request{})
		require.NoError(t, err, agent)
		return resp.Text
	}
	agents := make([]string, 200)
	home := map[string]string{}
	onB := 0
	for i := range agents {
		agents[i] = fmt.Sprintf("agent-%03d", i)
		home[agents[i]] = p.Rank(agents[i])[0]
		if home[agents[i]] == "B" {
			onB++
		}
	}
	assert.InDelta(t, 100, onB, 25, "rendezvous hashing spreads the agents")
	for range 10 {
		for _, id := range agents {
			assert.Equal(t, home[id], call(id), id)
		}
	}
	for _, id := range agents {
		assert.Equal(t, 10, a.calls[id]+b.calls[id])
		assert.True(t, a.calls[id] == 0 || b.calls[id] == 0, "%s: every call to one server", id)
	}

	before := p.Stats()[1].Calls
	b.set(true)
	for _, id := range agents {
		assert.Equal(t, "A", call(id), "%s carries on against A", id)
	}
	st := p.Stats()
	assert.True(t, st[1].Down, "B is down after 3 failures")
	assert.Equal(t, int64(1), st[1].Downs)
	assert.Equal(t, before+3, st[1].Calls, "then no call is sent to B until its probe")

	b.set(false)
	now = now.Add(10 * time.Second)
	for _, id := range agents {
		assert.Equal(t, home[id], call(id), "%s is back home after the probe", id)
	}
	assert.False(t, p.Stats()[1].Down)
}

// TestPoolLateSuccessKeepsItDown: a call sent before its server was
// marked down that then succeeds does not bring the server back; only
// its probe does.
func TestPoolLateSuccessKeepsItDown(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	release, started := make(chan struct{}), make(chan struct{})
	var calls int
	var mu sync.Mutex
	m := llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 { // the slow call, sent while the server was up
			close(started)
			<-release
			return &llm.Response{Text: "late"}, nil
		}
		if n <= 4 {
			return nil, &llm.UnavailableError{Provider: "ollama", URL: "A", Err: syscall.ECONNRESET}
		}
		return &llm.Response{Text: "probe"}, nil
	})
	p, err := pool.New(pool.Config{Servers: []pool.Server{{Name: "A", Model: m}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	ctx := pool.WithAgent(context.Background(), "x")
	late := make(chan error, 1)
	go func() { _, err := p.Generate(ctx, &llm.Request{}); late <- err }()
	<-started
	for range 3 {
		_, err := p.Generate(ctx, &llm.Request{})
		require.Error(t, err)
	}
	require.True(t, p.Stats()[0].Down)
	close(release)
	require.NoError(t, <-late)
	assert.True(t, p.Stats()[0].Down, "still down: the late success predates the mark")
	_, err = p.Generate(ctx, &llm.Request{})
	assert.ErrorIs(t, err, pool.ErrNoServer)

	now = now.Add(pool.DefaultProbe)
	resp, err := p.Generate(ctx, &llm.Request{})
	require.NoError(t, err)
	assert.Equal(t, "probe", resp.Text)
	assert.False(t, p.Stats()[0].Down, "the probe brought it back")
	assert.Equal(t, int64(1), p.Stats()[0].Downs)
}

// TestPoolOverloadIsNotAFailure: a 503 "busy" is returned to the caller
// (whose retry waits) and leaves the server up; HTTP 500s mark it down.
func TestPoolOverloadIsNotAFailure(t *testing.T) {
	busy := llmtest.NewFake(llmtest.Reply{Err: &llm.StatusError{StatusCode: 503, Message: llmtest.BusyMessage}})
	busy.Repeat = true
	p, err := pool.New(pool.Config{Servers: []pool.Server{{Name: "A", Model: busy}}})
	require.NoError(t, err)
	for range 5 {
		_, err := p.Generate(pool.WithAgent(context.Background(), "x"), &llm.Request{})
		assert.True(t, middleware.Overloaded(err))
	}
	assert.False(t, p.Stats()[0].Down)
	assert.Equal(t, int64(5), p.Stats()[0].Limit.Overloads, "the server's own limit saw them")

	broken := llmtest.NewFake(llmtest.Reply{Err: &llm.StatusError{StatusCode: 500, Message: "boom"}})
	broken.Repeat = true
	p, err = pool.New(pool.Config{Servers: []pool.Server{{Name: "A", Model: broken}}, Failures: 2})
	require.NoError(t, err)
	for range 2 {
		_, err := p.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		require.Error(t, err)
	}
	_, err = p.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	assert.ErrorIs(t, err, pool.ErrNoServer)

	_, err = pool.New(pool.Config{})
	assert.Error(t, err)
	_, err = pool.New(pool.Config{Servers: []pool.Server{{Name: "A", Model: busy}, {Name: "A", Model: busy}}})
	assert.Error(t, err)
}

// TestPoolOverTwoStandins: the same against two stand-in Ollama servers
// over loopback, one of them closed halfway: its agents' next calls are
// answered by the other. Each reply names its server, and the pool counts
// each server's tokens as the server reported them.
func TestPoolOverTwoStandins(t *testing.T) {
	var servers []pool.Server
	var stop []func()
	var standins []*llmtest.Server
	for _, name := range []string{"A", "B"} {
		s := llmtest.NewServer(llmtest.ServerConfig{Slots: 4, Reply: func(*llmtest.Call) llmtest.Answer { return llmtest.Answer{Text: name} }})
		url := s.Start()
		stop = append(stop, s.Close)
		standins = append(standins, s)
		m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
		require.NoError(t, err)
		servers = append(servers, pool.Server{Name: name, Model: m})
	}
	t.Cleanup(func() {
		for _, f := range stop {
			f()
		}
	})
	p, err := pool.New(pool.Config{Servers: servers})
	require.NoError(t, err)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	got := map[string]map[string]int{}
	for round := range 4 {
		if round == 2 {
			stop[1]() // B is killed
		}
		for i := range 200 {
			id := fmt.Sprintf("agent-%03d", i)
			resp, err := p.Generate(pool.WithAgent(context.Background(), id), req)
			require.NoError(t, err, "%s, round %d", id, round)
			if got[id] == nil {
				got[id] = map[string]int{}
			}
			got[id][resp.Text]++
			assert.Equal(t, resp.Text, resp.Server, "the reply names the server that answered")
			if round >= 2 {
				assert.Equal(t, "A", resp.Text)
			}
		}
	}
	for id, by := range got {
		if p.Rank(id)[0] == "A" {
			assert.Equal(t, 4, by["A"], id)
		} else {
			assert.Equal(t, 2, by["B"], "%s: B until it was killed", id)
		}
	}
	st := p.Stats()
	assert.True(t, st[1].Down)
	for i, s := range standins {
		counted := s.Stats()
		assert.Positive(t, st[i].PromptTokens, st[i].Name)
		assert.Equal(t, int64(counted.PromptTokens), st[i].PromptTokens, "%s: prompt tokens as the server counted them", st[i].Name)
		assert.Equal(t, int64(counted.OutputTokens), st[i].OutputTokens, "%s: output tokens", st[i].Name)
	}
}

// poolWindowed is a model that knows its context window.
type poolWindowed struct {
	llm.Model
	w int
}

func (m poolWindowed) ContextWindow(context.Context) (int, *llm.TokenEstimator, error) {
	return m.w, nil, nil
}

// TestPoolContextWindow: the pool's window is the smallest its servers
// know, so that a prompt fitted to it fits any of them.
func TestPoolContextWindow(t *testing.T) {
	fake := llmtest.NewFake()
	p, err := pool.New(pool.Config{Servers: []pool.Server{
		{Name: "A", Model: poolWindowed{fake, 8192}}, {Name: "B", Model: poolWindowed{fake, 4096}}, {Name: "C", Model: fake},
	}})
	require.NoError(t, err)
	w, _, err := llm.ContextWindowOf(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, 4096, w)
}
