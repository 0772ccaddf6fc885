package ollama_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ollama"
)

// roundTripFunc answers requests in process, without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzReply feeds arbitrary reply bodies, statuses and Retry-After values to
// Generate. It must never panic, and must return either a usable response
// or a classified error, never both and never neither.
func FuzzReply(f *testing.F) {
	seeds := []struct {
		status int
		retry  string
		body   string
	}{
		{200, "", `{"model":"m","message":{"role":"assistant","content":"{\"a\":1}"},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}`},
		{200, "", "{\"message\":{\"content\":\"par\"},\"done\":false}\n{\"message\":{\"content\":\"tial\"},\"done\":true,\"done_reason\":\"length\"}\n"},
		{200, "", "{\"message\":{\"thinking\":\"hmm\"},\"done\":false}\n{\"message\":{\"content\":\"\"},\"done\":true}\n"},
		{200, "", `{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"a":[1,2]}}}]},"done":true}`},
		{200, "", `{"message":{"tool_calls":[{"function":{"name":"f","arguments":"not an object"}}]},"done":true}`},
		{200, "", "{\"error\":\"llama runner process has terminated\"}\n"},
		{200, "", "\ufeff{\"message\":{\"content\":\"bom\"},\"done\":true}"},
		{200, "", `{"message":{"content":"two"},"done":true}{"message":{"content":"objects"},"done":true}`},
		{200, "", `{"message":{"content":"missing brace"},"done":true`},
		{200, "", strings.Repeat(" ", 4096)},
		{404, "", `{"error":"model 'm' not found"}`},
		{503, "10", `{"error":"server busy"}`},
		{429, "Sun, 01 Mar 2026 12:00:30 GMT", ""},
		{500, "", "<html>oops</html>"},
		{302, "", ""},
	}
	for _, s := range seeds {
		f.Add(s.status, s.retry, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, retry string, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if retry != "" {
				h.Set("Retry-After", retry)
			}
			return &http.Response{
				StatusCode: status, Status: http.StatusText(status), Header: h,
				Body: io.NopCloser(bytes.NewReader(body)), Request: r,
			}, nil
		})}
		for _, stream := range []bool{false, true} {
			m, err := ollama.New(ollama.Config{URL: "http://ollama.invalid", Model: "m", HTTPClient: hc, Stream: stream})
			require.NoError(t, err)
			resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
			if err != nil {
				require.Nil(t, resp, "both a response and an error: %v", err)
				if status >= 400 {
					require.True(t, isStatusClass(err), "HTTP %d gave an unclassified error: %v", status, err)
				}
				continue
			}
			require.NotNil(t, resp, "neither a response nor an error")
			require.False(t, strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0, "empty response without ErrEmpty: %+v", resp)
			require.NotEqual(t, llm.DoneLength, resp.DoneReason, "truncated response without ErrTruncated: %+v", resp)
		}
	})
}

func isStatusClass(err error) bool {
	var se llm.StatusError
	return errors.As(err, &se) || errors.Is(err, llm.ErrModelNotFound)
}
