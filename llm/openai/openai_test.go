package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/openai"
)

func TestConformance(t *testing.T) {
	llmtest.Run(t, harness(openai.Config{}))
}

func TestConformanceMaxCompletionTokens(t *testing.T) {
	llmtest.Run(t, harness(openai.Config{MaxCompletionTokens: true}))
}

func userRequest(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// wire decodes the raw request body as a generic JSON object.
func wire(t *testing.T, rec llmtest.Recorded) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(rec.Raw, &v))
	return v
}

const schema = `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`

func TestResponseFormatOnTheWire(t *testing.T) {
	cases := []struct {
		name   string
		cfg    openai.Config
		format string
		want   string
	}{
		{"json_schema non-strict", openai.Config{}, schema,
			`{"type":"json_schema","json_schema":{"name":"response","schema":` + schema + `}}`},
		{"json_schema strict", openai.Config{Strict: true, SchemaName: "goal_reply"}, schema,
			`{"type":"json_schema","json_schema":{"name":"goal_reply","strict":true,"schema":` + schema + `}}`},
		{"json_object", openai.Config{JSONObject: true, Strict: true}, schema,
			`{"type":"json_object"}`},
		{"json mode format", openai.Config{}, `"json"`,
			`{"type":"json_object"}`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				c.cfg.Stream = stream
				m, fs := newModel(t, c.cfg, llmtest.Script{Text: `{"content":"x"}`})
				req := userRequest("Answer in JSON.")
				req.Format = json.RawMessage(c.format)
				_, err := m.Generate(context.Background(), req)
				require.NoError(t, err)
				got, err := json.Marshal(wire(t, fs.recorded()[0])["response_format"])
				require.NoError(t, err)
				assert.JSONEq(t, c.want, string(got))
			})
		}
	}
}

func TestSchemaBytesUnchanged(t *testing.T) {
	// The schema goes out byte for byte: key order, white space, escapes.
	format := "{\n  \"z\": {\"type\": \"integer\"},\n  \"a\": {\"type\": \"string\", \"description\": \"— caf\\u00e9\"}\n}"
	m, fs := newModel(t, openai.Config{}, llmtest.Script{Text: `{"z":1}`})
	req := userRequest("x")
	req.Format = json.RawMessage(format)
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Contains(t, string(fs.recorded()[0].Raw), `"schema":`+format+`}`)
}

func TestWireOptions(t *testing.T) {
	m, fs := newModel(t, openai.Config{Stream: true}, llmtest.Script{Text: "ok"})
	req := userRequest("x")
	req.MaxTokens = 64
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	w := wire(t, fs.recorded()[0])
	assert.Equal(t, map[string]any{"include_usage": true}, w["stream_options"])
	assert.Equal(t, float64(64), w["max_tokens"])
	assert.NotContains(t, w, "max_completion_tokens")
	assert.Equal(t, true, w["stream"])

	m, fs = newModel(t, openai.Config{MaxCompletionTokens: true}, llmtest.Script{Text: "ok"})
	_, err = m.Generate(context.Background(), req)
	require.NoError(t, err)
	w = wire(t, fs.recorded()[0])
	assert.Equal(t, float64(64), w["max_completion_tokens"])
	assert.NotContains(t, w, "max_tokens")
	assert.NotContains(t, w, "stream_options")
	assert.NotContains(t, w, "stream")
}

func TestEnvironment(t *testing.T) {
	fs, srv := newFakeServer(t, llmtest.Script{Text: "from env"}, llmtest.Script{Text: "explicit"}, llmtest.Script{Text: "no key"})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-env")

	m, err := openai.New(openai.Config{Model: "gpt-4o-mini"})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/v1", m.BaseURL())
	assert.Equal(t, "gpt-4o-mini", m.Name())
	resp, err := m.Generate(context.Background(), userRequest("x"))
	require.NoError(t, err)
	assert.Equal(t, "from env", resp.Text)

	m, err = openai.New(openai.Config{Model: "gpt-4o-mini", APIKey: "sk-explicit"})
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), userRequest("x"))
	require.NoError(t, err)

	t.Setenv("OPENAI_API_KEY", "")
	m, err = openai.New(openai.Config{Model: "local"})
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), userRequest("x"))
	require.NoError(t, err)

	h := fs.requestHeaders()
	require.Len(t, h, 3)
	assert.Equal(t, "Bearer sk-env", h[0].Get("Authorization"))
	assert.Equal(t, "Bearer sk-explicit", h[1].Get("Authorization"))
	assert.Empty(t, h[2].Values("Authorization"), "no key, no Authorization header")
}

func TestDefaultBaseURL(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	m, err := openai.New(openai.Config{Model: "gpt-4o-mini"})
	require.NoError(t, err)
	assert.Equal(t, "https://api.openai.com/v1", m.BaseURL())
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []openai.Config{
		{},
		{Model: "  "},
		{Model: "m", BaseURL: "127.0.0.1:8080/v1"},
		{Model: "m", BaseURL: "ftp://host/v1"},
		{Model: "m", BaseURL: "http://"},
		{Model: "m", BaseURL: "http://[::1"},
	} {
		_, err := openai.New(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

func TestRequestErrors(t *testing.T) {
	m, fs := newModel(t, openai.Config{})
	cases := []*llm.Request{
		nil,
		{Messages: []llm.Message{{Role: "narrator", Content: "x"}}},
		{Messages: []llm.Message{{Role: llm.RoleTool, Content: "result"}}},
		{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Format: json.RawMessage(`{"type":`)},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Tools: []llm.ToolDef{{Name: "f", Parameters: json.RawMessage(`[1]`)}}},
	}
	for i, req := range cases {
		_, err := m.Generate(context.Background(), req)
		assert.Error(t, err, "case %d", i)
		assert.Equal(t, "error", middleware.Classify(err), "case %d: %v", i, err)
	}
	assert.Empty(t, fs.recorded(), "invalid requests are not sent")
}

func TestDeveloperRole(t *testing.T) {
	m, fs := newModel(t, openai.Config{}, llmtest.Script{Text: "ok"})
	_, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: "developer", Content: "be brief"}}})
	require.NoError(t, err)
	assert.Equal(t, []llm.Message{{Role: "developer", Content: "be brief"}}, fs.recorded()[0].Messages)
}

// rawServer answers every request with status, headers and body.
func rawServer(t *testing.T, status int, header http.Header, body string) *openai.Model {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "qwen3.5-9b", Stream: strings.Contains(header.Get("Content-Type"), "event-stream")})
	require.NoError(t, err)
	return m
}

func TestErrorBodies(t *testing.T) {
	type want struct {
		class      string
		message    string
		retryAfter time.Duration
	}
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   want
	}{
		{"llama.cpp loading", 503, http.Header{"Retry-After": {"3"}},
			`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			want{"http_503", "Loading model", 3 * time.Second}},
		{"openai rate limit ms", 429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}},
			`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			want{"http_429", "Rate limit reached for requests", 1500 * time.Millisecond}},
		{"vllm top-level", 400, nil,
			`{"object":"error","message":"max_tokens must be at least 1, got 0.","type":"BadRequestError","param":null,"code":400}`,
			want{"http_400", "max_tokens must be at least 1, got 0.", 0}},
		{"string error", 500, nil, `{"error":"llama runner process has terminated"}`,
			want{"http_500", "llama runner process has terminated", 0}},
		{"fastapi detail", 422, nil, `{"detail":"Field required"}`, want{"http_422", "Field required", 0}},
		{"proxy text", 502, http.Header{"Content-Type": {"text/html"}}, "<html>Bad Gateway</html>\n",
			want{"http_502", "<html>Bad Gateway</html>", 0}},
		{"empty body", 504, http.Header{"Retry-After": {"soon"}}, "", want{"http_504", "", 0}},
		{"wrong path", 404, nil, `{"error":{"message":"File Not Found","type":"not_found_error"}}`,
			want{"http_404", "File Not Found (is the base URL right? requests go to", 0}},
		{"unauthorized", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-x.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			want{"http_401", "Incorrect API key provided", 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := rawServer(t, c.status, c.header, c.body)
			_, err := m.Generate(context.Background(), userRequest("x"))
			require.Error(t, err)
			assert.Equal(t, c.want.class, middleware.Classify(err))
			var se llm.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "openai", se.Provider)
			assert.Contains(t, se.Message, c.want.message)
			assert.Equal(t, c.want.retryAfter, se.RetryAfter)
		})
	}
}

func TestModelNotFoundShapes(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"openai code":    {404, `{"error":{"message":"The model ` + "`x`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`},
		"vllm":           {404, `{"object":"error","message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`},
		"ollama /v1":     {404, `{"error":{"message":"model \"x\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
		"code on 400":    {400, `{"error":{"message":"no such model","code":"model_not_found"}}`},
		"lm studio text": {404, `{"error":"Model x not found"}`},
	} {
		t.Run(name, func(t *testing.T) {
			m := rawServer(t, c.status, nil, c.body)
			req := userRequest("x")
			req.Model = "x"
			_, err := m.Generate(context.Background(), req)
			require.ErrorIs(t, err, llm.ErrModelNotFound)
			var mnf *llm.ModelNotFoundError
			require.ErrorAs(t, err, &mnf)
			assert.Equal(t, "x", mnf.Model)
			assert.Contains(t, err.Error(), "/v1/models lists the models")
			assert.False(t, middleware.Retryable(err))
		})
	}
}

func TestUnavailableHint(t *testing.T) {
	m := harness(openai.Config{}).Unreachable(t)
	_, err := m.Generate(context.Background(), userRequest("x"))
	var ue *llm.UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "openai", ue.Provider)
	assert.Equal(t, fmt.Sprintf("is the server running at %s?", ue.URL), ue.Hint)
	assert.True(t, strings.HasSuffix(ue.URL, "/v1"))
	assert.True(t, middleware.Retryable(err))
}

const sse = "text/event-stream"

func TestStreamEdgeCases(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	t.Run("cut before finish_reason", func(t *testing.T) {
		m := rawServer(t, 200, http.Header{"Content-Type": {sse}}, chunk(`{"content":"{\"a\":"}`, "null"))
		_, err := m.Generate(context.Background(), userRequest("x"))
		require.ErrorIs(t, err, llm.ErrUnavailable)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.True(t, middleware.Retryable(err))
	})
	t.Run("error event", func(t *testing.T) {
		m := rawServer(t, 200, http.Header{"Content-Type": {sse}},
			chunk(`{"content":"x"}`, "null")+`data: {"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`+"\n\n")
		_, err := m.Generate(context.Background(), userRequest("x"))
		var se llm.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, 500, se.StatusCode)
		assert.Equal(t, "slot unavailable", se.Message)
	})
	t.Run("error event without status", func(t *testing.T) {
		m := rawServer(t, 200, http.Header{"Content-Type": {sse}}, `data: {"error":{"message":"boom"}}`+"\n\n")
		_, err := m.Generate(context.Background(), userRequest("x"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "boom")
	})
	t.Run("tool calls without ids, function_call finish, usage repeated", func(t *testing.T) {
		body := chunk(`{"role":"assistant","tool_calls":[{"index":0,"function":{"name":"read_file","arguments":"{\"path\":"}}]}`, "null") +
			`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}` + "\n\n" +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}`, "null") +
			chunk(`{"tool_calls":[{"index":1,"function":{"name":"list_dir"}}]}`, "null") +
			chunk(`{}`, `"function_call"`) +
			`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}` + "\n\n" +
			"data: [DONE]\n\n"
		m := rawServer(t, 200, http.Header{"Content-Type": {sse}}, body)
		resp, err := m.Generate(context.Background(), userRequest("x"))
		require.NoError(t, err)
		assert.Equal(t, []llm.ToolCall{
			{ID: "call_0", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
			{ID: "call_1", Name: "list_dir", Arguments: json.RawMessage(`{}`)},
		}, resp.ToolCalls)
		assert.Equal(t, "tool_calls", resp.DoneReason)
		assert.Equal(t, 5, resp.PromptTokens, "the last usage wins; usage is not summed")
		assert.Equal(t, 9, resp.OutputTokens)
	})
	t.Run("reasoning field", func(t *testing.T) {
		body := chunk(`{"reasoning":"think "}`, "null") + chunk(`{"reasoning":"hard"}`, "null") +
			chunk(`{"content":"done"}`, `"stop"`) + "data: [DONE]\n\n"
		m := rawServer(t, 200, http.Header{"Content-Type": {sse}}, body)
		resp, err := m.Generate(context.Background(), userRequest("x"))
		require.NoError(t, err)
		assert.Equal(t, "think hard", resp.Thinking)
		assert.Equal(t, "done", resp.Text)
	})
}

func TestCompletionEdgeCases(t *testing.T) {
	json200 := http.Header{"Content-Type": {"application/json"}}
	t.Run("refusal", func(t *testing.T) {
		m := rawServer(t, 200, json200, `{"id":"c","object":"chat.completion","model":"gpt","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`)
		resp, err := m.Generate(context.Background(), userRequest("x"))
		require.NoError(t, err)
		assert.Equal(t, "I can't help with that.", resp.Text)
		assert.Equal(t, "gpt", resp.Model)
		assert.Equal(t, 0, resp.PromptTokens, "no usage, no tokens")
	})
	t.Run("no choices", func(t *testing.T) {
		m := rawServer(t, 200, json200, `{"id":"c","object":"chat.completion","model":"gpt","choices":[]}`)
		_, err := m.Generate(context.Background(), userRequest("x"))
		require.ErrorIs(t, err, llm.ErrEmpty)
	})
	t.Run("not JSON", func(t *testing.T) {
		m := rawServer(t, 200, json200, `{"id":"c","choices":[{"message":`)
		_, err := m.Generate(context.Background(), userRequest("x"))
		require.Error(t, err)
		assert.NotErrorIs(t, err, llm.ErrEmpty)
	})
	t.Run("custom tool call", func(t *testing.T) {
		m := rawServer(t, 200, json200, `{"id":"c","model":"gpt","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"x","type":"custom","custom":{"name":"f","input":"y"}}]},"finish_reason":"tool_calls"}]}`)
		_, err := m.Generate(context.Background(), userRequest("x"))
		require.ErrorContains(t, err, `unsupported tool call type "custom"`)
	})
}

func TestCancelStopsAtOnce(t *testing.T) {
	for _, stream := range []bool{false, true} {
		received := make(chan struct{})
		m, _ := newModel(t, openai.Config{Stream: stream}, llmtest.Script{Text: "a b c d", Chunks: 4, HangStream: true, OnReceive: func() { close(received) }})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-received; cancel() }()
		_, err := m.Generate(ctx, userRequest("x"))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, "canceled", middleware.Classify(err))
	}
}

func TestWithMiddleware(t *testing.T) {
	// A 503 with Retry-After, then a reply: the retry middleware honours
	// the server's delay.
	m, fs := newModel(t, openai.Config{},
		llmtest.Script{Status: 503, ErrorMessage: "Loading model", RetryAfter: "4"},
		llmtest.Script{Text: `{"content":"ok"}`, PromptTokens: 10, OutputTokens: 4},
	)
	var waits []time.Duration
	r := middleware.WithRetry(middleware.WithTimeout(m, 0), middleware.RetryPolicy{Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	resp, err := r.Generate(context.Background(), userRequest("x"))
	require.NoError(t, err)
	assert.Equal(t, `{"content":"ok"}`, resp.Text)
	assert.Equal(t, []time.Duration{4 * time.Second}, waits)
	assert.Len(t, fs.recorded(), 2)
	assert.Equal(t, "qwen3.5-9b", middleware.Instrument(m, "", func(middleware.Attempt) {}).(interface{ Name() string }).Name())
}

func TestErrorsAreNotSwallowed(t *testing.T) {
	// A transport that fails in an unusual way keeps its error.
	boom := errors.New("boom")
	m, err := openai.New(openai.Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", HTTPClient: &http.Client{Transport: failing{boom}}})
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), userRequest("x"))
	require.ErrorIs(t, err, boom)
	assert.Equal(t, "error", middleware.Classify(err))
}

type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }
