package ollama_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// TestChatReplyCapped: a server streaming a 300 MB chat reply gets the
// call refused at its cap (MaxTokens × 1 KiB + 1 MiB), streamed or not,
// without reading the rest (the embedder conformance suite checks
// embeddings).
func TestChatReplyCapped(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := llmtest.NewFlood(`{"model":"m","message":{"role":"assistant","content":"`, 300<<20)
		t.Cleanup(f.Close)
		m, err := ollama.New(ollama.Config{URL: f.URL, Model: "m", Stream: stream, NumCtx: 4096})
		require.NoError(t, err)
		var gerr error
		n := llmtest.Allocated(func() {
			_, gerr = m.Generate(t.Context(), &llm.Request{MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		})
		require.ErrorIs(t, gerr, llm.ErrReplyTooLarge, "stream %v", stream)
		assert.Contains(t, gerr.Error(), "/api/chat passed")
		assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
		assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
	}
}
