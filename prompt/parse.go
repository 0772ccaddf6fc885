package prompt

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/existence-loop/sdk/internal/strictjson"
)

// MaxResponseBytes is the largest model output [ParseResponse] accepts:
// 1 MiB. Larger input is refused up front with [ErrTooLarge],
// before any scanning: a response is about a kilobyte, and a megabyte is a
// runaway generation.
const MaxResponseBytes = 1 << 20

// Sentinel errors of [ParseResponse]. Every error it returns is a
// *[ParseError] whose Kind is exactly one of these, so errors.Is(err,
// ErrSchema) and friends classify a failure.
var (
	// ErrTooLarge: the input is longer than MaxResponseBytes bytes.
	ErrTooLarge = errors.New("prompt: response too large")
	// ErrNoJSON: the input holds no JSON object at all (empty, prose only,
	// a bare array or string).
	ErrNoJSON = errors.New("prompt: no JSON object in response")
	// ErrSyntax: the input has something that starts like a JSON object,
	// but it is not valid JSON and could not be repaired (for example, the
	// output was cut off inside a string).
	ErrSyntax = errors.New("prompt: response is not valid JSON")
	// ErrSchema: the JSON object does not match [Schema]; ParseError.Pointer
	// names the bad field.
	ErrSchema = errors.New("prompt: response invalid")
	// ErrEmptyGoal: "content" and "reasoning" are both missing, null, empty
	// or blank, so there is no goal to set (spec §3).
	ErrEmptyGoal = errors.New("prompt: response has no goal")
	// ErrDuplicateKey: an object of the response names a key twice
	// ({"content": "a", "content": "b"}), so that two readers of the reply
	// could take two different values; ParseError.Pointer names the second
	// occurrence. Such a reply is refused as a whole, whatever else it
	// holds: no other object in it is tried.
	ErrDuplicateKey = errors.New("prompt: response names a key twice")
)

// ParseError is the error of [ParseResponse] and [ValidateResponse]. It
// matches its Kind with errors.Is, and its Error text is short enough to be
// quoted back to the model by a repair-and-retry step, for example:
//
//	prompt: response invalid at /new_opinions/0/opinion: missing property "opinion"
type ParseError struct {
	// Kind is one of ErrTooLarge, ErrNoJSON, ErrSyntax, ErrSchema,
	// ErrEmptyGoal, ErrDuplicateKey.
	Kind error
	// Pointer is the JSON Pointer (RFC 6901) of the bad field, relative to
	// the response object, e.g. "/new_opinions/0/opinion"; "" when the error
	// is about the object as a whole or has no location. For
	// ErrDuplicateKey it is relative to the object the key was found in
	// (a {"thought": …} wrapper included).
	Pointer string
	// Detail says what is wrong, e.g. `expected string, but got number`.
	Detail string
	// Offset is the byte offset in the raw input where a syntax error was
	// detected (ErrSyntax only); -1 otherwise.
	Offset int
}

// Error returns "KIND[ at POINTER| at byte OFFSET][: DETAIL]".
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	} else {
		b.WriteString("prompt: cannot parse response")
	}
	switch {
	case e.Pointer != "":
		b.WriteString(" at ")
		b.WriteString(e.Pointer)
	case e.Offset >= 0:
		b.WriteString(" at byte ")
		b.WriteString(strconv.Itoa(e.Offset))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is reports whether target is e's Kind, so that errors.Is(err, ErrSchema)
// works.
func (e *ParseError) Is(target error) bool { return target != nil && target == e.Kind }

// ValidateResponse reports whether text parses as a [Response]: it returns
// exactly the error [ParseResponse] would return (nil or a *[ParseError]).
// The LLM repair-and-retry middleware uses it to quote the problem, with its
// JSON Pointer, back to the model.
func ValidateResponse(text string) error {
	_, err := ParseResponse(text)
	return err
}

// ParseResponse turns raw model output into a [Response], tolerating the
// ways local models are known to break structured output, and
// returns a classified *[ParseError] otherwise. It never panics. Steps, in
// order:
//
//  1. Input over [MaxResponseBytes] is refused with [ErrTooLarge].
//  2. A UTF-8 byte order mark and leading white space are skipped, then a
//     reasoning preamble. After a leading <think>…</think> block the
//     answer is searched for after the block; the block itself is searched
//     only when nothing after it looks like JSON, so a draft in the
//     reasoning never overrides a broken answer. After an unclosed <think>
//     the rest of the text is searched (reasoning, then the object). A
//     stray leading </think> is dropped, and reasoning that ends with
//     </think> (the chat template opened the block; the original system
//     cut everything up to "</think>") is skipped, with the whole text as a
//     fallback in case the tag was inside a JSON string. The body of the
//     first Markdown code fence (```json … ```) is searched before the text
//     around it.
//  3. JSON objects are found in surrounding prose by brace scanning that
//     understands JSON strings (braces and quotes inside strings do not
//     count). A bare array around the object ([{…}]) is looked through.
//  4. When several objects are present (two back to back, or a draft in the
//     prose), the first one that yields a valid response wins. At most 16
//     candidates are tried, which bounds the work on hostile input. An
//     object that names a key twice, at any depth (including inside a
//     wrapper's JSON string), ends the search: the reply is refused with
//     [ErrDuplicateKey] (objects are decoded with encoding/json/v2
//     semantics, github.com/go-json-experiment/json), so that no reading of
//     an ambiguous reply ever becomes a goal.
//  5. An object cut off at the very end of the text (a missing closing brace
//     or bracket, possibly after a trailing comma and white space, as when
//     generation hits the token limit) is repaired by closing the open
//     containers, when the cut is not inside a string and closing gives
//     valid JSON. A cut inside a string is [ErrSyntax].
//  6. An object that is not itself a response ({"thought": {…}}, and the
//     keys "thinking", "response", "answer", "output", "result", "json")
//     whose wrapper value is a response-like object, or a JSON string
//     holding one, is unwrapped (up to 3 levels).
//  7. Normalisation, as in the original system, which read the response
//     with dict.get (spec §3). An "action" other than "goal", or missing,
//     becomes "goal". A missing or null "reasoning" becomes "". A missing,
//     null or blank "content" falls back to "reasoning"; if both are blank
//     the result is [ErrEmptyGoal] (Pointer "/content"). Null for an
//     optional field ("new_open_questions", "new_opinions",
//     "suffering_assessment", and "new_stressors" and "resolved" inside
//     it) means the field is absent ("worldview_update" is nullable in
//     [Schema] itself). A bare string s in "new_opinions" becomes
//     {"opinion": s, "domain": ""}. A missing or null "domain" of an
//     opinion, "description" or "condition" of a stressor, or "reason" of a
//     resolution becomes "". A missing "opinion" or "type" stays an error:
//     the entry means nothing without it. An object with neither "content"
//     nor "reasoning" ({"thought": "…"} alone) is not a response: it fails
//     validation with [ErrSchema] (missing properties "content",
//     "reasoning"), which tells a repair step what to add.
//  8. The object is validated against [Schema] (santhosh-tekuri/jsonschema
//     v5), which is unchanged by the leniency above: the model is still
//     asked for every field. On failure the error is [ErrSchema] with the
//     JSON Pointer of the first bad field in document order (the most
//     specific error); a missing property points at where it should be
//     ("/new_opinions/0/opinion").
//  9. The object is decoded into a Response; unknown keys are dropped, and
//     white space around Content and Reasoning is trimmed.
//
// On success, Action is "goal" and Content is non-empty. When nothing
// valid is found, the error is that of the longest candidate (the likeliest
// intended response) in the first searched part of the text that held one,
// or [ErrNoJSON] when there was no '{' at all.
func ParseResponse(raw string) (*Response, error) {
	if len(raw) > MaxResponseBytes {
		return nil, &ParseError{
			Kind:   ErrTooLarge,
			Detail: strconv.Itoa(len(raw)) + " bytes, limit " + strconv.Itoa(MaxResponseBytes),
			Offset: -1,
		}
	}
	return newResponseScanner(raw).parse()
}

// wrapperKeys are the keys of {"thought": {...response...}}-style wrappers,
// in the order they are tried.
var wrapperKeys = [...]string{"thought", "thinking", "response", "answer", "output", "result", "json"}

// maxUnwrap bounds nested wrappers ({"json": {"response": {...}}}).
const maxUnwrap = 3

// decodeCandidate turns one candidate JSON object text into a Response.
// start is its byte offset in the raw input, for syntax error offsets. slow
// skips the [fastValid] shortcut and always runs the jsonschema validator
// (for the tests that prove the shortcut changes nothing).
func decodeCandidate(text string, start int, slow bool) (*Response, error) {
	var v any
	if err := strictjson.Unmarshal([]byte(text), &v, strictjson.AllowInvalidUTF8()); err != nil {
		return nil, candidateError(err, text, start)
	}
	m, ok := v.(map[string]any)
	if !ok {
		// Cannot happen: candidates start with '{'. Classified anyway.
		return nil, &ParseError{Kind: ErrNoJSON, Detail: "top-level value is not an object", Offset: -1}
	}
	inner, ok, err := unwrapResponse(m, maxUnwrap)
	if err != nil {
		return nil, err
	}
	if ok {
		m = inner
	}
	if err := normalise(m); err != nil {
		return nil, err
	}
	if slow || !fastValid(m) {
		cs := responseSchema()
		if err := cs.validator.Validate(m); err != nil {
			return nil, schemaError(err, cs.order)
		}
	}
	return responseFromMap(m), nil
}

// candidateError classifies the decoder's error for the candidate text
// found at byte start of the raw input: a key named twice is
// [ErrDuplicateKey]; anything else is [ErrSyntax] at the offending byte
// (the end of the text when it ended too soon).
func candidateError(err error, text string, start int) *ParseError {
	var dup *strictjson.DuplicateKeyError
	if errors.As(err, &dup) {
		return duplicateError(dup)
	}
	pe := &ParseError{Kind: ErrSyntax, Detail: strings.TrimPrefix(err.Error(), "json: "), Offset: start}
	var se *jsontext.SyntacticError
	var me *json.SemanticError
	switch {
	case errors.As(err, &se):
		pe.Detail, pe.Offset = se.Err.Error(), start+int(se.ByteOffset)
		if errors.Is(se.Err, io.ErrUnexpectedEOF) {
			pe.Detail, pe.Offset = "unexpected end of JSON input", start+len(text)
		}
	case errors.As(err, &me):
		pe.Offset = start + int(me.ByteOffset)
	}
	pe.Offset = min(pe.Offset, start+len(text))
	return pe
}

// duplicateError is the [ErrDuplicateKey] error for d.
func duplicateError(d *strictjson.DuplicateKeyError) *ParseError {
	return &ParseError{
		Kind:    ErrDuplicateKey,
		Pointer: d.Pointer,
		Detail:  fmt.Sprintf("the key %q appears twice; send each key once", d.Key),
		Offset:  -1,
	}
}

// looksLikeResponse reports whether m has any of the required keys.
func looksLikeResponse(m map[string]any) bool {
	_, a := m["action"]
	_, c := m["content"]
	_, r := m["reasoning"]
	return a || c || r
}

// unwrapResponse finds the response inside {"thought": {...}}-style
// wrappers, at most depth levels down. It returns m itself when m looks like
// a response, and false when no wrapper holds one. A wrapper's JSON string
// that names a key twice is an [ErrDuplicateKey] error.
func unwrapResponse(m map[string]any, depth int) (map[string]any, bool, error) {
	if looksLikeResponse(m) {
		return m, true, nil
	}
	if depth == 0 {
		return nil, false, nil
	}
	for _, k := range wrapperKeys {
		var inner map[string]any
		switch x := m[k].(type) {
		case map[string]any:
			inner = x
		case string:
			// A wrapper whose value is the response as a JSON string.
			if s := strings.TrimSpace(x); strings.HasPrefix(s, "{") {
				err := strictjson.Unmarshal([]byte(s), &inner, strictjson.AllowInvalidUTF8())
				var dup *strictjson.DuplicateKeyError
				if errors.As(err, &dup) {
					return nil, false, duplicateError(dup)
				}
				if err != nil {
					inner = nil // not JSON: not a wrapper
				}
			}
		}
		if inner == nil {
			continue
		}
		if r, ok, err := unwrapResponse(inner, depth-1); ok || err != nil {
			return r, ok, err
		}
	}
	return nil, false, nil
}

// normalise applies the original system's normalisation (spec §3) in
// place, before validation; see step 7 of [ParseResponse]. The original
// read the response with dict.get, so what it tolerated is tolerated here:
// absent or null optional parts, and entries missing a secondary field.
func normalise(m map[string]any) error {
	m["action"] = "goal"
	normaliseOptional(m)
	if !hasKey(m, "content") && !hasKey(m, "reasoning") {
		return nil // not a response; validation says what is missing
	}
	if r, ok := m["reasoning"]; !ok || r == nil {
		m["reasoning"] = ""
	}
	if content, ok := m["content"].(string); ok && strings.TrimSpace(content) != "" {
		return nil
	}
	if c, present := m["content"]; present && c != nil {
		if _, isString := c.(string); !isString {
			return nil // a wrong type, not an empty goal: validation reports it
		}
	}
	if reasoning, ok := m["reasoning"].(string); ok && strings.TrimSpace(reasoning) != "" {
		m["content"] = reasoning
		return nil
	}
	return &ParseError{
		Kind:    ErrEmptyGoal,
		Pointer: "/content",
		Detail:  "content and reasoning are both empty",
		Offset:  -1,
	}
}

// normaliseOptional makes the optional parts of m lenient, in place: a
// null optional list or object is dropped (absent), a bare string in
// new_opinions becomes an opinion without a domain, and a missing or null
// secondary field of an entry (an opinion's domain, a stressor's
// description and condition, a resolution's reason) becomes "". Values of
// any other shape are left for validation to report. worldview_update is
// nullable in the schema itself and needs nothing here.
func normaliseOptional(m map[string]any) {
	dropNull(m, "new_open_questions")
	dropNull(m, "new_opinions")
	dropNull(m, "suffering_assessment")
	if ops, ok := m["new_opinions"].([]any); ok {
		for i, x := range ops {
			switch o := x.(type) {
			case string:
				ops[i] = map[string]any{"opinion": o, "domain": ""}
			case map[string]any:
				defaultEmpty(o, "domain")
			}
		}
	}
	sa, ok := m["suffering_assessment"].(map[string]any)
	if !ok {
		return
	}
	dropNull(sa, "new_stressors")
	dropNull(sa, "resolved")
	for _, x := range list(sa["new_stressors"]) {
		if st, ok := x.(map[string]any); ok {
			defaultEmpty(st, "description")
			defaultEmpty(st, "condition")
		}
	}
	for _, x := range list(sa["resolved"]) {
		if rs, ok := x.(map[string]any); ok {
			defaultEmpty(rs, "reason")
		}
	}
}

// dropNull deletes m[k] when it is present and null.
func dropNull(m map[string]any, k string) {
	if x, ok := m[k]; ok && x == nil {
		delete(m, k)
	}
}

// defaultEmpty sets m[k] to "" when it is missing or null.
func defaultEmpty(m map[string]any, k string) {
	if x, ok := m[k]; !ok || x == nil {
		m[k] = ""
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// responseFromMap converts a validated, normalised object into a Response.
// Validation guarantees the types, so the assertions cannot fail; unknown
// keys are dropped. It replaces a json.Marshal/Unmarshal round trip (which
// would also match keys case-insensitively, unlike the validator). Keep it
// in sync with Response: TestResponseFromMapCoversEveryField fails when a
// field is added.
func responseFromMap(m map[string]any) *Response {
	r := &Response{Action: "goal"}
	r.Content = strings.TrimSpace(str(m["content"]))
	r.Reasoning = strings.TrimSpace(str(m["reasoning"]))
	if wv, ok := m["worldview_update"].(string); ok {
		r.WorldviewUpdate = &wv
	}
	for _, q := range list(m["new_open_questions"]) {
		r.NewOpenQuestions = append(r.NewOpenQuestions, str(q))
	}
	for _, x := range list(m["new_opinions"]) {
		o, _ := x.(map[string]any)
		r.NewOpinions = append(r.NewOpinions, NewOpinion{Opinion: str(o["opinion"]), Domain: str(o["domain"])})
	}
	if wm, ok := m["working_memory"]; ok && wm != nil {
		// Decoded from JSON, so it marshals back; keys come out sorted.
		if b, err := json.Marshal(wm, json.Deterministic(true)); err == nil {
			r.WorkingMemory = b
		}
	}
	if sa, ok := m["suffering_assessment"].(map[string]any); ok {
		r.SufferingAssessment = &SufferingAssessment{}
		for _, x := range list(sa["new_stressors"]) {
			st, _ := x.(map[string]any)
			r.SufferingAssessment.NewStressors = append(r.SufferingAssessment.NewStressors, NewStressor{
				Type:        str(st["type"]),
				Description: str(st["description"]),
				Condition:   str(st["condition"]),
			})
		}
		for _, x := range list(sa["resolved"]) {
			rs, _ := x.(map[string]any)
			r.SufferingAssessment.Resolved = append(r.SufferingAssessment.Resolved, Resolution{
				Type:   str(rs["type"]),
				Reason: str(rs["reason"]),
			})
		}
	}
	return r
}

func str(x any) string {
	s, _ := x.(string)
	return s
}

func list(x any) []any {
	l, _ := x.([]any)
	return l
}
