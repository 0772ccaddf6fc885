package monitor_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/memstore"
)

// memoryEnv is the trio with a memory holding three memories of scout's.
func memoryEnv(t *testing.T, token string) (*env, *memory.Memory) {
	t.Helper()
	mem, err := memory.New(memory.Config{Store: memstore.New(), Embedder: llmtest.NewFakeEmbedder("", 0), NoBackfill: true})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close() })
	for _, text := range []string{"FAILED: the deploy broke on a missing env var", "wrote notes.md with the layout", "the rate limiter drops requests at night"} {
		_, err := mem.Remember(context.Background(), "scout", memory.Note{Text: text})
		require.NoError(t, err)
	}
	return newEnv(t, 3, monitor.Config{Memory: mem, Token: token}), mem
}

func TestMemoriesEndpoint(t *testing.T) {
	e, mem := memoryEnv(t, "")
	code, body := do(t, e.mon, "GET", "/api/agents/scout/memories?q="+url.QueryEscape("why did the deploy break?")+"&k=2", "", nil)
	require.Equal(t, 200, code, body)
	var page monitor.MemoriesPage
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	assert.Equal(t, "scout", page.Agent)
	assert.Equal(t, 3, page.Stats.Memories)
	require.NotEmpty(t, page.Memories)
	assert.Equal(t, "FAILED: the deploy broke on a missing env var", page.Memories[0].Text)
	require.NotNil(t, page.Memories[0].Relevance, "a recall shows the parts of the score")
	assert.Greater(t, *page.Memories[0].Relevance, 0.35)
	assert.False(t, page.Fallback)
	recs, err := mem.List(context.Background(), "scout")
	require.NoError(t, err)
	for _, r := range recs {
		assert.Zero(t, r.AccessCount, "a GET changes no memory")
	}

	code, body = do(t, e.mon, "GET", "/api/agents/scout/memories?k=2", "", nil)
	require.Equal(t, 200, code, body)
	page = monitor.MemoriesPage{}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Memories, 2, "without q: the newest")
	assert.Equal(t, "the rate limiter drops requests at night", page.Memories[0].Text)
	assert.Nil(t, page.Memories[0].Score)

	code, _ = do(t, e.mon, "GET", "/api/agents/nobody/memories", "", nil)
	assert.Equal(t, 404, code)
	code, _ = do(t, e.mon, "GET", "/api/agents/scout/memories?k=0", "", nil)
	assert.Equal(t, 400, code)

	code, body = do(t, e.mon, "GET", "/api/agents?sort=name", "", nil)
	require.Equal(t, 200, code)
	var agents monitor.AgentsPage
	require.NoError(t, json.Unmarshal([]byte(body), &agents))
	counts := map[string]*monitor.MemoryCounts{}
	for _, a := range agents.Agents {
		counts[a.ID] = a.Memories
	}
	assert.Equal(t, &monitor.MemoryCounts{Memories: 3, Embedded: 3}, counts["scout"], "per-agent memory counts")
	assert.Equal(t, &monitor.MemoryCounts{}, counts["analyst"])
}

func TestMemoriesEndpointAuth(t *testing.T) {
	e, _ := memoryEnv(t, "s3cret")
	code, _ := do(t, e.mon, "GET", "/api/agents/scout/memories?q=deploy", "", nil)
	assert.Equal(t, 401, code, "as the rest of the API")
	code, _ = do(t, e.mon, "GET", "/api/agents/scout/memories?q=deploy", "", map[string]string{"Authorization": "Bearer s3cret"})
	assert.Equal(t, 200, code)
}

func TestMemoriesEndpointWithoutMemory(t *testing.T) {
	e := newEnv(t, 1, monitor.Config{})
	code, body := do(t, e.mon, "GET", "/api/agents/scout/memories", "", nil)
	assert.Equal(t, 501, code, body)
	code, body = do(t, e.mon, "GET", "/api/agents", "", nil)
	require.Equal(t, 200, code)
	assert.NotContains(t, body, `"memories"`)
}
