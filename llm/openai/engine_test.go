package openai_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/engine"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/openai"
)

var engineUpdate = engine.UpdateFlag()

// The TestEngine… tests run against a real engine's OpenAI-compatible
// endpoint (llama-server's, package internal/engine; they skip without
// one) and record what it answered under testdata/engine/ with -update;
// their TestTranscript… twins replay those transcripts in the quick suite.

// replayEach runs check against the transcript name of each engine.
func replayEach(t *testing.T, name string, check func(*testing.T, engine.Target)) {
	for _, eng := range engine.Engines {
		t.Run(eng, func(t *testing.T) { check(t, engine.ReplayedOn(t, name, eng)) })
	}
}

func newEngineModel(t *testing.T, tg engine.Target, cfg openai.Config) *openai.Model {
	t.Helper()
	cfg.BaseURL, cfg.Model, cfg.HTTPClient, cfg.APIKey = tg.URL+"/v1", tg.Model, tg.Client, "none"
	m, err := openai.New(cfg)
	require.NoError(t, err)
	return m
}

// Structured output under llama-server: the reply to response_format
// json_schema is JSON that validates, max_tokens bounds it, and a second
// request sharing the prefix reports the reused KV cache as
// usage.prompt_tokens_details.cached_tokens while usage.prompt_tokens
// still counts the whole prompt, so the adapter's PromptTokens is the
// whole prompt both times.
func TestEngineOpenAIStructured(t *testing.T) {
	checkStructured(t, engine.Live(t, "openai_structured", engine.Config{Window: 2048, API: engine.LlamaCpp}, engineUpdate()))
}

func TestTranscriptOpenAIStructured(t *testing.T) {
	replayEach(t, "openai_structured", checkStructured)
}

func checkStructured(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	system, err := tg.Filler(ctx, 600)
	require.NoError(t, err)
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["goal"]},"content":{"type":"string"}},"required":["action","content"]}`)
	var prompts []int
	for i, stream := range []bool{false, true} {
		m := newEngineModel(t, tg, openai.Config{Stream: stream, ContextWindow: 2048})
		resp, err := m.Generate(ctx, &llm.Request{
			Messages:  []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: []string{"Choose a goal.", "Choose another goal."}[i]}},
			Format:    schema,
			Seed:      llm.Ptr(3),
			MaxTokens: 200,
		})
		require.NoError(t, err, "stream=%v", stream)
		var out struct {
			Action  string `json:"action"`
			Content string `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp.Text), &out), "stream=%v: %q", stream, resp.Text)
		require.Equal(t, "goal", out.Action)
		require.Equal(t, llm.DoneStop, resp.DoneReason)
		prompts = append(prompts, resp.PromptTokens)
	}
	require.GreaterOrEqual(t, prompts[0], 600)
	require.InDelta(t, prompts[0], prompts[1], 10, "llama-server counts the whole prompt, cached or not")

	// The same request, raw: the usage block states the cached prefix.
	var raw struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	require.NoError(t, tg.Do(ctx, http.MethodPost, "/v1/chat/completions", map[string]any{
		"model":      tg.Model,
		"messages":   []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": "One more goal."}},
		"max_tokens": 5,
	}, &raw))
	if tg.Engine == engine.Ollama {
		// Ollama's /v1 states no cached prefix; its debug log does.
		require.Zero(t, raw.Usage.PromptTokensDetails.CachedTokens)
		require.GreaterOrEqual(t, raw.Usage.PromptTokens, 600, "the whole prompt")
		if tg.Server != nil {
			lines, err := engine.CacheLines(tg.Server.Log())
			require.NoError(t, err)
			require.Len(t, lines, 3)
			require.GreaterOrEqual(t, lines[2].Used, 600, "the system prompt came from the KV cache")
			require.Less(t, lines[2].Used, lines[2].Prompt)
		}
	} else {
		require.GreaterOrEqual(t, raw.Usage.PromptTokensDetails.CachedTokens, 600)
		require.Greater(t, raw.Usage.PromptTokens, raw.Usage.PromptTokensDetails.CachedTokens)
	}
	require.Contains(t, []string{"length", "stop"}, raw.Choices[0].FinishReason)
	require.LessOrEqual(t, raw.Usage.CompletionTokens, 5, "max_tokens bounds the reply")
}

// A prompt over llama-server's window is refused with HTTP 400, type
// exceed_context_size_error, "request (N tokens) exceeds the available
// context size (W tokens), try increasing it"; the adapter reports an
// *llm.ContextLengthError with both numbers.
func TestEngineOpenAIRefusal(t *testing.T) {
	checkOpenAIRefusal(t, engine.Live(t, "openai_refusal", engine.Config{Window: 1024, API: engine.LlamaCpp}, engineUpdate()))
}

func TestTranscriptOpenAIRefusal(t *testing.T) {
	replayEach(t, "openai_refusal", checkOpenAIRefusal)
}

func checkOpenAIRefusal(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	text, err := tg.Filler(ctx, 1100)
	require.NoError(t, err)
	m := newEngineModel(t, tg, openai.Config{})
	resp, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}, MaxTokens: 8})
	if tg.Engine == engine.Ollama {
		// Ollama's /v1 sends its runner no "truncate": false: the prompt
		// is cut to the window, silently, and the reply comes. Only
		// /api/chat (llm/ollama) refuses.
		var te *llm.TruncatedError
		if errors.As(err, &te) {
			resp, err = te.Response, nil // the reply limit, not the window
		}
		require.NoError(t, err)
		require.LessOrEqual(t, resp.PromptTokens, 1024, "cut to the window")
		require.Less(t, resp.PromptTokens, 1100, "the 1100-token prompt was not evaluated whole")
		return
	}
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 1024, ce.Window, "the window the server stated")
	require.Greater(t, ce.Prompt, 1024)
	require.True(t, strings.HasSuffix(ce.Message, "exceeds the available context size (1024 tokens), try increasing it"), ce.Message)
	require.False(t, errors.Is(err, llm.ErrUnavailable))
}
