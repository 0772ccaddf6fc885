package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/openai"
)

// This file is a protocol-faithful fake of an OpenAI-compatible server's
// POST /v1/chat/completions, used by the conformance suite and the tests.

// wireRequest is the chat completions request body as a server decodes it.
type wireRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages       []wireMessage `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Temperature         *float64 `json:"temperature"`
	Seed                *int     `json:"seed"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// content decodes a message content: a string, an array of text parts, or
// null.
func (m wireMessage) content() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor parts: %s", m.Content)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// record maps a decoded request back to llm terms.
func (w *wireRequest) record(path string, raw []byte) (llmtest.Recorded, error) {
	rec := llmtest.Recorded{
		Path:        path,
		Model:       w.Model,
		Stream:      w.Stream,
		Temperature: w.Temperature,
		Seed:        w.Seed,
		MaxTokens:   w.MaxTokens,
		Raw:         append(json.RawMessage(nil), raw...),
	}
	if rec.MaxTokens == 0 {
		rec.MaxTokens = w.MaxCompletionTokens
	}
	if rf := w.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
		rec.Format = rf.JSONSchema.Schema
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	for _, m := range w.Messages {
		c, err := m.content()
		if err != nil {
			return rec, err
		}
		msg := llm.Message{Role: llm.Role(m.Role), Content: c, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	return rec, nil
}

// fakeServer answers scripts in order.
type fakeServer struct {
	t       *testing.T
	mu      sync.Mutex
	scripts []llmtest.Script
	next    int
	recs    []llmtest.Recorded
	headers []http.Header
}

func newFakeServer(t *testing.T, scripts ...llmtest.Script) (*fakeServer, *httptest.Server) {
	fs := &fakeServer{t: t, scripts: scripts}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv
}

func (fs *fakeServer) recorded() []llmtest.Recorded {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]llmtest.Recorded(nil), fs.recs...)
}

func (fs *fakeServer) requestHeaders() []http.Header {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]http.Header(nil), fs.headers...)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	if code != "" {
		body["error"].(map[string]any)["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (fs *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	var req wireRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	rec, err := req.record(r.URL.Path, raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}

	fs.mu.Lock()
	fs.recs = append(fs.recs, rec)
	fs.headers = append(fs.headers, r.Header.Clone())
	var sc llmtest.Script
	ok := fs.next < len(fs.scripts)
	if ok {
		sc = fs.scripts[fs.next]
		fs.next++
	}
	n := len(fs.recs)
	fs.mu.Unlock()
	if !ok {
		writeError(w, http.StatusInternalServerError, "server_error", "", "fake server: no script left")
		return
	}

	switch {
	case sc.Status != 0:
		if sc.RetryAfter != "" {
			w.Header().Set("Retry-After", sc.RetryAfter)
		}
		writeError(w, sc.Status, "server_error", "", sc.ErrorMessage)
		onReceive(sc)
		return
	case sc.ModelMissing:
		writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model))
		onReceive(sc)
		return
	case sc.Hang:
		onReceive(sc)
		<-r.Context().Done()
		return
	}

	id := fmt.Sprintf("chatcmpl-%d", n)
	if req.Stream {
		fs.stream(w, r, id, req, sc)
	} else {
		fs.complete(w, r, id, req, sc)
	}
}

func onReceive(sc llmtest.Script) {
	if sc.OnReceive != nil {
		sc.OnReceive()
	}
}

func finishReason(sc llmtest.Script) string {
	switch {
	case sc.DoneReason != "":
		return sc.DoneReason
	case len(sc.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

func toolCallID(sc llmtest.Script, i int) string {
	if id := sc.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_fake%d", i) // real servers always send one
}

func usage(sc llmtest.Script) map[string]any {
	return map[string]any{
		"prompt_tokens":     sc.PromptTokens,
		"completion_tokens": sc.OutputTokens,
		"total_tokens":      sc.PromptTokens + sc.OutputTokens,
	}
}

func (fs *fakeServer) complete(w http.ResponseWriter, r *http.Request, id string, req wireRequest, sc llmtest.Script) {
	msg := map[string]any{"role": "assistant", "content": sc.Text, "refusal": nil}
	if sc.Text == "" && len(sc.ToolCalls) > 0 {
		msg["content"] = nil
	}
	if sc.Thinking != "" {
		msg["reasoning_content"] = sc.Thinking
	}
	if len(sc.ToolCalls) > 0 {
		var calls []map[string]any
		for i, tc := range sc.ToolCalls {
			calls = append(calls, map[string]any{
				"id":       toolCallID(sc, i),
				"type":     "function",
				"function": map[string]any{"name": tc.Name, "arguments": string(tc.Arguments)},
			})
		}
		msg["tool_calls"] = calls
	}
	body, err := json.Marshal(map[string]any{
		"id":      id,
		"object":  "chat.completion",
		"created": 1767225600,
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(sc)}},
		"usage":   usage(sc),
	})
	if !assert.NoError(fs.t, err, "fake server") {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if sc.HangStream {
		// Headers and the first half of the body, then nothing.
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		onReceive(sc)
		<-r.Context().Done()
		return
	}
	_, _ = w.Write(body)
	onReceive(sc)
}

func (fs *fakeServer) stream(w http.ResponseWriter, r *http.Request, id string, req wireRequest, sc llmtest.Script) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		b, err := json.Marshal(chunk)
		if !assert.NoError(fs.t, err, "fake server") {
			return
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
	}

	send(map[string]any{"role": "assistant", "content": ""}, nil)
	if sc.Thinking != "" {
		for _, part := range llmtest.SplitChunks(sc.Thinking, sc.Chunks) {
			send(map[string]any{"reasoning_content": part}, nil)
		}
	}
	parts := llmtest.SplitChunks(sc.Text, sc.Chunks)
	if sc.Text == "" {
		parts = nil
	}
	for i, part := range parts {
		send(map[string]any{"content": part}, nil)
		if sc.HangStream && i == 0 {
			flusher.Flush()
			onReceive(sc)
			<-r.Context().Done()
			return
		}
	}
	for i, tc := range sc.ToolCalls {
		// The first delta carries the id and name, the arguments follow in
		// two pieces, as OpenAI streams them.
		args := string(tc.Arguments)
		half := len(args) / 2
		send(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": toolCallID(sc, i), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil)
		for _, piece := range []string{args[:half], args[half:]} {
			send(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil)
		}
	}
	if sc.HangStream {
		flusher.Flush()
		onReceive(sc)
		<-r.Context().Done()
		return
	}
	send(map[string]any{}, finishReason(sc))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{}, "usage": usage(sc),
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
	onReceive(sc)
}

// harness connects the conformance suite to the adapter.
func harness(cfg openai.Config) llmtest.Harness {
	return llmtest.Harness{
		Name: "openai",
		New: func(t *testing.T, stream bool, scripts ...llmtest.Script) (llm.Model, func() []llmtest.Recorded) {
			fs, srv := newFakeServer(t, scripts...)
			c := cfg
			c.BaseURL = srv.URL + "/v1"
			c.Stream = stream
			if c.Model == "" {
				c.Model = "qwen3.5-9b"
			}
			m, err := openai.New(c)
			require.NoError(t, err)
			return m, fs.recorded
		},
		Unreachable: func(t *testing.T) llm.Model {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			require.NoError(t, ln.Close())
			m, err := openai.New(openai.Config{BaseURL: "http://" + addr + "/v1", Model: "qwen3.5-9b"})
			require.NoError(t, err)
			return m
		},
	}
}

// newModel starts a fake server with scripts and returns a model for it.
func newModel(t *testing.T, cfg openai.Config, scripts ...llmtest.Script) (*openai.Model, *fakeServer) {
	t.Helper()
	fs, srv := newFakeServer(t, scripts...)
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "qwen3.5-9b"
	}
	m, err := openai.New(cfg)
	require.NoError(t, err)
	return m, fs
}
