package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ollama"
)

// A structured-output call. The httptest server stands in for Ollama so the
// example runs without one; point URL at your server (or leave it empty to
// use $OLLAMA_HOST, else http://127.0.0.1:11434).
func ExampleModel_Generate() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"model":"qwen3.5:9b","message":{"role":"assistant","content":"{\"action\":\"goal\",\"content\":\"map the workspace\"}"},"done":true,"done_reason":"stop","prompt_eval_count":812,"eval_count":14}`)
	}))
	defer srv.Close()

	keep := time.Duration(-1) // keep the model loaded, as the original did
	m, err := ollama.New(ollama.Config{URL: srv.URL, Model: "qwen3.5:9b", KeepAlive: &keep})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are Cedar, a scout."},
			{Role: llm.RoleUser, Content: "Choose your next goal."},
		},
		Format:      json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"}},"required":["action","content"]}`),
		Temperature: llm.Ptr(0.7),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Model, resp.DoneReason, resp.PromptTokens, resp.OutputTokens)
	fmt.Println(resp.Text)
	// Output:
	// qwen3.5:9b stop 812 14
	// {"action":"goal","content":"map the workspace"}
}

// Errors are classified; a missing model says what to run.
func ExampleModel_Generate_modelNotFound() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"model 'qwen3.5:9b' not found"}`)
	}))
	defer srv.Close()

	m, _ := ollama.New(ollama.Config{URL: srv.URL, Model: "qwen3.5:9b"})
	_, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
	})
	fmt.Println(errors.Is(err, llm.ErrModelNotFound))
	fmt.Println(err)
	// Output:
	// true
	// ollama: model "qwen3.5:9b" not found (run `ollama pull qwen3.5:9b`)
}
