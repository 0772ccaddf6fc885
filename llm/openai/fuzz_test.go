package openai_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/openai"
)

// replay is a RoundTripper that answers every request with one canned
// response, so the fuzzer exercises the adapter without any network.
type replay struct {
	status      int
	contentType string
	body        []byte
}

func (r replay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: r.status,
		Header:     http.Header{"Content-Type": {r.contentType}},
		Body:       io.NopCloser(bytes.NewReader(r.body)),
		Request:    req,
	}, nil
}

// FuzzGenerate feeds arbitrary server replies (JSON bodies, SSE streams,
// error bodies) to the adapter: it must never panic, and must return either
// a usable Response or a classified error.
func FuzzGenerate(f *testing.F) {
	seeds := []struct {
		status int
		stream bool
		body   string
	}{
		{200, false, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"action\":\"goal\"}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`},
		{200, false, `{"choices":[{"message":{"content":"<think>hmm</think>{\"thought\":\"x\"}"},"finish_reason":"stop"}]}`},
		{200, false, `{"choices":[{"message":{"content":"{\"a\":1}{\"b\":2}"},"finish_reason":"stop"}]}`},
		{200, false, `{"choices":[{"message":{"content":"{\"a\":1"},"finish_reason":"stop"}]}`},
		{200, false, `{"choices":[{"message":{"content":"\n\n\n\n     \n"},"finish_reason":"length"}]}`},
		{200, false, "\xef\xbb\xbf{\"choices\":[]}"},
		{200, false, `{"choices":[{"message":{"tool_calls":[{"id":"","type":"function","function":{"name":"f","arguments":"{not json"}}]},"finish_reason":"tool_calls"}]}`},
		{200, false, `{"choices":[{"index":3,"message":null,"finish_reason":null}],"usage":{"prompt_tokens":-1}}`},
		{200, true, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"},
		{200, true, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1,\"function\":{\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"},
		{200, true, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":99999999,\"function\":{\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"},
		{200, true, "data: {\"choices\":[{\"delta\":{\"content\":\"cut"},
		{200, true, "event: error\ndata: {\"error\":{\"code\":\"x\"}}\n\n"},
		{200, true, ": keep-alive\n\ndata: [DONE]\n\n"},
		{503, false, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`},
		{404, false, `{"error":"model not found"}`},
		{429, false, `<html>slow down</html>`},
	}
	for _, s := range seeds {
		f.Add(s.status, s.stream, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, stream bool, body []byte) {
		if status < 100 || status > 599 {
			status = 200
		}
		ct := "application/json"
		if stream && status < 400 {
			ct = "text/event-stream"
		}
		m, err := openai.New(openai.Config{
			BaseURL:    "http://fuzz.invalid/v1",
			Model:      "m",
			Stream:     stream,
			HTTPClient: &http.Client{Transport: replay{status: status, contentType: ct, body: body}},
		})
		require.NoError(t, err)
		resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		if err != nil {
			require.Nil(t, resp, "both a Response and an error")
			require.NotEmpty(t, err.Error(), "empty error text")
			if status >= 400 {
				class := middleware.Classify(err)
				require.True(t, class == "model_not_found" || strings.HasPrefix(class, "http_"), "HTTP %d classified %q: %v", status, class, err)
			}
			return
		}
		require.NotNil(t, resp, "nil Response and nil error")
		require.False(t, strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0, "empty Response without ErrEmpty: %+v", resp)
		require.NotEqual(t, llm.DoneLength, resp.DoneReason, "truncated Response returned without TruncatedError")
	})
}
