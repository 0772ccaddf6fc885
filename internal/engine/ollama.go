package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/existence-loop/sdk/internal/engine/gguf"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// ChatMLTemplate is the Ollama (Go text/template) chat template the model
// is created with under Ollama: [llmtest.OllamaTemplate], which the
// Ollama stand-in renders chat requests with too.
const ChatMLTemplate = llmtest.OllamaTemplate

// OllamaBinary returns the `ollama` executable the harness runs: the one
// `.ci/engine` built under DIR/ollama/ollama, else the one on PATH.
func OllamaBinary() (string, error) {
	p := filepath.Join(DefaultDir(), "ollama", "ollama")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return exec.LookPath("ollama")
}

// startOllama runs a real `ollama serve` (EXISTENCE_ENGINE=ollama) on a
// free loopback port with OLLAMA_DEBUG=1 (its log then holds the runner's
// "loading cache slot … used=N" line per request) and its models in a
// temporary directory, creates the model from the model file with
// [ChatMLTemplate], and puts a small proxy in front of it ([Server].URL;
// [Server].Upstream is Ollama itself). The proxy adds what Ollama lacks
// for the tests: POST /tokenize (llama-server's route, counting with the
// model file's own tokenizer), and [Config].ToolChoice and JSONLimit,
// applied as a `format` JSON Schema on /api/chat requests: Ollama turns it
// into a grammar, as llama-server does tool_choice "required".
func startOllama(t testing.TB, cfg Config, f Files) (*Server, error) {
	bin, err := OllamaBinary()
	if err != nil {
		t.Skip("engine: EXISTENCE_ENGINE=ollama needs the Ollama `.ci/engine` builds (DIR/ollama/ollama) or `ollama` on PATH; " + How)
	}
	if _, err := os.Stat(f.Model); err != nil {
		t.Skipf("engine: %v: %s", err, How)
	}
	tok, err := modelTokenizer(f.Model)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	env := append(os.Environ(),
		"OLLAMA_HOST="+host,
		"OLLAMA_MODELS="+t.TempDir(),
		"OLLAMA_NUM_PARALLEL="+strconv.Itoa(cfg.Slots),
		"OLLAMA_MAX_QUEUE="+strconv.Itoa(cfg.Queue),
		"OLLAMA_CONTEXT_LENGTH="+strconv.Itoa(cfg.Window),
		"OLLAMA_DEBUG=1",
		"OLLAMA_NOPRUNE=1",
		"OLLAMA_NO_CLOUD=1",
	)
	s := &Server{Upstream: "http://" + host, Model: ModelName, Engine: Ollama, Config: cfg}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = env
	s.cmd.Stderr = &lockedWriter{s: s}
	s.cmd.Stdout = &lockedWriter{s: s}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine: starting ollama serve: %w", err)
	}
	t.Cleanup(func() { s.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := waitHTTP(ctx, s.Upstream+"/api/version"); err != nil {
		return nil, fmt.Errorf("engine: ollama serve did not answer: %w\n%s", err, s.Log())
	}
	dir := t.TempDir()
	modelfile := filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(modelfile, []byte(Modelfile(f.Model, cfg.Threads)), 0o600); err != nil {
		return nil, err
	}
	create := exec.CommandContext(ctx, bin, "create", ModelName, "-f", modelfile)
	create.Env = env
	if out, err := create.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("engine: ollama create: %w\n%s", err, out)
	}
	up, err := url.Parse(s.Upstream)
	if err != nil {
		return nil, err
	}
	px := &ollamaProxy{rp: httputil.NewSingleHostReverseProxy(up), tok: tok, cfg: cfg}
	px.rp.ModifyResponse = forcedCallReply
	hs := httptest.NewServer(px)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s, nil
}

// Modelfile returns the Modelfile `ollama create` gets for the model file
// at model: [ChatMLTemplate], <|im_end|> as the stop sequence and threads
// CPU threads.
func Modelfile(model string, threads int) string {
	return fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"%s\"\"\"\nPARAMETER stop <|im_end|>\nPARAMETER num_thread %d\n", model, ChatMLTemplate, max(threads, 1))
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*gguf.Tokenizer{}
)

// modelTokenizer reads the tokenizer of the GGUF file at path (once per
// path and process).
func modelTokenizer(path string) (*gguf.Tokenizer, error) {
	tokMu.Lock()
	defer tokMu.Unlock()
	if tk, ok := tokCache[path]; ok {
		return tk, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	defer fh.Close()
	h, err := gguf.Read(fh)
	if err != nil {
		return nil, fmt.Errorf("engine: reading %s: %w", path, err)
	}
	tk, err := gguf.TokenizerFrom(h)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", path, err)
	}
	tokCache[path] = tk
	return tk, nil
}

// ollamaProxy stands in front of a real Ollama; see [startOllama].
type ollamaProxy struct {
	rp  *httputil.ReverseProxy
	tok *gguf.Tokenizer
	cfg Config
}

// maxProxyBody caps a request body the proxy reads (64 MiB).
const maxProxyBody = 64 << 20

func (p *ollamaProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/tokenize":
		var in struct {
			Content string `json:"content"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, maxProxyBody)).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"tokens": p.tok.Encode(in.Content)})
		return
	case r.Method == http.MethodPost && (r.URL.Path == "/api/chat" || r.URL.Path == "/v1/chat/completions"):
		body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/api/chat" {
			if p.cfg.ToolChoice == "required" && offersTools(body) {
				r = r.WithContext(context.WithValue(r.Context(), forcedCallKey{}, true))
			}
			body, err = ConstrainChat(body, p.cfg.ToolChoice, p.cfg.JSONLimit)
		} else {
			body, err = constrainOpenAI(body, p.cfg.JSONLimit)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	p.rp.ServeHTTP(w, r)
}

// forcedCallKey marks a proxied /api/chat request whose reply
// [ToolCallReply] rewrites.
type forcedCallKey struct{}

// offersTools reports whether an /api/chat body offers tools and sets no
// format of its own: the requests [ConstrainChat] forces into a call.
func offersTools(body []byte) bool {
	var req struct {
		Tools  []json.RawMessage `json:"tools"`
		Format json.RawMessage   `json:"format"`
	}
	return json.Unmarshal(body, &req) == nil && len(req.Tools) > 0 && isNull(req.Format)
}

// forcedCallReply applies [ToolCallResponse] to the reply of a request
// the proxy forced into a tool call.
func forcedCallReply(resp *http.Response) error {
	if forced, _ := resp.Request.Context().Value(forcedCallKey{}).(bool); !forced {
		return nil
	}
	return ToolCallResponse(resp)
}

// ToolCallResponse applies [ToolCallReply] to resp in place, for a proxy's
// ModifyResponse: a successful, uncompressed JSON reply (a streamed or
// compressed one stays as it is), its body read up to 64 MiB. It returns
// the error of reading the body or of ToolCallReply.
func ToolCallResponse(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProxyBody))
	resp.Body.Close()
	if err != nil {
		return err
	}
	if body, err = ToolCallReply(body); err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// ConstrainChat rewrites an Ollama /api/chat request body for a model
// with random weights: with toolChoice "required" and tools offered (and
// no format), the format becomes the JSON Schema of a call of one of the
// tools ({"name": …, "arguments": …}); with limit > 0 every string the
// format allows gets maxLength limit and every array maxItems 1. Other
// bodies come back unchanged. It returns an error for a body that is not
// a JSON object.
func ConstrainChat(body []byte, toolChoice string, limit int) ([]byte, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("engine: /api/chat body: %w", err)
	}
	changed := false
	if toolChoice == "required" && len(req["tools"]) > 0 && isNull(req["format"]) {
		var tools []struct {
			Function struct {
				Name       string `json:"name"`
				Parameters any    `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(req["tools"], &tools); err != nil {
			return nil, fmt.Errorf("engine: /api/chat tools: %w", err)
		}
		var alts []any
		for _, tl := range tools {
			params := tl.Function.Parameters
			if params == nil {
				params = map[string]any{"type": "object"}
			}
			alts = append(alts, map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":      map[string]any{"type": "string", "enum": []string{tl.Function.Name}},
					"arguments": params,
				},
				"required": []string{"name", "arguments"},
			})
		}
		if len(alts) > 0 {
			var schema any = alts[0]
			if len(alts) > 1 {
				schema = map[string]any{"anyOf": alts}
			}
			b, err := json.Marshal(schema)
			if err != nil {
				return nil, err
			}
			req["format"] = b
			changed = true
		}
	}
	if limit > 0 && !isNull(req["format"]) && !bytes.Equal(bytes.TrimSpace(req["format"]), []byte(`"json"`)) {
		var schema any
		if err := json.Unmarshal(req["format"], &schema); err != nil {
			return nil, fmt.Errorf("engine: /api/chat format: %w", err)
		}
		b, err := json.Marshal(limitSchema(schema, limit))
		if err != nil {
			return nil, err
		}
		req["format"] = b
		changed = true
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(req)
}

// ToolCallReply rewrites a non-streamed Ollama /api/chat reply body to a
// request [ConstrainChat] forced into a tool call: when the message has no
// tool_calls and its content is the JSON object {"name": "…", "arguments":
// {…}} the format allowed, the content becomes that tool call (id
// "call_0"), as llama-server answers tool_choice "required". Ollama's own
// parser finds a call only where the model writes it in its template's
// syntax, and the format's grammar does not fix the order of the two
// keys. Other bodies come back unchanged; it returns an error for a body
// that is not a JSON object. The proxy applies it to non-streamed,
// uncompressed replies only: a streamed reply's forced call stays content.
func ToolCallReply(body []byte) ([]byte, error) {
	var reply map[string]json.RawMessage
	if err := json.Unmarshal(body, &reply); err != nil {
		return nil, fmt.Errorf("engine: /api/chat reply: %w", err)
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(reply["message"], &msg) != nil || !isNull(msg["tool_calls"]) {
		return body, nil
	}
	var content string
	if json.Unmarshal(msg["content"], &content) != nil {
		return body, nil
	}
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(content), &call) != nil || call.Name == "" {
		return body, nil
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || args[0] != '{' {
		return body, nil
	}
	calls, err := json.Marshal([]map[string]any{{
		"id":       "call_0",
		"function": map[string]any{"index": 0, "name": call.Name, "arguments": json.RawMessage(args)},
	}})
	if err != nil {
		return nil, err
	}
	msg["tool_calls"] = calls
	msg["content"] = json.RawMessage(`""`)
	if reply["message"], err = json.Marshal(msg); err != nil {
		return nil, err
	}
	return json.Marshal(reply)
}

// constrainOpenAI bounds the strings and arrays of an OpenAI-compatible
// request's response_format JSON Schema, as [ConstrainChat] does format.
func constrainOpenAI(body []byte, limit int) ([]byte, error) {
	if limit <= 0 {
		return body, nil
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("engine: /v1/chat/completions body: %w", err)
	}
	rf, _ := req["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if js == nil || js["schema"] == nil {
		return body, nil
	}
	js["schema"] = limitSchema(js["schema"], limit)
	return json.Marshal(req)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// limitSchema bounds the strings and arrays of a JSON Schema value.
func limitSchema(v any, limit int) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = limitSchema(val, limit)
		}
		typ := x["type"]
		isType := func(want string) bool {
			switch t := typ.(type) {
			case string:
				return t == want
			case []any:
				for _, e := range t {
					if e == want {
						return true
					}
				}
			}
			return false
		}
		if isType("string") && x["enum"] == nil && x["const"] == nil {
			if n, ok := x["maxLength"].(float64); !ok || int(n) > limit {
				x["maxLength"] = limit
			}
			if n, ok := x["minLength"].(float64); ok && int(n) > limit {
				x["minLength"] = limit
			}
		}
		if isType("array") {
			x["maxItems"] = 1
			if n, ok := x["minItems"].(float64); ok && n > 1 {
				x["minItems"] = 1
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = limitSchema(x[i], limit)
		}
		return x
	}
	return v
}

// CacheLine is one of Ollama's "loading cache slot" debug lines
// (OLLAMA_DEBUG=1): the runner's slot, the prompt's length in tokens and
// how many of them it took from the slot's KV cache.
type CacheLine struct {
	Slot, Prompt, Used int
}

// CacheLines returns the "loading cache slot" lines of an Ollama log, in
// order. Lines it cannot read are an error naming them.
func CacheLines(log string) ([]CacheLine, error) {
	var out []CacheLine
	var errs []error
	for line := range strings.Lines(log) {
		if !strings.Contains(line, `msg="loading cache slot"`) {
			continue
		}
		var c CacheLine
		okSlot, okPrompt, okUsed := false, false, false
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				continue
			}
			switch k {
			case "id":
				c.Slot, okSlot = n, true
			case "prompt":
				c.Prompt, okPrompt = n, true
			case "used":
				c.Used, okUsed = n, true
			}
		}
		if !okSlot || !okPrompt || !okUsed {
			errs = append(errs, fmt.Errorf("engine: unreadable cache line %q", strings.TrimSpace(line)))
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}
