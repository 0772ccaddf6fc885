package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/openai"
)

// An in-process stand-in for a llama.cpp server: it prints the
// response_format it receives and answers with a fixed chat completion.
func newExampleServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // as llama.cpp's server answers Ollama's /api/version
			return
		}
		var body struct {
			Model          string          `json:"model"`
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Printf("server: POST %s model=%s response_format=%s\n", r.URL.Path, body.Model, body.ResponseFormat)

		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"qwen3.5-9b",
			"choices":[{"index":0,"message":{"role":"assistant","content":"{\"action\":\"goal\",\"content\":\"map the workspace\"}"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":812,"completion_tokens":14,"total_tokens":826}}`)
	}))
}

func Example() {
	srv := newExampleServer()
	defer srv.Close()

	m, err := openai.New(openai.Config{
		BaseURL: srv.URL + "/v1", // e.g. http://127.0.0.1:8080/v1 for llama.cpp server
		Model:   "qwen3.5-9b",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Retries and timeouts come from the llm middleware, not the client.
	model := middleware.WithRetry(middleware.WithTimeout(m, middleware.DefaultTimeout), middleware.RetryPolicy{})

	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are Cedar, a scout."},
			{Role: llm.RoleUser, Content: "Choose your next goal."},
		},
		Format: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"}},"required":["action","content"]}`),
	})
	if err != nil {
		fmt.Println(middleware.Classify(err), err)
		return
	}
	fmt.Println(resp.Text)
	fmt.Println(resp.DoneReason, resp.PromptTokens, resp.OutputTokens)
	// Output:
	// server: POST /v1/chat/completions model=qwen3.5-9b response_format={"json_schema":{"name":"response","schema":{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"}},"required":["action","content"]}},"type":"json_schema"}
	// {"action":"goal","content":"map the workspace"}
	// stop 812 14
}

// JSONObject asks for JSON mode, for servers without json_schema support.
func ExampleConfig_jsonObject() {
	srv := newExampleServer()
	defer srv.Close()

	m, _ := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "qwen3.5-9b", JSONObject: true})
	resp, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with a JSON object with action and content."}},
		Format:   json.RawMessage(`{"type":"object"}`),
	})
	fmt.Println(resp.Text, err)
	// Output:
	// server: POST /v1/chat/completions model=qwen3.5-9b response_format={"type":"json_object"}
	// {"action":"goal","content":"map the workspace"} <nil>
}
