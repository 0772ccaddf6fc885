package engine_test

import (
	"encoding/json"
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
