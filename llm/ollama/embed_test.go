package ollama_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// TestEmbedderConformance runs the embedder conformance suite against the
// stand-in server's /api/embed.
func TestEmbedderConformance(t *testing.T) {
	llmtest.RunEmbedder(t, llmtest.EmbedHarness{
		Name: "ollama",
		API:  "ollama",
		New: func(t *testing.T, url, model string) llm.Embedder {
			e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Model: model})
			require.NoError(t, err)
			return e
		},
	})
}

func TestEmbedderBatches(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Batch: 4})
	require.NoError(t, err)
	require.Equal(t, ollama.DefaultEmbedModel, e.Model(), "the default model is nomic-embed-text")
	texts := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	vecs, err := e.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 10)
	for i, text := range texts {
		require.InDeltaSlice(t, llmtest.Embedding(text, 768), vecs[i], 1e-6)
	}
	require.Equal(t, 3, s.Stats().Requests, "10 texts in batches of 4 are 3 requests")
}

func TestEmbedderConfig(t *testing.T) {
	_, err := ollama.NewEmbedder(ollama.EmbedConfig{Batch: -1})
	require.Error(t, err)
	_, err = ollama.NewEmbedder(ollama.EmbedConfig{URL: "ftp://x"})
	require.Error(t, err)
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: "127.0.0.1", Dimensions: 256})
	require.NoError(t, err)
	require.Equal(t, 256, e.Dimensions(), "configured dimensions are known before the first call")
	require.Equal(t, "http://127.0.0.1:11434", e.URL())
}

func TestEmbedderAsksForDimensions(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: url, Dimensions: 256})
	require.NoError(t, err)
	vecs, err := e.Embed(t.Context(), []string{"cut to 256"})
	require.NoError(t, err)
	require.Len(t, vecs[0], 256, "the request's dimensions reach the server")
}
