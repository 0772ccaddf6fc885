package ollama_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// fakeOllama is a protocol-faithful stand-in for an Ollama server's
// /api/chat endpoint. It answers llmtest.Script values in order and writes
// replies as Ollama does: one JSON object when "stream" is false, NDJSON
// lines ending with a "done": true object carrying done_reason and the token
// counts otherwise (server/routes.go ChatHandler, streamResponse).
type fakeOllama struct {
	srv  *httptest.Server
	stop chan struct{}

	mu       sync.Mutex
	scripts  []llmtest.Script
	next     int
	recorded []llmtest.Recorded
	raw      []map[string]any
}

// startOllama starts a fake server that stops when the test ends.
func startOllama(t *testing.T, scripts ...llmtest.Script) *fakeOllama {
	t.Helper()
	f := &fakeOllama{stop: make(chan struct{}), scripts: scripts}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.stop) }) // runs first: releases hung handlers
	return f
}

// Recorded returns what the server decoded so far.
func (f *fakeOllama) Recorded() []llmtest.Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llmtest.Recorded(nil), f.recorded...)
}

// Raw returns the request bodies decoded as generic JSON objects.
func (f *fakeOllama) Raw() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.raw...)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": msg})
	_, _ = w.Write(b)
}

func (f *fakeOllama) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
		// Gin's answer for an unknown route.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "404 page not found")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req api.ChatRequest
	var raw map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rec, err := record(r.URL.Path, body, &req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}

	f.mu.Lock()
	f.recorded = append(f.recorded, rec)
	f.raw = append(f.raw, raw)
	var s llmtest.Script
	ok := f.next < len(f.scripts)
	if ok {
		s = f.scripts[f.next]
		f.next++
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusInternalServerError, "fake ollama: no script left for this request")
		return
	}
	if s.OnReceive != nil && !s.HangStream {
		s.OnReceive()
	}

	switch {
	case s.Hang:
		f.wait(r)
		return
	case s.ModelMissing:
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	case s.Status != 0:
		if s.RetryAfter != "" {
			w.Header().Set("Retry-After", s.RetryAfter)
		}
		writeError(w, s.Status, s.ErrorMessage)
		return
	}

	stream := req.Stream == nil || *req.Stream // Ollama streams by default
	objects, err := replyObjects(req.Model, s, stream)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		b, _ := json.Marshal(objects[0])
		if s.HangStream {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(b[:len(b)/2])
			f.hang(w, r, s)
			return
		}
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i, obj := range objects {
		if s.HangStream && i == len(objects)/2 {
			f.hang(w, r, s)
			return
		}
		b, _ := json.Marshal(obj)
		_, _ = w.Write(append(b, '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func (f *fakeOllama) hang(w http.ResponseWriter, r *http.Request, s llmtest.Script) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	if s.OnReceive != nil {
		s.OnReceive()
	}
	f.wait(r)
}

func (f *fakeOllama) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
}

var created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// replyObjects builds the objects of a reply: one aggregated object when not
// streaming; otherwise thinking chunks, text chunks, one tool-call object
// and the final done object, each with done=false except the last.
func replyObjects(model string, s llmtest.Script, stream bool) ([]api.ChatResponse, error) {
	var calls []api.ToolCall
	for i, tc := range s.ToolCalls {
		args := api.NewToolCallFunctionArguments()
		if err := json.Unmarshal(tc.Arguments, &args); err != nil {
			return nil, fmt.Errorf("fake ollama: bad scripted arguments %s: %w", tc.Arguments, err)
		}
		calls = append(calls, api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
	}
	reason := s.DoneReason
	if reason == "" {
		reason = "stop"
	}
	final := api.ChatResponse{
		Model:      model,
		CreatedAt:  created,
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: reason,
		Metrics: api.Metrics{
			TotalDuration:      1500 * time.Millisecond,
			LoadDuration:       200 * time.Millisecond,
			PromptEvalCount:    s.PromptTokens,
			PromptEvalDuration: 300 * time.Millisecond,
			EvalCount:          s.OutputTokens,
			EvalDuration:       time.Second,
		},
	}
	if !stream {
		final.Message.Content = s.Text
		final.Message.Thinking = s.Thinking
		final.Message.ToolCalls = calls
		return []api.ChatResponse{final}, nil
	}
	chunk := func(m api.Message) api.ChatResponse {
		m.Role = "assistant"
		return api.ChatResponse{Model: model, CreatedAt: created, Message: m}
	}
	var out []api.ChatResponse
	if s.Thinking != "" {
		for _, part := range llmtest.SplitChunks(s.Thinking, s.Chunks) {
			out = append(out, chunk(api.Message{Thinking: part}))
		}
	}
	if s.Text != "" {
		for _, part := range llmtest.SplitChunks(s.Text, s.Chunks) {
			out = append(out, chunk(api.Message{Content: part}))
		}
	}
	if len(calls) > 0 {
		out = append(out, chunk(api.Message{ToolCalls: calls}))
	}
	return append(out, final), nil
}

// record maps a decoded /api/chat request back to llm terms.
func record(path string, body []byte, req *api.ChatRequest) (llmtest.Recorded, error) {
	rec := llmtest.Recorded{
		Path:   path,
		Model:  req.Model,
		Stream: req.Stream == nil || *req.Stream,
		Raw:    append(json.RawMessage(nil), body...),
	}
	if len(req.Format) > 0 && string(req.Format) != "null" {
		rec.Format = append(json.RawMessage(nil), req.Format...)
	}
	for _, m := range req.Messages {
		lm := llm.Message{Role: llm.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.ToolName}
		for _, tc := range m.ToolCalls {
			args, err := json.Marshal(tc.Function.Arguments)
			if err != nil {
				return rec, err
			}
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		rec.Messages = append(rec.Messages, lm)
	}
	for _, tool := range req.Tools {
		params, err := json.Marshal(tool.Function.Parameters)
		if err != nil {
			return rec, err
		}
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: tool.Function.Name, Description: tool.Function.Description, Parameters: params})
	}
	if v, ok := req.Options["temperature"].(float64); ok {
		rec.Temperature = &v
	}
	if v, ok := req.Options["seed"].(float64); ok {
		n := int(v)
		rec.Seed = &n
	}
	if v, ok := req.Options["num_predict"].(float64); ok {
		rec.MaxTokens = int(v)
	}
	return rec, nil
}

// closedURL returns the URL of a local port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// harness connects the conformance suite to the adapter and the fake server.
var harness = llmtest.Harness{
	Name: "ollama",
	New: func(t *testing.T, stream bool, scripts ...llmtest.Script) (llm.Model, func() []llmtest.Recorded) {
		f := startOllama(t, scripts...)
		m, err := ollama.New(ollama.Config{URL: f.srv.URL, Model: "qwen3.5:9b", Stream: stream})
		require.NoError(t, err)
		return m, f.Recorded
	},
	Unreachable: func(t *testing.T) llm.Model {
		m, err := ollama.New(ollama.Config{URL: closedURL(t), Model: "qwen3.5:9b"})
		require.NoError(t, err)
		return m
	},
}

func TestConformance(t *testing.T) {
	llmtest.Run(t, harness)
}
