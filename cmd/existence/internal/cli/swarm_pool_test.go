package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
)

// TestTrioModelPool: existence run with two -llm-url builds an llm.Pool of
// two adapters, each pinned agent answered by its own stand-in.
func TestTrioModelPool(t *testing.T) {
	o := &runOptions{provider: "ollama", llmURLs: []string{"standin:?latency=1ms", "standin:?latency=1ms"}}
	o.llmURL = o.llmURLs[0]
	m, stop, err := trioModel(o)
	require.NoError(t, err)
	t.Cleanup(stop)
	pool, ok := m.(*llm.Pool)
	require.True(t, ok, "%T", m)
	assert.Equal(t, 2, strings.Count(o.llmURL, "http://"), o.llmURL)
	for _, id := range []string{"scout", "analyst", "builder"} {
		_, err := pool.Generate(llm.WithAgent(context.Background(), id), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		require.NoError(t, err, id)
	}
	var calls int64
	for _, st := range pool.Stats() {
		calls += st.Calls
	}
	assert.Equal(t, int64(3), calls)

	one := &runOptions{provider: "ollama", llmURL: "standin:?latency=1ms", llmURLs: []string{"standin:?latency=1ms"}}
	m, stop, err = trioModel(one)
	require.NoError(t, err)
	t.Cleanup(stop)
	_, isPool := m.(*llm.Pool)
	assert.False(t, isPool, "one -llm-url: the adapter itself")
}
