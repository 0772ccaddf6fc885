package prompt_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/prompt"
)

// The -update flag rewrites golden files. prompt/prompttest (imported by
// other tests of this binary) registers it too, so it is registered here
// only when nobody registered it first; init runs after the imported
// packages and after every package-level variable.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updatingSchemaGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestSchemaGolden fails when the schema sent to models changes by
// accident. Regenerate with: go test ./prompt -run Schema -update
func TestSchemaGolden(t *testing.T) {
	var got bytes.Buffer
	require.NoError(t, json.Indent(&got, prompt.Schema(), "", "  "))
	got.WriteByte('\n')

	path := filepath.Join("testdata", "schema.golden.json")
	if updatingSchemaGolden() {
		require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run: go test ./prompt -run Schema -update")
	want = bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n")) // a CRLF checkout
	assert.Equal(t, string(want), got.String(), "the response schema changed; if on purpose, run: go test ./prompt -run Schema -update")
}

func TestSchemaShape(t *testing.T) {
	raw := prompt.Schema()
	require.True(t, json.Valid(raw))
	assert.NotContains(t, string(raw), "\n", "Schema returns compact JSON")

	var s map[string]any
	require.NoError(t, json.Unmarshal(raw, &s))

	assert.Equal(t, "object", s["type"])
	assert.Equal(t, []any{"action", "content", "reasoning"}, s["required"])

	props := s["properties"].(map[string]any)
	prop := func(name string) map[string]any {
		p, ok := props[name].(map[string]any)
		require.True(t, ok, "property %q", name)
		return p
	}
	assert.Equal(t, []any{"goal"}, prop("action")["enum"])
	// The two verbatim phrases of spec §3.
	assert.Equal(t, "what you're doing — be honest, not performative", prop("content")["description"])
	assert.Equal(t, "what actually drove this — not what sounds right, what's true", prop("reasoning")["description"])
	assert.Equal(t, []any{"string", "null"}, prop("worldview_update")["type"])
	for _, name := range []string{"new_open_questions", "new_opinions", "suffering_assessment"} {
		prop(name)
	}

	// One flat, self-contained object, and no additionalProperties: false
	// anywhere (unknown keys are accepted on purpose).
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				assert.NotContains(t, []string{"$ref", "$defs", "definitions", "$id", "$schema", "$anchor"}, k, "%s: keyword %q", path, k)
				assert.NotEqual(t, "additionalProperties", k, "%s: additionalProperties %v", path, x)
				walk(path+"/"+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path, x)
			}
		}
	}
	walk("", s)
}

func TestSchemaReturnsCopy(t *testing.T) {
	a := prompt.Schema()
	orig := string(a)
	for i := range a {
		a[i] = 'x'
	}
	assert.Equal(t, orig, string(prompt.Schema()))
}

// TestSchemaIsWhatParseValidates compiles Schema() independently and checks
// that it accepts and rejects what ParseResponse does, at the same pointer,
// for input that the normalisation of ParseResponse (step 7) leaves alone.
func TestSchemaIsWhatParseValidates(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	require.NoError(t, c.AddResource("mem:///test.json", bytes.NewReader(prompt.Schema())))
	sch, err := c.Compile("mem:///test.json")
	require.NoError(t, err)

	docs := []string{
		`{"action": "goal", "content": "a", "reasoning": "b", "worldview_update": null, "extra": {"k": 1}}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "worldview_update": 3}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_opinions": [{"domain": "d"}]}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_opinions": [{"opinion": "o", "domain": "d"}]}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_open_questions": "q"}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "suffering_assessment": {"resolved": [{"reason": "r"}]}}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "suffering_assessment": {"resolved": [{"type": "t", "reason": "r"}]}}`,
	}
	for _, doc := range docs {
		var v any
		require.NoError(t, json.Unmarshal([]byte(doc), &v))
		verr := sch.Validate(v)
		_, perr := prompt.ParseResponse(doc)
		if verr == nil {
			assert.NoError(t, perr, doc)
			continue
		}
		require.ErrorIs(t, perr, prompt.ErrSchema, doc)
		var pe *prompt.ParseError
		require.ErrorAs(t, perr, &pe)
		var ve *jsonschema.ValidationError
		require.ErrorAs(t, verr, &ve)
		leaf := ve
		for len(leaf.Causes) > 0 {
			leaf = leaf.Causes[0]
		}
		assert.True(t, strings.HasPrefix(pe.Pointer, leaf.InstanceLocation), "%s: parse pointer %q, validator %q", doc, pe.Pointer, leaf.InstanceLocation)
	}
}

// TestSchemaStricterThanParse documents the deliberate difference: the
// schema sent to the model requires every field, while ParseResponse
// accepts what the original system's dict.get accepted (parse step 7).
func TestSchemaStricterThanParse(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	require.NoError(t, c.AddResource("mem:///test.json", bytes.NewReader(prompt.Schema())))
	sch, err := c.Compile("mem:///test.json")
	require.NoError(t, err)

	for _, doc := range []string{
		`{"action": "goal", "content": "a"}`,
		`{"action": "goal", "content": "a", "reasoning": null}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_opinions": null}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_opinions": ["o"]}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "new_opinions": [{"opinion": "o"}]}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "suffering_assessment": {"new_stressors": [{"type": "t"}]}}`,
		`{"action": "goal", "content": "a", "reasoning": "b", "suffering_assessment": {"resolved": [{"type": "t"}]}}`,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(doc), &v))
		assert.Error(t, sch.Validate(v), "the schema rejects %s", doc)
		_, perr := prompt.ParseResponse(doc)
		assert.NoError(t, perr, "ParseResponse accepts %s", doc)
	}
}
