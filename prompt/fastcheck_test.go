package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseSlow is ParseResponse with the fastValid shortcut turned off: every
// candidate goes through the jsonschema validator.
func parseSlow(raw string) (*Response, error) {
	if len(raw) > MaxResponseBytes {
		return ParseResponse(raw) // refused before any decoding
	}
	s := newResponseScanner(raw)
	s.slow = true
	return s.parse()
}

// checkFastAgainstSlow fails t when the fast path and the validator
// disagree on raw: the results of ParseResponse and parseSlow must be
// identical (the same Response, or the same error), and on every object
// in raw that fastValid accepts after normalisation, the validator must
// accept too.
func checkFastAgainstSlow(t *testing.T, raw string) {
	t.Helper()
	fast, ferr := ParseResponse(raw)
	slow, serr := parseSlow(raw)
	require.Equal(t, slow, fast, "the fast path changed the response of %q", raw)
	require.Equal(t, serr, ferr, "the fast path changed the error of %q", raw)
	// The invariant itself, on the objects of raw (not only on the one
	// ParseResponse stopped at).
	cs := responseSchema()
	for pos, n := 0, 0; pos < len(raw) && n < 4; n++ {
		j := strings.IndexByte(raw[pos:], '{')
		if j < 0 {
			break
		}
		i := pos + j
		pos = i + 1
		sc := scanObject(raw, i, len(raw))
		if !sc.closed {
			continue
		}
		var v any
		if json.Unmarshal([]byte(raw[i:sc.end]), &v) != nil {
			continue
		}
		m, _ := v.(map[string]any)
		if inner, ok, err := unwrapResponse(m, maxUnwrap); err != nil {
			continue
		} else if ok {
			m = inner
		}
		if m == nil || normalise(m) != nil {
			continue
		}
		if fastValid(m) {
			require.NoError(t, cs.validator.Validate(m), "fastValid accepts %q, the validator refuses it", raw[i:sc.end])
		}
	}
}

// FuzzFastCheck proves the fast path's invariant on arbitrary input: when
// fastValid accepts, the schema validator accepts too, and ParseResponse's
// result (Response or error) is exactly that of the validator-only path.
func FuzzFastCheck(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", "*.txt"))
	require.NoError(f, err)
	require.NotEmpty(f, files, "no corpus in testdata/responses")
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(string(b))
	}
	for _, c := range fastValidCases {
		f.Add(c.json)
	}
	f.Fuzz(checkFastAgainstSlow)
}

// fastValidCases are normalised objects (what fastValid sees) with the
// fast check's answer. Every case where fast is false is also refused by
// the validator: the fast check is exact on the schema's own rules.
var fastValidCases = []struct {
	name string
	json string
	fast bool
}{
	{"minimal", `{"action":"goal","content":"c","reasoning":"r"}`, true},
	{"full", `{"action":"goal","content":"c","reasoning":"r","worldview_update":"w","new_open_questions":["q"],"new_opinions":[{"opinion":"o","domain":"d"}],"suffering_assessment":{"new_stressors":[{"type":"t","description":"d","condition":"c"}],"resolved":[{"type":"t","reason":"r"}]}}`, true},
	{"empty lists", `{"action":"goal","content":"c","reasoning":"r","new_open_questions":[],"new_opinions":[],"suffering_assessment":{"new_stressors":[],"resolved":[]}}`, true},
	{"worldview null", `{"action":"goal","content":"c","reasoning":"r","worldview_update":null}`, true},
	{"unknown keys", `{"action":"goal","content":"c","reasoning":"r","thought":{"x":[1,2]},"confidence":0.9}`, true},
	{"empty assessment", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{}}`, true},
	{"entry extra keys", `{"action":"goal","content":"c","reasoning":"r","new_opinions":[{"opinion":"o","domain":"d","x":1}]}`, true},

	{"action other", `{"action":"act","content":"c","reasoning":"r"}`, false},
	{"action missing", `{"content":"c","reasoning":"r"}`, false},
	{"action number", `{"action":1,"content":"c","reasoning":"r"}`, false},
	{"content missing", `{"action":"goal","reasoning":"r"}`, false},
	{"content null", `{"action":"goal","content":null,"reasoning":"r"}`, false},
	{"content number", `{"action":"goal","content":3,"reasoning":"r"}`, false},
	{"reasoning missing", `{"action":"goal","content":"c"}`, false},
	{"reasoning array", `{"action":"goal","content":"c","reasoning":["r"]}`, false},
	{"worldview number", `{"action":"goal","content":"c","reasoning":"r","worldview_update":1}`, false},
	{"worldview object", `{"action":"goal","content":"c","reasoning":"r","worldview_update":{}}`, false},
	{"questions string", `{"action":"goal","content":"c","reasoning":"r","new_open_questions":"q"}`, false},
	{"questions null", `{"action":"goal","content":"c","reasoning":"r","new_open_questions":null}`, false},
	{"question number", `{"action":"goal","content":"c","reasoning":"r","new_open_questions":["q",2]}`, false},
	{"opinions object", `{"action":"goal","content":"c","reasoning":"r","new_opinions":{"opinion":"o","domain":"d"}}`, false},
	{"opinion string", `{"action":"goal","content":"c","reasoning":"r","new_opinions":["o"]}`, false},
	{"opinion missing text", `{"action":"goal","content":"c","reasoning":"r","new_opinions":[{"domain":"d"}]}`, false},
	{"opinion missing domain", `{"action":"goal","content":"c","reasoning":"r","new_opinions":[{"opinion":"o"}]}`, false},
	{"opinion domain null", `{"action":"goal","content":"c","reasoning":"r","new_opinions":[{"opinion":"o","domain":null}]}`, false},
	{"assessment string", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":"fine"}`, false},
	{"assessment null", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":null}`, false},
	{"stressors object", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"new_stressors":{}}}`, false},
	{"stressor missing type", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"new_stressors":[{"description":"d","condition":"c"}]}}`, false},
	{"stressor missing condition", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"new_stressors":[{"type":"t","description":"d"}]}}`, false},
	{"stressor type number", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"new_stressors":[{"type":1,"description":"d","condition":"c"}]}}`, false},
	{"resolved string entry", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"resolved":["t"]}}`, false},
	{"resolution missing reason", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"resolved":[{"type":"t"}]}}`, false},
	{"resolution reason bool", `{"action":"goal","content":"c","reasoning":"r","suffering_assessment":{"resolved":[{"type":"t","reason":true}]}}`, false},
}

// TestFastValid checks fastValid on normalised objects, and that it agrees
// with the validator on each: exact here, one-way (fast ⇒ valid) in general.
func TestFastValid(t *testing.T) {
	cs := responseSchema()
	for _, c := range fastValidCases {
		t.Run(c.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(c.json), &m))
			require.Equal(t, c.fast, fastValid(m), "fastValid")
			require.Equal(t, c.fast, cs.validator.Validate(m) == nil, "the validator agrees with fastValid")
		})
	}
}

// TestFastCheckCorpus runs every reply of testdata/responses and every
// case above through both paths: same Response, same error.
func TestFastCheckCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no corpus in testdata/responses")
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		t.Run(filepath.Base(p), func(t *testing.T) { checkFastAgainstSlow(t, string(b)) })
	}
	for _, c := range fastValidCases {
		t.Run(c.name, func(t *testing.T) { checkFastAgainstSlow(t, c.json) })
	}
}

// TestFastCheckTakesTypical checks that a typical well-formed reply is
// accepted by the fast path (so the validator is not run in the common
// case), not merely accepted in the end.
func TestFastCheckTakesTypical(t *testing.T) {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(typicalObject(t)), &m))
	require.NoError(t, normalise(m))
	require.True(t, fastValid(m), "fastValid refuses the typical reply: the fast path is never taken")
}

// schemaSHA256 is the SHA-256 of Schema() that fastValid was written
// against.
const schemaSHA256 = "96df8f58a35185815c9d210f2ba6c6035edc44ff7aab5b7e1692089682c154ba"

// TestFastValidSchemaGolden fails when the response schema changes, so
// that fastValid is brought in step with it (then update schemaSHA256).
func TestFastValidSchemaGolden(t *testing.T) {
	sum := sha256.Sum256(Schema())
	require.Equal(t, schemaSHA256, hex.EncodeToString(sum[:]), "the response schema changed: update fastValid (fastcheck.go) to its rules, then schemaSHA256")
}

func typicalObject(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", "typical.txt"))
	require.NoError(t, err)
	raw := string(b)
	i := strings.IndexByte(raw, '{')
	require.GreaterOrEqual(t, i, 0, "no object in typical.txt: %q", raw)
	sc := scanObject(raw, i, len(raw))
	require.True(t, sc.closed, "the object of typical.txt does not close: %q", raw)
	return raw[i:sc.end]
}
