package openai

import (
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {" 1.5 "}}, 1500 * time.Millisecond},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, 0},
		{"Inf", http.Header{"Retry-After": {"+Inf"}}, 0},
		{"absurd", http.Header{"Retry-After": {"1e20"}}, 0},
		{"over a day", http.Header{"Retry-After": {"90000"}}, 0},
		{"http date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"ms wins", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{"bad ms falls back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"9"}}, 9 * time.Second},
		{"negative ms falls back", http.Header{"Retry-After-Ms": {"-5"}, "Retry-After": {"2"}}, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, retryAfter(c.header, now))
		})
	}
}

func TestParseErrorBody(t *testing.T) {
	cases := []struct {
		body, msg, code string
	}{
		{`{"error":{"message":"m","type":"t","code":"model_not_found"}}`, "m", "model_not_found"},
		{`{"error":{"message":"Loading model","code":503}}`, "Loading model", "503"},
		{`{"error":"plain"}`, "plain", ""},
		{`{"error":{"code":400,"type":"exceed_context_size_error","message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","n_prompt_tokens":5000,"n_ctx":4096}}`,
			"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it", "exceed_context_size_error"},
		{`{"error":{"msg":"odd"}}`, `{"msg":"odd"}`, ""},
		{`{"object":"error","message":"vllm","code":404}`, "vllm", "404"},
		{`{"detail":"fastapi"}`, "fastapi", ""},
		{`{"detail":[{"loc":["body"],"msg":"x"}]}`, `[{"loc":["body"],"msg":"x"}]`, ""},
		{`{"error":null,"message":null}`, "", ""},
		{`{}`, "{}", ""},
		{"  Bad Gateway\n", "Bad Gateway", ""},
		{"\xff\xfeoops", "\uFFFDoops", ""},
		{``, "", ""},
	}
	for _, c := range cases {
		msg, code := parseErrorBody([]byte(c.body))
		assert.Equal(t, c.msg, msg, "body %q", c.body)
		assert.Equal(t, c.code, code, "body %q", c.body)
	}
}

func FuzzParseErrorBody(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","type":"t","code":"model_not_found"}}`,
		`{"error":{"message":"Loading model","code":503}}`,
		`{"error":"plain"}`,
		`{"object":"error","message":"vllm","code":404}`,
		`{"detail":"x"}`,
		`<html>502</html>`,
		"\xef\xbb\xbf{\"error\":\"bom\"}",
		`{"error":{"message":`,
		`{"error":[1,2,{"message":3}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, code := parseErrorBody(body)
		msg2, code2 := parseErrorBody(body)
		require.Equal(t, msg, msg2, "not deterministic")
		require.Equal(t, code, code2, "not deterministic")
		if utf8.Valid(body) {
			require.True(t, utf8.ValidString(msg), "invalid UTF-8 message %q from valid body", msg)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "1.5", "-1", "NaN", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "", "0x10", "9223372036854775807"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, retryAfterValue, retryAfterMs string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfterValue)
		h.Set("Retry-After-Ms", retryAfterMs)
		d := retryAfter(h, now)
		require.GreaterOrEqual(t, d, time.Duration(0), "retryAfter(%q, %q): want within [0, 24h]", retryAfterValue, retryAfterMs)
		require.LessOrEqual(t, d, 24*time.Hour, "retryAfter(%q, %q): want within [0, 24h]", retryAfterValue, retryAfterMs)
	})
}

// TestContextLengthError pins the refusals of a prompt over the window
// that OpenAI-compatible servers send, with the numbers their messages
// give.
func TestContextLengthError(t *testing.T) {
	tests := []struct {
		name           string
		status         int
		msg, code      string
		ok             bool
		window, prompt int
	}{
		{"openai", 400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", "context_length_exceeded", true, 128000, 130512},
		{"vllm", 400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "400", true, 4096, 4000},
		{"llama.cpp", 400, "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it", "400", true, 4096, 4476},
		{"llama.cpp, older", 400, "the request exceeds the available context size, try increasing it", "", true, 0, 0},
		{"code only", 400, "too long", "context_length_exceeded", true, 0, 0},
		{"llama.cpp type only", 400, "prompt too long", "exceed_context_size_error", true, 0, 0},
		{"vllm, newer", 400, "'max_tokens' is too large: 1000. This model's maximum context length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - 3500).", "400", true, 4096, 3500},
		{"ollama behind", 500, "the input length exceeds the context length", "", true, 0, 0},
		{"another 400", 400, "messages: must not be empty", "", false, 0, 0},
		{"a 503 naming the context", 503, "maximum context length is 10 tokens", "", false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ce, ok := contextLengthError(tc.status, tc.msg, tc.code)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.window, ce.Window)
			assert.Equal(t, tc.prompt, ce.Prompt)
			assert.Equal(t, tc.msg, ce.Message)
		})
	}
}
