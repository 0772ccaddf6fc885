package openai_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
)

// TestChatReplyCapped: a server streaming a 300 MB chat reply gets the
// call refused at its cap (MaxTokens × 1 KiB + 1 MiB), streamed or not,
// without reading the rest (the embedder conformance suite checks
// embeddings).
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
		n := llmtest.Allocated(func() {
			_, gerr = m.Generate(t.Context(), &llm.Request{MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		})
		require.ErrorIs(t, gerr, llm.ErrReplyTooLarge, "stream %v", stream)
		assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
		assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
	}
}
