package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/existence-loop/sdk/llm"
)

// openaiError answers in OpenAI's error shape.
func openaiError(w http.ResponseWriter, status int, msg, typ, code string) {
	e := map[string]any{"message": msg, "type": typ}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// oaiMessage is a chat message on the OpenAI wire.
type oaiMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaiToolCall   `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type oaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// content reads a message's content: a string, or a list of text parts.
func (m oaiMessage) content() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

type oaiChatRequest struct {
	Model    string       `json:"model"`
	Messages []oaiMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	MaxTokens           int  `json:"max_tokens"`
	MaxCompletionTokens int  `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	var req oaiChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		openaiError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "")
		return
	}
	m, ok := s.models[req.Model]
	if !ok || m.Embedding {
		openaiError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	release, err := s.acquire(r.Context())
	if errors.Is(err, errBusy) {
		s.retryAfter(w)
		openaiError(w, http.StatusServiceUnavailable, BusyMessage, "server_error", "")
		return
	} else if err != nil {
		return
	}
	defer release()

	c := &Call{API: "openai", Model: req.Model, Window: s.window(m, 0), MaxTokens: max(req.MaxTokens, req.MaxCompletionTokens)}
	if rf := req.ResponseFormat; rf != nil {
		switch {
		case rf.JSONSchema != nil:
			c.Format = rf.JSONSchema.Schema
		case rf.Type == "json_object":
			c.Format = json.RawMessage(`"json"`)
		}
	}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	for _, msg := range req.Messages {
		lm := llm.Message{Role: llm.Role(msg.Role), Content: msg.content(), ToolCallID: msg.ToolCallID, Name: msg.Name}
		for _, tc := range msg.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
		}
		c.Messages = append(c.Messages, lm)
	}
	// Ollama's /v1 cuts (it sends its runner no "truncate": false); the
	// other servers refuse.
	toks, fits, err := prepare(c, s.cfg.OpenAIFlavor == "ollama" && !s.cfg.RefuseOverflow || s.cfg.IgnoreTruncate, nil)
	if err != nil {
		openaiError(w, http.StatusInternalServerError, err.Error(), "server_error", "")
		return
	}
	if !fits {
		s.refused(c)
		s.openaiTooLong(w, c)
		return
	}
	entry := s.useCache(c, toks)
	defer s.releaseCache(entry)
	ans, err := s.reply(r.Context(), c)
	if err != nil {
		return
	}
	if ans.Status != 0 {
		openaiError(w, ans.Status, ans.Error, "server_error", "")
		return
	}
	text, out, long := limitOutput(ans.Text, c.MaxTokens)
	out += toolCallTokens(ans.ToolCalls)
	s.extendCache(entry, toks, text)
	s.record(c, out)

	finish := "stop"
	switch {
	case long:
		finish = "length"
	case len(ans.ToolCalls) > 0:
		finish = "tool_calls"
	}
	var calls []oaiToolCall
	for i, tc := range ans.ToolCalls {
		oc := oaiToolCall{ID: tc.ID, Type: "function"}
		if oc.ID == "" {
			oc.ID = fmt.Sprintf("call_%d", i)
		}
		oc.Function.Name, oc.Function.Arguments = tc.Name, string(tc.Arguments)
		calls = append(calls, oc)
	}
	usage := s.usage(c, out)
	created := time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-standin", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	delta := map[string]any{"role": "assistant", "content": text}
	if len(calls) > 0 {
		for i := range calls {
			calls[i].Index = &i
		}
		delta["tool_calls"] = calls
	}
	event(chunk(delta, nil))
	event(chunk(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		event(map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": usage})
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

// usage is the reply's usage object. Ollama's /v1 reports its native
// count (prompt_eval_count: without the cached prefix when the server
// caches prompts); llama.cpp's server, vLLM and OpenAI report the whole
// prompt and, when some of it came from the KV cache,
// prompt_tokens_details.cached_tokens.
func (s *Server) usage(c *Call, out int) map[string]any {
	if s.cfg.OpenAIFlavor == "ollama" {
		return map[string]any{"prompt_tokens": c.Evaluated, "completion_tokens": out, "total_tokens": c.Evaluated + out}
	}
	u := map[string]any{"prompt_tokens": c.Kept, "completion_tokens": out, "total_tokens": c.Kept + out}
	if s.cfg.CacheSlots > 0 {
		u["prompt_tokens_details"] = map[string]int{"cached_tokens": c.Cached}
	}
	return u
}

// openaiTooLong answers a prompt over the window in the configured
// server's words.
func (s *Server) openaiTooLong(w http.ResponseWriter, c *Call) {
	switch s.cfg.OpenAIFlavor {
	case "vllm":
		writeJSON(w, http.StatusBadRequest, map[string]any{"object": "error", "type": "BadRequestError", "param": nil, "code": 400,
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				c.Window, c.Sent+c.MaxTokens, c.Sent, c.MaxTokens)})
	case "llamacpp":
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error",
			"message":         fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", c.Sent, c.Window),
			"n_prompt_tokens": c.Sent, "n_ctx": c.Window}})
	case "ollama":
		openaiError(w, http.StatusBadRequest, s.refusal(c), "invalid_request_error", "")
	default:
		openaiError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", c.Window, c.Sent),
			"invalid_request_error", "context_length_exceeded")
	}
}

func (s *Server) openaiEmbed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string `json:"model"`
		Input      any    `json:"input"`
		Dimensions int    `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		openaiError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "")
		return
	}
	m, ok := s.models[req.Model]
	if !ok || !m.Embedding {
		openaiError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist or is not an embedding model.", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	inputs, err := embedInputs(req.Input)
	if err != nil {
		openaiError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "")
		return
	}
	vecs, tokens, status, msg := s.embed(r, m, inputs, true, req.Dimensions)
	if status != http.StatusOK {
		openaiError(w, status, msg, "server_error", "")
		return
	}
	data := make([]any, len(vecs))
	for i, v := range vecs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func (s *Server) openaiModels(w http.ResponseWriter, _ *http.Request) {
	data := []any{}
	for _, name := range s.order {
		data = append(data, map[string]any{"id": name, "object": "model", "created": 0, "owned_by": "library"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
