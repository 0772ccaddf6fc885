package ollama_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// allocated returns the bytes f allocated (runtime.MemStats.TotalAlloc,
// which also counts what was freed since: a bound on the peak).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestEmbedReplyCapped: a server streaming a 300 MB embedding reply gets
// the call refused at its cap (one text of unknown dimensions: 8192 × 24
// bytes + 1 MiB), without reading, let alone decoding, the rest.
func TestEmbedReplyCapped(t *testing.T) {
	f := llmtest.NewFlood(`{"model":"m","embeddings":[[`, 300<<20)
	t.Cleanup(f.Close)
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: f.URL})
	require.NoError(t, err)
	var eerr error
	n := allocated(func() { _, eerr = e.Embed(t.Context(), []string{"hello"}) })
	require.ErrorIs(t, eerr, llm.ErrReplyTooLarge)
	assert.Contains(t, eerr.Error(), "/api/embed passed")
	assert.False(t, llm.Retryable(eerr))
	assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
	assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
}

// TestChatReplyCapped: the same for a chat reply, capped by MaxTokens.
func TestChatReplyCapped(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := llmtest.NewFlood(`{"model":"m","message":{"role":"assistant","content":"`, 300<<20)
		t.Cleanup(f.Close)
		m, err := ollama.New(ollama.Config{URL: f.URL, Model: "m", Stream: stream, NumCtx: 4096})
		require.NoError(t, err)
		var gerr error
		n := allocated(func() {
			_, gerr = m.Generate(t.Context(), &llm.Request{MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		})
		require.ErrorIs(t, gerr, llm.ErrReplyTooLarge, "stream %v", stream)
		assert.Contains(t, gerr.Error(), "/api/chat passed")
		assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
		assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
	}
}
