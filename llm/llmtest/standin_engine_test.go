package llmtest_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/engine"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// The stand-in answers the requests recorded from the real engine
// (llm/ollama's and llm/openai's testdata/engine transcripts) in the same
// shape as the engine: status, the keys the SDK reads, done and finish
// reasons (a reply stops at num_predict / max_tokens), the cached prefix
// in llama-server's usage, and the refusal's wording. Words and token
// counts are the model's and are not compared; the refusal cases cap the
// stand-in's window (MaxContext) so that its own token count is over it.
func TestStandInMatchesEngine(t *testing.T) {
	ignore := []string{
		"details", "modelfile", "parameters", "template", "modified_at", "capabilities",
		"model_info.llama.block_count", "model_info.llama.embedding_length", "model_info.general.parameter_count",
		"total_duration", "load_duration", "prompt_eval_duration", "eval_duration",
		"system_fingerprint", "timings",
	}
	cases := []struct {
		transcript string
		cfg        llmtest.ServerConfig
	}{
		{"../ollama/testdata/engine/ollama_bounded_reply", llmtest.ServerConfig{DefaultContext: 1024}},
		{"../ollama/testdata/engine/ollama_refusal", llmtest.ServerConfig{DefaultContext: 1024, MaxContext: 64}},
		{"../openai/testdata/engine/openai_structured", llmtest.ServerConfig{DefaultContext: 2048, OpenAIFlavor: "llamacpp", CacheSlots: 1}},
		{"../openai/testdata/engine/openai_refusal", llmtest.ServerConfig{DefaultContext: 256, OpenAIFlavor: "llamacpp", CacheSlots: 1}},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.transcript), func(t *testing.T) {
			tr, err := engine.ReadTranscript(c.transcript + ".json")
			require.NoError(t, err)
			cfg := c.cfg
			cfg.Models = []llmtest.ModelSpec{{Name: engine.ModelName, Arch: "llama", ContextLength: 8192}}
			srv := httptest.NewServer(llmtest.NewServer(cfg).Handler())
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			mismatches, err := engine.Conform(ctx, srv.Client(), srv.URL, tr, engine.ConformOptions{
				Keep:   func(ex engine.Exchange) bool { return ex.Path != "/tokenize" }, // the stand-in has no tokenizer endpoint
				Ignore: ignore,
			})
			require.NoError(t, err)
			for _, m := range mismatches {
				t.Errorf("%s", m)
			}
		})
	}
}
