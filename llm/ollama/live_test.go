package ollama_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ollama"
)

// TestLive sends one structured-output request to a real Ollama server. It
// is skipped unless EXISTENCE_LIVE_OLLAMA=1; the model comes from
// EXISTENCE_LIVE_MODEL (default qwen3.5:9b) and the server from OLLAMA_HOST:
//
//	EXISTENCE_LIVE_OLLAMA=1 go test -run Live -v ./llm/ollama
func TestLive(t *testing.T) {
	if os.Getenv("EXISTENCE_LIVE_OLLAMA") != "1" {
		t.Skip("set EXISTENCE_LIVE_OLLAMA=1 to run against a local Ollama server")
	}
	model := os.Getenv("EXISTENCE_LIVE_MODEL")
	if model == "" {
		model = "qwen3.5:9b"
	}
	for _, stream := range []bool{false, true} {
		m, err := ollama.New(ollama.Config{Model: model, Stream: stream})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		resp, err := m.Generate(ctx, &llm.Request{
			Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: "You are a terse assistant. Answer with a JSON object only."},
				{Role: llm.RoleUser, Content: "Name one useful thing to build in an empty workspace."},
			},
			Format:      json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["goal"]},"content":{"type":"string"}},"required":["action","content"]}`),
			Temperature: llm.Ptr(0.2),
			MaxTokens:   256,
		})
		cancel()
		require.NoError(t, err, "stream=%v (URL %s)", stream, m.URL())
		var out struct {
			Action  string `json:"action"`
			Content string `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp.Text), &out), "reply is not JSON: %q", resp.Text)
		require.NotEmpty(t, out.Content)
		t.Logf("stream=%v %s: %q (%d+%d tokens, %v)", stream, resp.Model, out.Content, resp.PromptTokens, resp.OutputTokens, resp.Duration)
	}
}
