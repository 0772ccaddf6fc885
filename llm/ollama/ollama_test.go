package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// newModel starts a fake server with one "ok" script per call and returns a
// model configured by cfg against it.
func newModel(t *testing.T, cfg ollama.Config, scripts ...llmtest.Script) (*ollama.Model, *fakeOllama) {
	t.Helper()
	if len(scripts) == 0 {
		scripts = []llmtest.Script{{Text: "ok"}}
	}
	f := startOllama(t, scripts...)
	cfg.URL = f.srv.URL
	if cfg.Model == "" {
		cfg.Model = "qwen3.5:9b"
	}
	m, err := ollama.New(cfg)
	require.NoError(t, err)
	return m, f
}

// wire sends one request and returns the body the server received, as
// generic JSON.
func wire(t *testing.T, cfg ollama.Config, req *llm.Request) map[string]any {
	t.Helper()
	m, f := newModel(t, cfg)
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	raw := f.Raw()
	require.Len(t, raw, 1)
	return raw[0]
}

func TestThink(t *testing.T) {
	tests := []struct {
		name  string
		think *bool
		want  bool
	}{
		{"default off", nil, false},
		{"explicit off", llm.Ptr(false), false},
		{"on", llm.Ptr(true), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := wire(t, ollama.Config{Think: tc.think}, userReq("x"))
			require.Contains(t, body, "think", "think must always be on the wire")
			assert.Equal(t, tc.want, body["think"])
		})
	}
}

func TestKeepAlive(t *testing.T) {
	tests := []struct {
		name string
		keep *time.Duration
		want any // nil: absent
	}{
		{"unset", nil, nil},
		{"forever, as the original", llm.Ptr(time.Duration(-1)), float64(-1)},
		{"ten minutes", llm.Ptr(10 * time.Minute), "10m0s"},
		{"unload now", llm.Ptr(time.Duration(0)), "0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := wire(t, ollama.Config{KeepAlive: tc.keep}, userReq("x"))
			if tc.want == nil {
				assert.NotContains(t, body, "keep_alive")
				return
			}
			assert.Equal(t, tc.want, body["keep_alive"])
		})
	}
}

func TestOptions(t *testing.T) {
	cfgOpts := map[string]any{"top_k": 20, "temperature": 0.9, "num_ctx": 1}
	cfg := ollama.Config{NumCtx: 8192, Options: cfgOpts}
	req := userReq("x")
	req.Temperature = llm.Ptr(0.25)
	req.Seed = llm.Ptr(42)
	req.MaxTokens = 512
	body := wire(t, cfg, req)
	assert.Equal(t, map[string]any{
		"top_k":       float64(20),
		"temperature": 0.25,
		"seed":        float64(42),
		"num_predict": float64(512),
		"num_ctx":     float64(4096), // the smallest step that holds the prompt and the reserve; NumCtx is the ceiling
	}, body["options"])
	assert.Equal(t, false, body["truncate"], "a prompt over the window must be refused, never cut silently")
	assert.Equal(t, false, body["shift"], "a reply that reaches the end of the window must end \"length\", never shift the context")
	assert.Equal(t, map[string]any{"top_k": 20, "temperature": 0.9, "num_ctx": 1}, cfgOpts, "the caller's map is not modified")

	t.Run("config options without request options", func(t *testing.T) {
		body := wire(t, ollama.Config{Options: map[string]any{"temperature": 0.9}}, userReq("x"))
		assert.Equal(t, map[string]any{"temperature": 0.9, "num_ctx": float64(4096), "num_predict": float64(1024)}, body["options"])
	})
	t.Run("none", func(t *testing.T) {
		body := wire(t, ollama.Config{}, userReq("x"))
		assert.Equal(t, map[string]any{"num_ctx": float64(4096), "num_predict": float64(1024)}, body["options"],
			"a window is always asked for (the server's default may be 2048), and a reply limit (the reserve kept for it)")
	})
}

func TestOptionsMapCopiedAtNew(t *testing.T) {
	opts := map[string]any{"top_k": 20}
	m, f := newModel(t, ollama.Config{Options: opts})
	opts["top_k"] = 99
	_, err := m.Generate(context.Background(), userReq("x"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"top_k": float64(20), "num_ctx": float64(4096), "num_predict": float64(1024)}, f.Raw()[0]["options"])
}

func TestFormat(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"}},"required":["action"]}`)
	tests := []struct {
		name     string
		jsonMode bool
		format   json.RawMessage
		want     any // nil: absent
	}{
		{"schema unchanged", false, schema, map[string]any{"type": "object", "properties": map[string]any{"action": map[string]any{"type": "string"}}, "required": []any{"action"}}},
		{"json mode", true, schema, "json"},
		{"json mode, free text", true, nil, nil},
		{"free text", false, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := userReq("x")
			req.Format = tc.format
			body := wire(t, ollama.Config{JSONMode: tc.jsonMode}, req)
			if tc.want == nil {
				assert.NotContains(t, body, "format")
				return
			}
			assert.Equal(t, tc.want, body["format"])
		})
	}
}

func TestStreamFlagOnTheWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := wire(t, ollama.Config{Stream: stream}, userReq("x"))
		assert.Equal(t, stream, body["stream"], "stream must be explicit: Ollama streams when it is absent")
	}
}

func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"nil", nil, "nil Request"},
		{"bad format", &llm.Request{Format: json.RawMessage(`{"type":`)}, "Format is not valid JSON"},
		{"bad tool parameters", &llm.Request{Tools: []llm.ToolDef{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, `tool "t"`},
		{"unnamed tool", &llm.Request{Tools: []llm.ToolDef{{Description: "x"}}}, "tool 0 has no name"},
		{"bad tool call arguments", &llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "t", Arguments: json.RawMessage(`"text"`)}}}}}, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, f := newModel(t, ollama.Config{})
			_, err := m.Generate(context.Background(), tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, f.Recorded(), "nothing is sent for an invalid request")
		})
	}
}

func TestToolCallIDs(t *testing.T) {
	calls := []llm.ToolCall{
		{ID: "call_abc", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
		{Name: "read_file", Arguments: json.RawMessage(`{"path":"b"}`)},
	}
	for _, stream := range []bool{false, true} {
		m, _ := newModel(t, ollama.Config{Stream: stream}, llmtest.Script{ToolCalls: calls})
		resp, err := m.Generate(context.Background(), userReq("x"))
		require.NoError(t, err)
		require.Len(t, resp.ToolCalls, 2)
		assert.Equal(t, "call_abc", resp.ToolCalls[0].ID, "the server's ID is kept")
		assert.Equal(t, "call_1", resp.ToolCalls[1].ID, "a missing ID is synthesised from the index")
		assert.Equal(t, llm.DoneToolCalls, resp.DoneReason)
	}
}

func TestToolResultNameFromCallID(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "read"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "contents"}, // OpenAI style: no name
	}}
	m, f := newModel(t, ollama.Config{})
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	msgs := f.Recorded()[0].Messages
	require.Len(t, msgs, 3)
	assert.Equal(t, "read_file", msgs[2].Name, "tool_name filled from the matching call")
	assert.Equal(t, "c1", msgs[2].ToolCallID)
}

func TestToolParametersDefault(t *testing.T) {
	req := userReq("x")
	req.Tools = []llm.ToolDef{{Name: "now", Description: "the time"}}
	m, f := newModel(t, ollama.Config{})
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	tools := f.Recorded()[0].Tools
	require.Len(t, tools, 1)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(tools[0].Parameters))
}

func TestHints(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		url := closedURL(t)
		m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
		require.NoError(t, err)
		_, err = m.Generate(context.Background(), userReq("x"))
		require.ErrorIs(t, err, llm.ErrUnavailable)
		assert.Contains(t, err.Error(), "`ollama serve`")
		assert.Contains(t, err.Error(), url)
		var ue *llm.UnavailableError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, "ollama", ue.Provider)
		assert.Equal(t, url, ue.URL)
	})
	t.Run("model missing", func(t *testing.T) {
		m, _ := newModel(t, ollama.Config{}, llmtest.Script{ModelMissing: true})
		_, err := m.Generate(context.Background(), userReq("x"))
		require.ErrorIs(t, err, llm.ErrModelNotFound)
		assert.Contains(t, err.Error(), "`ollama pull qwen3.5:9b`")
		var mnf *llm.ModelNotFoundError
		require.ErrorAs(t, err, &mnf)
		assert.Equal(t, "qwen3.5:9b", mnf.Model)
		assert.Equal(t, "ollama", mnf.Provider)
	})
}

// serve starts a server with a custom handler and returns a model for it.
func serve(t *testing.T, stream bool, h http.HandlerFunc) *ollama.Model {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	m, err := ollama.New(ollama.Config{URL: srv.URL, Model: "qwen3.5:9b", Stream: stream})
	require.NoError(t, err)
	return m
}

func TestOddReplies(t *testing.T) {
	const okLine = `{"model":"qwen3.5:9b","created_at":"2026-03-01T12:00:00Z","message":{"role":"assistant","content":"par"},"done":false}` + "\n"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, err error)
	}{
		{
			name: "error status with empty body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(http.StatusBadGateway)
			},
			check: func(t *testing.T, err error) {
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 502, se.StatusCode)
				assert.Equal(t, 3*time.Second, se.RetryAfter)
				assert.NotEmpty(t, se.Message)
			},
		},
		{
			name: "error status with an HTML body from a proxy",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "<html>upstream down</html>")
			},
			check: func(t *testing.T, err error) {
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 503, se.StatusCode)
				assert.Contains(t, se.Message, "upstream down")
			},
		},
		{
			name: "bare 404 from a wrong path is not a missing model",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, "404 page not found")
			},
			check: func(t *testing.T, err error) {
				assert.NotErrorIs(t, err, llm.ErrModelNotFound)
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 404, se.StatusCode)
			},
		},
		{
			name: "pull-first wording of a missing model",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"error":"model \"qwen3.5:9b\" not found, try pulling it first"}`)
			},
			check: func(t *testing.T, err error) {
				require.ErrorIs(t, err, llm.ErrModelNotFound)
			},
		},
		{
			name: "401",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"unauthorized","signin_url":"https://ollama.com/connect"}`)
			},
			check: func(t *testing.T, err error) {
				var se llm.StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, 401, se.StatusCode)
			},
		},
		{
			name: "error object in the middle of a stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, okLine+`{"error":"llama runner process has terminated"}`+"\n")
			},
			check: func(t *testing.T, err error) {
				assert.Contains(t, err.Error(), "llama runner process has terminated")
				assert.NotErrorIs(t, err, llm.ErrEmpty)
			},
		},
		{
			name: "stream ends without a done object",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, okLine)
			},
			check: func(t *testing.T, err error) {
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
				assert.NotErrorIs(t, err, llm.ErrEmpty)
			},
		},
		{
			name: "garbage line",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "not json at all\n")
			},
			check: func(t *testing.T, err error) {
				assert.Contains(t, err.Error(), "not json at all")
			},
		},
		{
			name: "data after done",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"message":{"role":"assistant","content":"a"},"done":true}`+"\n"+okLine)
			},
			check: func(t *testing.T, err error) {
				assert.Contains(t, err.Error(), "after the final")
			},
		},
		{
			name: "connection cut in the middle of the body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				defer conn.Close()
				_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
				_, _ = buf.WriteString(chunk(okLine))
				_ = buf.Flush()
			},
			check: func(t *testing.T, err error) {
				require.ErrorIs(t, err, llm.ErrUnavailable, "a reset is retryable like a refused connection")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				m := serve(t, stream, tc.handler)
				resp, err := m.Generate(context.Background(), userReq("x"))
				require.Error(t, err, "response: %+v", resp)
				assert.Nil(t, resp)
				tc.check(t, err)
			}
		})
	}
}

// chunk encodes s as one HTTP/1.1 chunk.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

func TestResponseFields(t *testing.T) {
	for _, stream := range []bool{false, true} {
		m, _ := newModel(t, ollama.Config{Stream: stream}, llmtest.Script{
			Text: "answer", Thinking: "reasoning", Chunks: 3, PromptTokens: 812, OutputTokens: 64,
		})
		resp, err := m.Generate(context.Background(), userReq("x"))
		require.NoError(t, err)
		assert.Equal(t, "qwen3.5:9b", resp.Model)
		assert.Equal(t, "answer", resp.Text)
		assert.Equal(t, "reasoning", resp.Thinking)
		assert.Equal(t, 812, resp.PromptTokens)
		assert.Equal(t, 64, resp.OutputTokens)
		assert.Equal(t, "stop", resp.DoneReason)
		assert.Positive(t, resp.Duration)
	}
}

func TestNew(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	tests := []struct {
		name    string
		cfg     ollama.Config
		wantURL string
		wantErr string
	}{
		{"default URL", ollama.Config{Model: "m"}, "http://127.0.0.1:11434", ""},
		{"explicit URL", ollama.Config{Model: "m", URL: "http://gpu-box:8080/"}, "http://gpu-box:8080", ""},
		{"host only", ollama.Config{Model: "m", URL: "localhost"}, "http://localhost:11434", ""},
		{"https behind a proxy", ollama.Config{Model: "m", URL: "https://llm.example.com/ollama"}, "https://llm.example.com/ollama", ""},
		{"no model", ollama.Config{URL: "http://x"}, "", "Config.Model is required"},
		{"blank model", ollama.Config{Model: "  "}, "", "Config.Model is required"},
		{"bad scheme", ollama.Config{Model: "m", URL: "ftp://x"}, "", `scheme "ftp"`},
		{"no host", ollama.Config{Model: "m", URL: "http://"}, "", "no host"},
		{"bad URL", ollama.Config{Model: "m", URL: "http://[::1"}, "", "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ollama.New(tc.cfg)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantURL, m.URL())
			assert.Equal(t, tc.cfg.Model, m.Name())
		})
	}
}

func TestOllamaHost(t *testing.T) {
	f := startOllama(t, llmtest.Script{Text: "via env"})
	addr := strings.TrimPrefix(f.srv.URL, "http://")

	t.Run("host:port without scheme", func(t *testing.T) {
		t.Setenv("OLLAMA_HOST", addr)
		m, err := ollama.New(ollama.Config{Model: "qwen3.5:9b"})
		require.NoError(t, err)
		assert.Equal(t, f.srv.URL, m.URL())
		resp, err := m.Generate(context.Background(), userReq("x"))
		require.NoError(t, err)
		assert.Equal(t, "via env", resp.Text)
	})
	t.Run("Config.URL wins", func(t *testing.T) {
		t.Setenv("OLLAMA_HOST", "http://elsewhere:1")
		m, err := ollama.New(ollama.Config{Model: "m", URL: f.srv.URL})
		require.NoError(t, err)
		assert.Equal(t, f.srv.URL, m.URL())
	})
	t.Run("bind-all address", func(t *testing.T) {
		t.Setenv("OLLAMA_HOST", "0.0.0.0")
		m, err := ollama.New(ollama.Config{Model: "m"})
		require.NoError(t, err)
		assert.Equal(t, "http://0.0.0.0:11434", m.URL())
	})
	t.Run("invalid", func(t *testing.T) {
		t.Setenv("OLLAMA_HOST", "ftp://x")
		_, err := ollama.New(ollama.Config{Model: "m"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "OLLAMA_HOST")
	})
}

// countingTransport counts round trips and forwards to the default
// transport.
type countingTransport struct{ n int }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPClientUsedNotModified(t *testing.T) {
	f := startOllama(t, llmtest.Script{Text: "ok"})
	ct := &countingTransport{}
	hc := &http.Client{Transport: ct}
	m, err := ollama.New(ollama.Config{URL: f.srv.URL, Model: "m", HTTPClient: hc})
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), userReq("x"))
	require.NoError(t, err)
	assert.Equal(t, 2, ct.n, "the configured transport carries the requests: /api/show, then /api/chat")
	assert.Same(t, ct, hc.Transport, "the caller's client is not modified")
}

func TestCancelAfterPartialStream(t *testing.T) {
	// Cancel while the adapter is blocked reading the body: the official
	// client drops the read error, so the adapter must still report ctx.Err.
	onReceive := make(chan struct{})
	var once sync.Once
	m, _ := newModel(t, ollama.Config{Stream: true}, llmtest.Script{
		Text: "partial reply", Chunks: 4, HangStream: true,
		OnReceive: func() { once.Do(func() { close(onReceive) }) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-onReceive
		cancel()
	}()
	_, err := m.Generate(ctx, userReq("x"))
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, llm.ErrUnavailable), "a cancellation is not an outage: %v", err)
}
