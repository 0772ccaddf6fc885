package pool_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/pool"
)

var refused = &llm.UnavailableError{Provider: "ollama", URL: "http://b", Err: syscall.ECONNREFUSED}

// TestEmbedPoolHealth: calls are taken in turn while none is in flight;
// a server that cannot be reached hands its call to the next at once and,
// after three failures, is down until its probe; a server whose vectors
// are of other dimensions is refused.
func TestEmbedPoolHealth(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a, b := llmtest.NewFakeEmbedder("nomic-embed-text", 8), llmtest.NewFakeEmbedder("nomic-embed-text", 8)
	p, err := pool.NewEmbed(pool.EmbedConfig{
		Servers: []pool.EmbedServer{{Name: "A", Embedder: a}, {Name: "B", Embedder: b}},
		Now:     func() time.Time { return now },
	})
	require.NoError(t, err)
	assert.Equal(t, "nomic-embed-text", p.Model())
	assert.Equal(t, 8, p.Dimensions())
	embed := func() error {
		t.Helper()
		vecs, err := p.Embed(context.Background(), []string{"a text", "another"})
		if err == nil {
			require.Len(t, vecs, 2)
			assert.Equal(t, llmtest.Embedding("a text", 8), vecs[0], "the server's vector, as is")
		}
		return err
	}

	steps := []struct {
		name         string
		do           func()
		calls        int // embed calls in this step
		wantA, wantB int // calls each server got in this step
		bDown        bool
	}{
		{"both up: in turn", func() {}, 10, 5, 5, false},
		{"B refuses: its calls go to A within the call", func() { b.Fail(refused) }, 6, 6, 3, true},
		{"B down: not asked", func() {}, 4, 4, 0, true},
		{"B back, its probe due: one probe, then in turn", func() { b.Fail(nil); now = now.Add(pool.DefaultProbe) }, 4, 2, 2, false},
	}
	for _, st := range steps {
		st.do()
		a0, _ := a.Calls()
		b0, _ := b.Calls()
		for range st.calls {
			require.NoError(t, embed(), st.name)
		}
		a1, _ := a.Calls()
		b1, _ := b.Calls()
		assert.Equal(t, st.wantA, a1-a0, "%s: calls to A", st.name)
		assert.Equal(t, st.wantB, b1-b0, "%s: calls to B", st.name)
		assert.Equal(t, st.bDown, p.Stats()[1].Down, st.name)
	}
	assert.Equal(t, int64(1), p.Stats()[1].Downs)
	assert.Equal(t, int64(3), p.Stats()[1].Errors)

	a.Fail(refused)
	b.Fail(refused)
	assert.ErrorIs(t, embed(), llm.ErrUnavailable, "no server reached")
	for range 3 {
		_ = embed()
	}
	assert.ErrorIs(t, embed(), pool.ErrNoServer, "both down")

	odd, err := pool.NewEmbed(pool.EmbedConfig{Servers: []pool.EmbedServer{
		{Name: "A", Embedder: llmtest.NewFakeEmbedder("m", 8)}, {Name: "B", Embedder: llmtest.NewFakeEmbedder("m", 4)},
	}})
	require.NoError(t, err)
	for range 2 {
		if _, err := odd.Embed(context.Background(), []string{"x"}); err != nil {
			assert.ErrorIs(t, err, llm.ErrDimensions, "B's 4 dimensions are not the pool's 8")
		}
	}
	vecs, err := odd.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, vecs)
}

// TestEmbedPoolConfig: the configurations NewEmbed refuses.
func TestEmbedPoolConfig(t *testing.T) {
	e := llmtest.NewFakeEmbedder("m", 8)
	for name, cfg := range map[string]pool.EmbedConfig{
		"no server":    {},
		"no name":      {Servers: []pool.EmbedServer{{Embedder: e}}},
		"no embedder":  {Servers: []pool.EmbedServer{{Name: "A"}}},
		"a name twice": {Servers: []pool.EmbedServer{{Name: "A", Embedder: e}, {Name: "A", Embedder: e}}},
		"two models":   {Servers: []pool.EmbedServer{{Name: "A", Embedder: e}, {Name: "B", Embedder: llmtest.NewFakeEmbedder("other", 8)}}},
	} {
		_, err := pool.NewEmbed(cfg)
		assert.Error(t, err, name)
	}
}

// gateEmbedder holds each call until release is closed, saying on
// entered that one arrived.
type gateEmbedder struct {
	*llmtest.FakeEmbedder
	entered chan struct{}
	release chan struct{}
}

func (g gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.FakeEmbedder.Embed(ctx, texts)
}

// TestEmbedPoolLeastInFlight: while a call is in flight on one server,
// the next calls go to the other.
func TestEmbedPoolLeastInFlight(t *testing.T) {
	slow := gateEmbedder{llmtest.NewFakeEmbedder("m", 8), make(chan struct{}, 1), make(chan struct{})}
	fast := llmtest.NewFakeEmbedder("m", 8)
	p, err := pool.NewEmbed(pool.EmbedConfig{Servers: []pool.EmbedServer{{Name: "slow", Embedder: slow}, {Name: "fast", Embedder: fast}}})
	require.NoError(t, err)
	held := make(chan error, 1)
	for {
		done := make(chan error, 1)
		go func() { _, err := p.Embed(context.Background(), []string{"x"}); done <- err }()
		select {
		case <-slow.entered: // one call holds slow
			go func() { held <- <-done }()
		case err := <-done: // fast took it: ask again, the turn moves on
			require.NoError(t, err)
			continue
		}
		break
	}
	before, _ := fast.Calls()
	for range 5 {
		_, err := p.Embed(context.Background(), []string{"y"})
		require.NoError(t, err)
	}
	after, _ := fast.Calls()
	assert.Equal(t, 5, after-before, "every call went to the server with none in flight")
	assert.Equal(t, int64(1), p.Stats()[0].InFlight)
	close(slow.release)
	require.NoError(t, <-held)
}

// TestEmbedPoolOverStandins: two stand-in Ollama servers over loopback
// serving an embedding model; one is closed, and every later call is
// answered by the other.
func TestEmbedPoolOverStandins(t *testing.T) {
	var servers []pool.EmbedServer
	var standins []*llmtest.Server
	for i := range 2 {
		s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
		url := s.Start()
		t.Cleanup(s.Close)
		standins = append(standins, s)
		e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Model: "nomic-embed-text"})
		require.NoError(t, err)
		servers = append(servers, pool.EmbedServer{Name: fmt.Sprint("server-", i), Embedder: e})
	}
	p, err := pool.NewEmbed(pool.EmbedConfig{Servers: servers})
	require.NoError(t, err)
	for round := range 4 {
		if round == 2 {
			standins[1].Close()
		}
		for i := range 10 {
			vecs, err := p.Embed(context.Background(), []string{fmt.Sprint("text ", i)})
			require.NoError(t, err, "round %d", round)
			assert.Equal(t, llmtest.Embedding(fmt.Sprint("text ", i), 768), vecs[0])
		}
	}
	assert.Equal(t, 768, p.Dimensions())
	st := p.Stats()
	assert.True(t, st[1].Down)
	assert.Equal(t, 10, standins[1].Stats().Requests, "server-1 took its turns until it was closed")
	assert.Equal(t, 30, standins[0].Stats().Requests)
}
