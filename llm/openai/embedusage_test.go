package openai_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
)

// TestEmbedUsageReported: the tokens the server counts for each request
// reach the context's llm.WithEmbedUsage function.
func TestEmbedUsageReported(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: url + "/v1", APIKey: "k", Model: "nomic-embed-text", Batch: 2})
	require.NoError(t, err)
	var tokens, reports atomic.Int64
	ctx := llm.WithEmbedUsage(t.Context(), func(n int) { tokens.Add(int64(n)); reports.Add(1) })
	_, err = e.Embed(ctx, []string{"the rate limiter", "drops requests", "at night"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), reports.Load(), "one report per request (batches of 2)")
	assert.Equal(t, int64(s.Stats().EmbedTokens), tokens.Load())
	assert.Positive(t, tokens.Load())
	_, err = e.Embed(context.Background(), []string{"no recorder"})
	require.NoError(t, err, "a context without one is fine")
}
