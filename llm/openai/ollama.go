package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/middleware"
)

// detectTimeout bounds the one request that asks whether the server is
// Ollama.
const detectTimeout = 5 * time.Second

// detectTries is how many lookups of detect may fail on the network (a
// timeout, a refused connection) before the server is taken for one that
// is not Ollama.
const detectTries = 3

// detect asks once whether the server is Ollama: a base URL ending in
// "/v1" whose host answers GET /api/version with {"version": "..."}.
// Ollama's OpenAI-compatible endpoint drops num_ctx, so its default window
// (OLLAMA_CONTEXT_LENGTH, [ctxwindow.OllamaDefaultWindow] unset) applies to
// every request, and a prompt over it is cut silently: the adapter then
// sizes prompts to that window (unless [Config].ContextWindow says
// otherwise) and warns once. A server that does not answer so (llama.cpp's
// server, vLLM, OpenAI) is not Ollama; the request's failure is not an
// error of the call. The lookup is shared by concurrent callers, each
// waiting at most until its own ctx ends, and bounded by 5 s; one that
// failed on the network is made again by a later call, 3 times at most.
func (m *Model) detect(ctx context.Context) {
	_, _ = m.detected.Get(ctx, func(ctx context.Context) (struct{}, error) {
		base, ok := strings.CutSuffix(m.base, "/v1")
		if !ok {
			return struct{}{}, nil
		}
		req, err := http.NewRequestWithContext(middleware.WithReplyLimit(ctx, 4096), http.MethodGet, base+"/api/version", nil)
		if err != nil {
			return struct{}{}, nil
		}
		res, err := m.hc.Do(req)
		if err != nil {
			if m.detectFails.Add(1) < detectTries {
				return struct{}{}, err // asked again by a later call
			}
			return struct{}{}, nil
		}
		defer res.Body.Close()
		var v struct {
			Version string `json:"version"`
		}
		if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 4096)).Decode(&v) != nil || v.Version == "" {
			return struct{}{}, nil
		}
		m.mu.Lock()
		m.ollama = v.Version
		m.mu.Unlock()
		window := m.cfg.ContextWindow
		if window == 0 {
			window = ctxwindow.OllamaDefaultWindow
		}
		m.logger().Warn("openai: the server is Ollama, whose OpenAI-compatible endpoint ignores num_ctx and cuts a prompt over its default window silently; prompts are sized to that window (set openai.Config.ContextWindow to OLLAMA_CONTEXT_LENGTH if it is set), or use the ollama provider to choose the window",
			"url", m.base, "ollama_version", v.Version, "window_tokens", window)
		return struct{}{}, nil
	})
}

// Ollama returns the Ollama version the server reported when it is an
// Ollama server (see [Model.ContextWindow]), else "". It is known after
// the first call of Generate or ContextWindow.
func (m *Model) Ollama() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ollama
}
