package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// parseSlow is ParseResponse with the fastValid shortcut turned off: every
// candidate goes through the jsonschema validator, as before issue 9's
// fast path.
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
	if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(ferr, serr) {
		t.Fatalf("fast path changed the result of %q:\nfast %#v, %v\nslow %#v, %v", raw, fast, ferr, slow, serr)
	}
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
		if r, ok := decodeFast(raw[i:sc.end]); ok {
			want, err := decodeCandidate(raw[i:sc.end], i, true)
			if err != nil || !reflect.DeepEqual(r, want) {
				t.Fatalf("decodeFast(%q) = %#v, the general path gives %#v, %v", raw[i:sc.end], r, want, err)
			}
		}
		var v any
		if json.Unmarshal([]byte(raw[i:sc.end]), &v) != nil {
			continue
		}
		m, _ := v.(map[string]any)
		if inner, ok := unwrapResponse(m, maxUnwrap); ok {
			m = inner
		}
		if m == nil || normalise(m) != nil {
			continue
		}
		if fastValid(m) {
			if err := cs.validator.Validate(m); err != nil {
				t.Fatalf("fastValid accepts %q, the validator refuses it: %v", raw[i:sc.end], err)
			}
		}
	}
}

// FuzzFastCheck proves the fast path's invariant on arbitrary input: when
// fastValid accepts, the schema validator accepts too, and ParseResponse's
// result (Response or error) is exactly that of the validator-only path.
func FuzzFastCheck(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no corpus in testdata/responses: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, c := range fastValidCases {
		f.Add(c.json)
	}
	for _, c := range fastDecodeCases {
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
			if err := json.Unmarshal([]byte(c.json), &m); err != nil {
				t.Fatal(err)
			}
			if got := fastValid(m); got != c.fast {
				t.Fatalf("fastValid = %v, want %v", got, c.fast)
			}
			if valid := cs.validator.Validate(m) == nil; valid != c.fast {
				t.Fatalf("validator accepts = %v, fastValid = %v", valid, c.fast)
			}
		})
	}
}

// TestFastCheckCorpus runs every reply of testdata/responses and every
// case above through both paths: same Response, same error.
func TestFastCheckCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in testdata/responses: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) { checkFastAgainstSlow(t, string(b)) })
	}
	for _, c := range fastValidCases {
		t.Run(c.name, func(t *testing.T) { checkFastAgainstSlow(t, c.json) })
	}
}

// TestFastCheckTakesTypical checks that a typical well-formed reply is
// accepted by the fast path (so the validator is not run in the common
// case, issue 9), not merely accepted in the end.
func TestFastCheckTakesTypical(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal([]byte(typicalObject(t)), &m); err != nil {
		t.Fatal(err)
	}
	if err := normalise(m); err != nil {
		t.Fatal(err)
	}
	if !fastValid(m) {
		t.Fatal("fastValid refuses the typical reply: the fast path is never taken")
	}
}

// schemaSHA256 is the SHA-256 of Schema() that fastValid was written
// against.
const schemaSHA256 = "96df8f58a35185815c9d210f2ba6c6035edc44ff7aab5b7e1692089682c154ba"

// TestFastValidSchemaGolden fails when the response schema changes, so
// that fastValid is brought in step with it (then update schemaSHA256).
func TestFastValidSchemaGolden(t *testing.T) {
	sum := sha256.Sum256(Schema())
	if got := hex.EncodeToString(sum[:]); got != schemaSHA256 {
		t.Fatalf("the response schema changed (sha256 %s): update fastValid (fastcheck.go) to its rules, then schemaSHA256", got)
	}
}

// fastDecodeCases are candidate objects with whether decodeFast takes
// them. Every one, taken or not, must give the general path's result.
var fastDecodeCases = []struct {
	name string
	json string
	fast bool
}{
	{"minimal", `{"action":"goal","content":"c","reasoning":"r"}`, true},
	{"spaced", " {\n\t\"action\" : \"goal\" ,\r\n \"content\":\" c \", \"reasoning\" :\"r\" } ", true},
	{"full", fastValidCases[1].json, true},
	{"action other", `{"action":"act","content":"c","reasoning":"r"}`, true},
	{"action missing", `{"content":"c","reasoning":"r"}`, true},
	{"reasoning missing", `{"content":"c"}`, true},
	{"reasoning null", `{"content":"c","reasoning":null}`, true},
	{"worldview null", `{"content":"c","worldview_update":null}`, true},
	{"worldview blank", `{"content":"c","worldview_update":"  "}`, true},
	{"escapes", `{"content":"a\"b\\c\/d\be\ff\ng\rh\ti","reasoning":"\n"}`, true},
	{"unicode", `{"content":"café — 雨","reasoning":"ok 🙂"}`, true},
	{"empty lists", fastValidCases[2].json, true},
	{"null lists", `{"content":"c","new_open_questions":null,"new_opinions":null,"suffering_assessment":{"new_stressors":null,"resolved":null}}`, true},
	{"assessment null", `{"content":"c","suffering_assessment":null}`, true},
	{"assessment empty", `{"content":"c","suffering_assessment":{}}`, true},
	{"opinion string", `{"content":"c","new_opinions":["o",{"opinion":"p","domain":"d"}]}`, true},
	{"entry defaults", `{"content":"c","new_opinions":[{"opinion":"o"},{"domain":null,"opinion":"p"}],"suffering_assessment":{"new_stressors":[{"type":"t"},{"type":"u","description":null,"condition":null}],"resolved":[{"type":"t"},{"type":"u","reason":null}]}}`, true},

	{"empty object", `{}`, false},
	{"content blank", `{"content":" ","reasoning":"r"}`, false},
	{"content null", `{"content":null,"reasoning":"r"}`, false},
	{"content number", `{"content":1,"reasoning":"r"}`, false},
	{"action number", `{"action":1,"content":"c"}`, false},
	{"unknown key", `{"content":"c","confidence":0.9}`, false},
	{"duplicate key", `{"content":"c","content":"d"}`, false},
	{"duplicate entry key", `{"content":"c","new_opinions":[{"opinion":"o","opinion":"p"}]}`, false},
	{"u escape", `{"content":"\u00e9"}`, false},
	{"bad escape", `{"content":"\x"}`, false},
	{"escaped key", `{"con\u0074ent":"c"}`, false},
	{"control char", "{\"content\":\"a\u0001b\"}", false},
	{"invalid utf8", "{\"content\":\"a\xffb\"}", false},
	{"surrogate utf8", "{\"content\":\"a\xed\xa0\x80b\"}", false},
	{"wrapper", `{"thought":{"content":"c"}}`, false},
	{"trailing text", `{"content":"c"} x`, false},
	{"trailing comma", `{"content":"c",}`, false},
	{"questions number", `{"content":"c","new_open_questions":[1]}`, false},
	{"opinion missing text", `{"content":"c","new_opinions":[{"domain":"d"}]}`, false},
	{"opinion extra key", `{"content":"c","new_opinions":[{"opinion":"o","x":"y"}]}`, false},
	{"stressor missing type", `{"content":"c","suffering_assessment":{"new_stressors":[{"description":"d"}]}}`, false},
	{"stressor string", `{"content":"c","suffering_assessment":{"new_stressors":["t"]}}`, false},
	{"resolution missing type", `{"content":"c","suffering_assessment":{"resolved":[{"reason":"r"}]}}`, false},
	{"assessment extra key", `{"content":"c","suffering_assessment":{"mood":"fine"}}`, false},
	{"truncated", `{"content":"c"`, false},
	{"null misspelt", `{"content":"c","reasoning":nul}`, false},
}

// TestFastDecode checks which objects decodeFast takes, and that each
// gives exactly the general path's result (Response or error).
func TestFastDecode(t *testing.T) {
	for _, c := range fastDecodeCases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.TrimSpace(c.json)
			got, ok := decodeFast(text)
			if ok != c.fast {
				t.Fatalf("decodeFast took it = %v, want %v", ok, c.fast)
			}
			want, err := decodeCandidate(text, 0, true)
			if ok && (err != nil || !reflect.DeepEqual(got, want)) {
				t.Fatalf("decodeFast = %#v\ngeneral path = %#v, %v", got, want, err)
			}
			checkFastAgainstSlow(t, c.json)
		})
	}
}

// TestFastDecodeTakesTypical checks that the corpus's typical reply is
// decoded without a map (issue 9's cycle cost).
func TestFastDecodeTakesTypical(t *testing.T) {
	if obj := typicalObject(t); !decodeFastOK(obj) {
		t.Fatalf("decodeFast refuses the typical reply %q", obj)
	}
}

// TestFastDecodeCopies checks that the decoded strings do not share the
// reply's memory, which the agent's identity would otherwise keep alive.
func TestFastDecodeCopies(t *testing.T) {
	text := []byte(`{"content":"goal text","reasoning":"why","worldview_update":"w","new_open_questions":["q"]}`)
	r, ok := decodeFast(unsafe.String(&text[0], len(text))) // aliases text
	if !ok {
		t.Fatal("not taken")
	}
	for i := range text {
		text[i] = 'x'
	}
	if r.Content != "goal text" || r.Reasoning != "why" || *r.WorldviewUpdate != "w" || r.NewOpenQuestions[0] != "q" {
		t.Fatalf("decoded strings changed with the input: %#v", r)
	}
}

func decodeFastOK(text string) bool {
	_, ok := decodeFast(text)
	return ok
}

// typicalObject returns the JSON object of testdata/responses/typical.txt.
func typicalObject(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", "typical.txt"))
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	i := strings.IndexByte(raw, '{')
	if i < 0 {
		t.Fatalf("no object in typical.txt: %q", raw)
	}
	sc := scanObject(raw, i, len(raw))
	if !sc.closed {
		t.Fatalf("the object of typical.txt does not close: %q", raw)
	}
	return raw[i:sc.end]
}
