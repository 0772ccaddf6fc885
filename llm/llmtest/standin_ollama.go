package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/template"

	"github.com/existence-loop/sdk/llm"
)

// ollamaRender renders messages as Ollama does: through its template
// package with the server's template ([ServerConfig].Template), which
// gathers every system message into .System (rendered at the top by
// library templates such as [OllamaTemplate]) and merges consecutive
// messages of the same role.
func (s *Server) ollamaRender(tools api.Tools) func([]llm.Message) ([]string, error) {
	return func(msgs []llm.Message) ([]string, error) {
		if s.tmplErr != nil {
			return nil, s.tmplErr
		}
		vals := template.Values{Tools: tools}
		for _, m := range msgs {
			am := api.Message{Role: string(m.Role), Content: m.Content, ToolName: m.Name, ToolCallID: m.ToolCallID}
			for i, tc := range m.ToolCalls {
				args := api.NewToolCallFunctionArguments()
				if len(tc.Arguments) > 0 {
					if err := json.Unmarshal(tc.Arguments, &args); err != nil {
						return nil, fmt.Errorf("tool call %q: arguments: %w", tc.Name, err)
					}
				}
				am.ToolCalls = append(am.ToolCalls, api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
			}
			vals.Messages = append(vals.Messages, am)
		}
		var b bytes.Buffer
		if err := s.tmpl.Execute(&b, vals); err != nil {
			return nil, fmt.Errorf("rendering the chat template: %w", err)
		}
		return Tokenize(b.String()), nil
	}
}

// ollamaError answers as Ollama does: {"error": msg}.
func ollamaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// lookup finds a model, answering Ollama's 404 when it is missing.
func (s *Server) lookup(w http.ResponseWriter, name string) (ModelSpec, bool) {
	m, ok := s.models[name]
	if !ok {
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", name))
	}
	return m, ok
}

// intOption reads an integer option (num_ctx, num_predict) from Ollama's
// options object; 0 when absent or not a number.
func intOption(opts map[string]any, key string) int {
	if f, ok := opts[key].(float64); ok && f > 0 && f < math.MaxInt32 {
		return int(f)
	}
	return 0
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ollamaError(w, http.StatusBadRequest, err.Error())
		return
	}
	m, ok := s.lookup(w, req.Model)
	if !ok {
		return
	}
	if m.Embedding {
		ollamaError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support chat", req.Model))
		return
	}
	release, err := s.acquire(r.Context())
	if errors.Is(err, errBusy) {
		s.retryAfter(w)
		ollamaError(w, http.StatusServiceUnavailable, BusyMessage)
		return
	} else if err != nil {
		return // the client went away
	}
	defer release()

	numCtx := intOption(req.Options, "num_ctx")
	c := &Call{API: "ollama", Model: req.Model, NumCtx: numCtx, Window: s.window(m, numCtx),
		Format: json.RawMessage(req.Format), MaxTokens: intOption(req.Options, "num_predict")}
	for _, t := range req.Tools {
		params, _ := json.Marshal(t.Function.Parameters)
		c.Tools = append(c.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
	}
	for _, msg := range req.Messages {
		lm := llm.Message{Role: llm.Role(msg.Role), Content: msg.Content, ToolCallID: msg.ToolCallID, Name: msg.ToolName}
		for _, tc := range msg.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		c.Messages = append(c.Messages, lm)
	}
	toks, fits, err := prepare(c, s.overflow(req.Truncate), s.ollamaRender(req.Tools))
	if err != nil {
		ollamaError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !fits {
		s.refused(c)
		ollamaError(w, http.StatusBadRequest, s.refusal(c))
		return
	}
	entry := s.useCache(c, toks)
	defer s.releaseCache(entry)
	ans, err := s.reply(r.Context(), c)
	if err != nil {
		return
	}
	if ans.Status != 0 {
		ollamaError(w, ans.Status, ans.Error)
		return
	}
	text, out, long := limitOutput(ans.Text, c.MaxTokens)
	out += toolCallTokens(ans.ToolCalls)
	s.extendCache(entry, toks, text)
	s.record(c, out)

	msg := api.Message{Role: "assistant", Content: text}
	for i, tc := range ans.ToolCalls {
		args := api.NewToolCallFunctionArguments()
		if len(tc.Arguments) > 0 {
			_ = json.Unmarshal(tc.Arguments, &args)
		}
		msg.ToolCalls = append(msg.ToolCalls, api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
	}
	done := api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant"},
		Done: true, DoneReason: "stop", Metrics: api.Metrics{PromptEvalCount: c.Evaluated, EvalCount: out}}
	if long {
		done.DoneReason = "length"
	}
	if req.Stream != nil && !*req.Stream {
		done.Message = msg
		writeJSON(w, http.StatusOK, done)
		return
	}
	// Streaming (Ollama's default): the reply, then the final object.
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	_ = enc.Encode(api.ChatResponse{Model: req.Model, CreatedAt: done.CreatedAt, Message: msg})
	_ = enc.Encode(done)
}

// showResponse is /api/show's answer: the fields clients read.
type showResponse struct {
	Details      map[string]any `json:"details"`
	ModelInfo    map[string]any `json:"model_info"`
	Capabilities []string       `json:"capabilities"`
	ModifiedAt   time.Time      `json:"modified_at"`
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ollamaError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := req.Model
	if name == "" {
		//lint:ignore SA1019 older clients still send the model as "name"; a real server accepts it, and so does the stand-in
		name = req.Name
	}
	m, ok := s.lookup(w, name)
	if !ok {
		return
	}
	info := map[string]any{
		"general.architecture":         m.Arch,
		m.Arch + ".context_length":     m.ContextLength,
		"general.parameter_count":      9_000_000_000,
		"tokenizer.ggml.model":         "standin",
		"general.file_type":            15,
		"general.quantization_version": 2,
	}
	caps := []string{"completion", "tools"}
	if m.Embedding {
		info[m.Arch+".embedding_length"] = m.EmbeddingDim
		caps = []string{"embedding"}
	}
	writeJSON(w, http.StatusOK, showResponse{
		Details:      map[string]any{"format": "gguf", "family": m.Arch, "families": []string{m.Arch}},
		ModelInfo:    info,
		Capabilities: caps,
	})
}

// embedInputs reads an embedding request's input: a string or a list of
// strings.
func embedInputs(raw any) ([]string, error) {
	switch v := raw.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New("invalid input type")
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, errors.New("invalid input type")
}

// embed embeds inputs with model m, cutting each to the model's length
// unless truncate is false. It holds a slot, as Ollama's scheduler does
// for every model request.
func (s *Server) embed(r *http.Request, m ModelSpec, inputs []string, truncate bool, dims int) (vecs [][]float32, tokens int, status int, msg string) {
	release, err := s.acquire(r.Context())
	if errors.Is(err, errBusy) {
		return nil, 0, http.StatusServiceUnavailable, BusyMessage
	} else if err != nil {
		return nil, 0, 499, "request canceled"
	}
	defer release()
	for _, text := range inputs {
		toks := Tokenize(text)
		if len(toks) > m.ContextLength {
			if !truncate {
				return nil, 0, http.StatusBadRequest, "input exceeds maximum context length and cannot be truncated further"
			}
			toks = toks[:m.ContextLength]
		}
		tokens += len(toks)
		v := Embedding(concat(toks), m.EmbeddingDim)
		if dims > 0 && dims < len(v) {
			v = normalise(v[:dims])
		}
		vecs = append(vecs, v)
	}
	d := s.cfg.Latency
	if s.cfg.LatencyFunc != nil {
		d = s.cfg.LatencyFunc(&Call{API: "embed", Model: m.Name, Sent: tokens})
	}
	if d > 0 {
		if err := s.cfg.Sleep(r.Context(), d); err != nil {
			return nil, 0, 499, "request canceled"
		}
	}
	s.mu.Lock()
	s.stats.EmbedTokens += tokens
	s.mu.Unlock()
	return vecs, tokens, http.StatusOK, ""
}

// normalise scales v to unit length, as Ollama does after cutting
// dimensions.
func normalise(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	k := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

func concat(toks []string) string {
	n := 0
	for _, t := range toks {
		n += len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range toks {
		b = append(b, t...)
	}
	return string(b)
}

func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request) {
	var req api.EmbedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ollamaError(w, http.StatusBadRequest, err.Error())
		return
	}
	m, ok := s.lookup(w, req.Model)
	if !ok {
		return
	}
	if !m.Embedding {
		ollamaError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support embeddings", req.Model))
		return
	}
	inputs, err := embedInputs(req.Input)
	if err != nil {
		ollamaError(w, http.StatusBadRequest, err.Error())
		return
	}
	vecs, tokens, status, msg := s.embed(r, m, inputs, req.Truncate == nil || *req.Truncate, req.Dimensions)
	if status != http.StatusOK {
		ollamaError(w, status, msg)
		return
	}
	writeJSON(w, http.StatusOK, api.EmbedResponse{Model: req.Model, Embeddings: vecs, PromptEvalCount: tokens})
}

func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	var models []map[string]any
	for _, name := range s.order {
		m := s.models[name]
		models = append(models, map[string]any{"name": name, "model": name, "details": map[string]any{"format": "gguf", "family": m.Arch}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) ollamaPs(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	models := []map[string]any{}
	for _, name := range s.order {
		if n, ok := s.loaded[name]; ok {
			models = append(models, map[string]any{"name": name, "model": name, "context_length": n})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}
