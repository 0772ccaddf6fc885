package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/pool"
)

// TestTrioModelPool: existence run with two -llm-url builds a pool.Pool of
// two adapters, each pinned agent answered by its own stand-in.
func TestTrioModelPool(t *testing.T) {
	o := &runOptions{provider: "ollama", llmURLs: []string{"standin:?latency=1ms", "standin:?latency=1ms"}}
	o.llmURL = o.llmURLs[0]
	m, stop, err := trioModel(o)
	require.NoError(t, err)
	t.Cleanup(stop)
	p, ok := m.(*pool.Pool)
	require.True(t, ok, "%T", m)
	assert.Equal(t, 2, strings.Count(o.llmURL, "http://"), o.llmURL)
	for _, id := range []string{"scout", "analyst", "builder"} {
		_, err := p.Generate(pool.WithAgent(context.Background(), id), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		require.NoError(t, err, id)
	}
	var calls int64
	for _, st := range p.Stats() {
		calls += st.Calls
	}
	assert.Equal(t, int64(3), calls)

	one := &runOptions{provider: "ollama", llmURL: "standin:?latency=1ms", llmURLs: []string{"standin:?latency=1ms"}}
	m, stop, err = trioModel(one)
	require.NoError(t, err)
	t.Cleanup(stop)
	_, isPool := m.(*pool.Pool)
	assert.False(t, isPool, "one -llm-url: the adapter itself")
}

// TestSwarmPoolFailover: 200 agents over two stand-in servers on loopback
// each send at least 95 % of their calls to one server; when B stops
// partway (stop-after: once it has had 200 requests, its port then
// refusing connections), its agents carry on against A within seconds,
// and the report says so.
func TestSwarmPoolFailover(t *testing.T) {
	o, err := parseSwarmFlags([]string{"-agents", "200", "-heartbeat", "500ms", "-duration", "30s",
		"-llm-url", "standin:?slots=8&latency=5ms", "-llm-url", "standin:?slots=8&latency=5ms&stop-after=200"}, io.Discard)
	require.NoError(t, err)
	o.stopWhen = func(p *swarmPool) bool { // every agent of B carried on: the run has shown what it is for
		f := p.track.failover(1)
		return f != nil && f.Agents > 0 && f.Moved == f.Agents
	}
	res, err := runSwarm(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, res.Servers, 2)
	a, b := res.Servers[0], res.Servers[1]
	require.NotNil(t, b.Pool.Failover, "B stopped after 200 requests: it had %d", b.Standin.Requests)
	require.NotNil(t, res.Pinning)
	p, f := *res.Pinning, *b.Pool.Failover
	t.Logf("pinning %+v; failover %+v", p, f)
	assert.GreaterOrEqual(t, p.Agents, 100, "most agents called before B stopped")
	assert.GreaterOrEqual(t, p.Share, 0.95)
	assert.GreaterOrEqual(t, p.Worst, 0.95)

	assert.Nil(t, a.Pool.Failover, "A never failed")
	assert.Zero(t, a.Pool.Errors)
	assert.Positive(t, f.Agents)
	assert.Equal(t, f.Agents, f.Moved, "every agent of B carried on against A")
	assert.Less(t, f.CarryOn.Max, 10000.0, "within seconds (ms), even on a loaded machine")
	assert.Less(t, res.DurationS, 30.0, "the run ended once they had")
	assert.Equal(t, int64(1), b.Pool.Downs)
	assert.True(t, b.Pool.Down)
	assert.Zero(t, res.Errors, "no cycle failed: %s", res.FirstError)

	var out bytes.Buffer
	require.NoError(t, res.print(&out, false))
	assert.Contains(t, out.String(), fmt.Sprintf("pinning       %d of %d agents", p.Pinned, p.Agents))
	assert.Contains(t, out.String(), fmt.Sprintf("%d of its %d agents carried on elsewhere", f.Moved, f.Agents))
	out.Reset()
	require.NoError(t, res.print(&out, true))
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	assert.Contains(t, m, "pinning")
	assert.Contains(t, out.String(), `"carry_on_ms"`)

	_, err = parseSwarmFlags([]string{"-llm-url", "standin:?stop-after=soon"}, io.Discard)
	assert.ErrorContains(t, err, "stop-after")
}

// TestEmbedURLPool: -embed-url given twice makes a pool.EmbedPool of two
// adapters; with one server unreachable, the other embeds every text.
func TestEmbedURLPool(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	live := s.Start()
	t.Cleanup(s.Close)
	var o embedOptions
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o.flags(fs)
	require.NoError(t, fs.Parse([]string{"-embed-url", "http://127.0.0.1:1", "-embed-url", live}))
	require.NoError(t, o.check())
	assert.Equal(t, "http://127.0.0.1:1", o.url, "the first")
	emb, urls, err := o.embedder()
	require.NoError(t, err)
	p, ok := emb.(*pool.EmbedPool)
	require.True(t, ok, "%T", emb)
	assert.Equal(t, "http://127.0.0.1:1, "+live, urls)
	for i := range 6 {
		vecs, err := p.Embed(context.Background(), []string{fmt.Sprint("text ", i)})
		require.NoError(t, err)
		assert.Equal(t, llmtest.Embedding(fmt.Sprint("text ", i), 768), vecs[0])
	}
	assert.Equal(t, 6, s.Stats().Requests)
	assert.True(t, p.Stats()[0].Down, "the unreachable server")

	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	o = embedOptions{}
	o.flags(fs)
	require.NoError(t, fs.Parse([]string{"-embed-url", live}))
	emb, _, err = o.embedder()
	require.NoError(t, err)
	_, isPool := emb.(*pool.EmbedPool)
	assert.False(t, isPool, "one -embed-url: the adapter itself")
}
