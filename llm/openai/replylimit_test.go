package openai_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
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

// TestEmbedReplyCapped: a server streaming a 300 MB embeddings reply gets
// the call refused at its cap, without reading the rest.
func TestEmbedReplyCapped(t *testing.T) {
	f := llmtest.NewFlood(`{"object":"list","data":[{"index":0,"embedding":[`, 300<<20)
	t.Cleanup(f.Close)
	e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: f.URL + "/v1", APIKey: "k", Model: "m", Dimensions: 768})
	require.NoError(t, err)
	var eerr error
	n := allocated(func() { _, eerr = e.Embed(t.Context(), []string{"hello"}) })
	require.ErrorIs(t, eerr, llm.ErrReplyTooLarge)
	assert.Contains(t, eerr.Error(), "/v1/embeddings passed 1067008 bytes", "768 × 24 + 1 MiB")
	assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
	assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
}

// TestChatReplyCapped: the same for a chat reply, capped by MaxTokens,
// streamed or not.
func TestChatReplyCapped(t *testing.T) {
	for _, stream := range []bool{false, true} {
		prefix := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`
		if stream {
			prefix = `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`
		}
		f := llmtest.NewFlood(prefix, 300<<20)
		t.Cleanup(f.Close)
		m, err := openai.New(openai.Config{BaseURL: f.URL + "/v1", APIKey: "k", Model: "m", Stream: stream})
		require.NoError(t, err)
		var gerr error
		n := allocated(func() {
			_, gerr = m.Generate(t.Context(), &llm.Request{MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		})
		require.ErrorIs(t, gerr, llm.ErrReplyTooLarge, "stream %v", stream)
		assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
		assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
	}
}
