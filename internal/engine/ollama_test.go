package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/engine"
)

// ConstrainChat makes a request with tools a call of one of them, and
// bounds the strings and arrays of a JSON Schema format; other requests
// come back unchanged.
func TestConstrainChat(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"write_note","parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}}]`
	for _, tc := range []struct {
		name, body, choice string
		limit              int
		want               string // the format sent, "" for the body unchanged
	}{
		{"plain", `{"model":"m","messages":[]}`, "required", 12, ""},
		{"tools, no choice", `{"model":"m","tools":` + tools + `}`, "", 12, ""},
		{"tools required", `{"model":"m","tools":` + tools + `}`, "required", 0,
			`{"properties":{"arguments":{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"},"name":{"enum":["write_note"],"type":"string"}},"required":["name","arguments"],"type":"object"}`},
		{"tools required and limited", `{"model":"m","tools":` + tools + `}`, "required", 12,
			`{"properties":{"arguments":{"properties":{"text":{"maxLength":12,"type":"string"}},"required":["text"],"type":"object"},"name":{"enum":["write_note"],"type":"string"}},"required":["name","arguments"],"type":"object"}`},
		{"schema limited", `{"model":"m","format":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","maxLength":40}},"e":{"type":"string","enum":["x"]}}}}`, "", 12,
			`{"properties":{"a":{"items":{"maxLength":12,"type":"string"},"maxItems":1,"type":"array"},"e":{"enum":["x"],"type":"string"}},"type":"object"}`},
		{"format json untouched", `{"model":"m","format":"json"}`, "", 12, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := engine.ConstrainChat([]byte(tc.body), tc.choice, tc.limit)
			require.NoError(t, err)
			if tc.want == "" {
				assert.JSONEq(t, tc.body, string(out))
				return
			}
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out, &got))
			assert.JSONEq(t, tc.want, string(got["format"]))
		})
	}
	_, err := engine.ConstrainChat([]byte(`[1]`), "required", 12)
	assert.Error(t, err, "not an object")
}

// ToolCallReply turns a reply whose content is the forced call into that
// tool call, in either key order, and leaves every other reply as it is.
func TestToolCallReply(t *testing.T) {
	call := `[{"id":"call_0","function":{"index":0,"name":"write_note","arguments":{"text":"a}}b"}}}]`
	for _, tc := range []struct {
		name, body string
		want       string // the message after, "" for the body unchanged
	}{
		{"name first", `{"done":true,"message":{"role":"assistant","content":"{\"name\":\"write_note\",\"arguments\":{\"text\":\"a}}b\"}}"}}`,
			`{"role":"assistant","content":"","tool_calls":` + call + `}`},
		{"arguments first", `{"done":true,"message":{"role":"assistant","content":"{\"arguments\" :{\"text\":\"a}}b\"},\n\t\"name\":\"write_note\"}"}}`,
			`{"role":"assistant","content":"","tool_calls":` + call + `}`},
		{"already a call", `{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"x","arguments":{}}}]}}`, ""},
		{"prose", `{"message":{"role":"assistant","content":"hello"}}`, ""},
		{"no name", `{"message":{"role":"assistant","content":"{\"arguments\":{}}"}}`, ""},
		{"arguments not an object", `{"message":{"role":"assistant","content":"{\"name\":\"x\",\"arguments\":\"{}\"}"}}`, ""},
		{"no message", `{"error":"busy"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := engine.ToolCallReply([]byte(tc.body))
			require.NoError(t, err)
			if tc.want == "" {
				assert.JSONEq(t, tc.body, string(out))
				return
			}
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out, &got))
			assert.JSONEq(t, tc.want, string(got["message"]))
			assert.JSONEq(t, "true", string(got["done"]), "the rest of the reply stays")
		})
	}
	_, err := engine.ToolCallReply([]byte(`[1]`))
	assert.Error(t, err, "not an object")
}

// ToolCallResponse rewrites a successful JSON reply in place and leaves
// an error, a compressed or a streamed reply as it is.
func TestToolCallResponse(t *testing.T) {
	forced := `{"message":{"role":"assistant","content":"{\"name\":\"x\",\"arguments\":{}}"}}`
	for _, tc := range []struct {
		name                string
		status              int
		contentType, encode string
		rewritten           bool
	}{
		{"json", http.StatusOK, "application/json; charset=utf-8", "", true},
		{"error", http.StatusInternalServerError, "application/json", "", false},
		{"compressed", http.StatusOK, "application/json", "gzip", false},
		{"streamed", http.StatusOK, "application/x-ndjson", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(forced))}
			resp.Header.Set("Content-Type", tc.contentType)
			if tc.encode != "" {
				resp.Header.Set("Content-Encoding", tc.encode)
			}
			require.NoError(t, engine.ToolCallResponse(resp))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if !tc.rewritten {
				assert.Equal(t, forced, string(body))
				return
			}
			assert.Contains(t, string(body), `"tool_calls"`)
			assert.Equal(t, int64(len(body)), resp.ContentLength)
			assert.Equal(t, strconv.Itoa(len(body)), resp.Header.Get("Content-Length"))
		})
	}
}

// CacheLines reads Ollama's "loading cache slot" debug lines and names
// the ones it cannot read.
func TestCacheLines(t *testing.T) {
	log := `time=2026-12-03T08:35:04.792Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=19 used=0 remaining=19
[GIN] 2026/12/03 - 08:35:04 | 200 | POST "/api/chat"
time=2026-12-03T08:35:13.747Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=1 cache=20 prompt=873 used=18 remaining=855
`
	lines, err := engine.CacheLines(log)
	require.NoError(t, err)
	assert.Equal(t, []engine.CacheLine{{Slot: 0, Prompt: 19, Used: 0}, {Slot: 1, Prompt: 873, Used: 18}}, lines)
	_, err = engine.CacheLines(`msg="loading cache slot" id=x`)
	assert.ErrorContains(t, err, "unreadable cache line")
}
