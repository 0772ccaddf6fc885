package openai_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
)

// TestEmbedderConformance runs the embedder conformance suite against the
// stand-in server's /v1/embeddings.
func TestEmbedderConformance(t *testing.T) {
	llmtest.RunEmbedder(t, llmtest.EmbedHarness{
		Name: "openai",
		API:  "openai",
		New: func(t *testing.T, url, model string) llm.Embedder {
			e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: url + "/v1", APIKey: "test", Model: model})
			require.NoError(t, err)
			return e
		},
	})
}

func TestEmbedderBatches(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: url + "/v1", APIKey: "test", Model: "nomic-embed-text", Batch: 3})
	require.NoError(t, err)
	texts := []string{"a", "b", "c", "d", "e", "f", "g"}
	vecs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	for i, text := range texts {
		require.InDeltaSlice(t, llmtest.Embedding(text, 768), vecs[i], 1e-6)
	}
	require.Equal(t, 3, s.Stats().Requests, "7 texts in batches of 3 are 3 requests")
}

func TestEmbedderConfig(t *testing.T) {
	_, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: "http://127.0.0.1:1/v1"})
	require.Error(t, err, "Model is required")
	_, err = openai.NewEmbedder(openai.EmbedConfig{BaseURL: "http://127.0.0.1:/v1", Model: "m"})
	require.Error(t, err, "an empty port is refused")
	_, err = openai.NewEmbedder(openai.EmbedConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Dimensions: -1})
	require.Error(t, err)
}
