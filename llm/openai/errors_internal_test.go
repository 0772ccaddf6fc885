package openai

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
