package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/strictjson"
)

func TestDuplicateKeys(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		key     string // "" when there is no duplicate
		pointer string
	}{
		{"top level", `{"content": "a", "content": "b"}`, "content", "/content"},
		{"nested object", `{"a": {"b": 1, "b": 2}}`, "b", "/a/b"},
		{"in an array", `{"a": [{"x": 1}, {"x": 1, "y": 2, "x": 3}]}`, "x", "/a/1/x"},
		{"escaped spelling", `{"a": 1, "\u0061": 2}`, "a", "/a"},
		{"a NUL in the name", `{"a\u0000": 1, "a\u0000": 2}`, "a\x00", "/a\x00"},
		{"a slash in the name", `{"a/b": 1, "a/b": 2}`, "a/b", "/a~1b"},
		{"same key, other objects", `{"a": {"k": 1}, "b": {"k": 2}}`, "", ""},
		{"case differs", `{"Content": "a", "content": "b"}`, "", ""},
		{"no object", `[1, 2, 2]`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			uerr := strictjson.Unmarshal([]byte(tt.in), &v)
			cerr := strictjson.Check([]byte(tt.in))
			if tt.key == "" {
				assert.NoError(t, uerr)
				assert.NoError(t, cerr)
				return
			}
			for _, err := range []error{uerr, cerr} {
				require.ErrorIs(t, err, strictjson.ErrDuplicateKey)
				var d *strictjson.DuplicateKeyError
				require.ErrorAs(t, err, &d)
				assert.Equal(t, tt.key, d.Key)
				assert.Equal(t, tt.pointer, d.Pointer)
				assert.Greater(t, d.Offset, int64(0))
				assert.Contains(t, d.Error(), "duplicate key")
			}
		})
	}
}

// TestCheckLeavesSyntaxToTheCaller: Check reports duplicates only, so that
// a caller's own decoder words the syntax errors; invalid UTF-8 does not
// hide a duplicate.
func TestCheckLeavesSyntaxToTheCaller(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a": x}`, `{"a": 1} trailing`, "\xff"} {
		assert.NoError(t, strictjson.Check([]byte(in)), "%q", in)
	}
	assert.ErrorIs(t, strictjson.Check([]byte("{\"a\": \"\xff\", \"a\": 2}")), strictjson.ErrDuplicateKey)
}

func TestUnmarshalKeepsOtherErrors(t *testing.T) {
	var v struct {
		Text string `json:"text"`
	}
	err := strictjson.Unmarshal([]byte(`{"text": 1}`), &v)
	var se *jsonv2.SemanticError
	require.ErrorAs(t, err, &se)
	err = strictjson.Unmarshal([]byte(`{"txt": "x"}`), &v, jsonv2.RejectUnknownMembers(true))
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, se.Err, jsonv2.ErrUnknownName)
	err = strictjson.Unmarshal([]byte(`{"text": "x"} {}`), &v)
	var syn *jsontext.SyntacticError
	require.ErrorAs(t, err, &syn)
	assert.False(t, errors.Is(err, strictjson.ErrDuplicateKey))

	var s any
	require.Error(t, strictjson.Unmarshal([]byte("\"\xff\""), &s), "invalid UTF-8 is refused by default")
	require.NoError(t, strictjson.Unmarshal([]byte("\"\xff\""), &s, strictjson.AllowInvalidUTF8()))
	assert.Equal(t, "\uFFFD", s)
}

// FuzzDuplicateKeys: Check and Unmarshal agree on every input; an object
// that decodes cleanly is still refused once one of its keys is planted
// again in front; and what decodes cleanly decodes as encoding/json reads
// it.
func FuzzDuplicateKeys(f *testing.F) {
	for _, s := range []string{
		`{"content": "a", "reasoning": "b"}`,
		`{"content": "a", "content": "b"}`,
		`{"a": [{"x": 1}, {"x": 1, "x": 3}]}`,
		`{"a\u0000": 1, "a\u0000": 2}`,
		`{"\ud800": 1, "\ufffd": 2}`,
		"{\"a\": \"\xff\", \"b\": [true, null, 1e3]}",
		`[{"k": {}}, {"k": {"k": 1}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cerr := strictjson.Check(data)
		var v any
		uerr := strictjson.Unmarshal(data, &v, strictjson.AllowInvalidUTF8())
		require.Equal(t, cerr != nil, errors.Is(uerr, strictjson.ErrDuplicateKey), "Check %v, Unmarshal %v", cerr, uerr)
		if cerr != nil {
			var a, b *strictjson.DuplicateKeyError
			require.ErrorAs(t, cerr, &a)
			require.ErrorAs(t, uerr, &b)
			require.Equal(t, *a, *b)
			return
		}
		m, ok := v.(map[string]any)
		if uerr != nil || !ok {
			return
		}
		if json.Valid(data) {
			var old any
			require.NoError(t, json.Unmarshal(data, &old))
			require.Equal(t, old, v, "encoding/json reads a document without duplicates the same way")
		}
		for k := range m {
			kb, err := json.Marshal(k)
			require.NoError(t, err)
			trimmed := bytes.TrimLeft(data, " \t\r\n")
			planted := append(append(append([]byte("{"), kb...), []byte(":0,")...), trimmed[1:]...)
			var d *strictjson.DuplicateKeyError
			require.ErrorAs(t, strictjson.Check(planted), &d, "planted %q in %q", k, data)
			require.Equal(t, k, d.Key)
			break
		}
	})
}
