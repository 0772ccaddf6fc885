package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
)

// document is the current (version 1) on-disk form of an [identity.AgentState].
type document struct {
	SchemaVersion int                  `json:"schema_version"`
	State         *identity.AgentState `json:"state"`
}

// migrations[v] turns the bytes of a version-v document into a version-v+1
// document. Each step works on raw JSON, not on today's Go types, so that old
// steps keep working when [identity.AgentState] changes. Adding version 2
// means appending one function and raising [identity.SchemaVersion].
var migrations = [identity.SchemaVersion]func(doc []byte) ([]byte, error){
	0: migrateV0,
}

// migrateV0 wraps a bare State object (version 0) in a version-1 document.
func migrateV0(doc []byte) ([]byte, error) {
	return json.Marshal(struct {
		SchemaVersion int             `json:"schema_version"`
		State         json.RawMessage `json:"state"`
	}{1, json.RawMessage(doc)})
}

// encodeDocument returns the compact version-1 document for s, ending in a
// newline: indenting cost half of a cycle's CPU ([IndentDocument] gives
// the readable form). HTML characters are not escaped, so the file
// stays readable. The document starts after reserve bytes of the returned
// buffer, left for a journal record's prefix. sizeHint is the expected
// length in bytes (0: unknown); a right hint spares the buffer growing five
// times for a large agent.
func encodeDocument(s *identity.AgentState, reserve, sizeHint int) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(reserve + max(4096, sizeHint) + 1)
	buf.Write(make([]byte, reserve))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(document{SchemaVersion: identity.SchemaVersion, State: s}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// IndentDocument returns data, a state document or any JSON, indented by
// two spaces for a person to read, ending in a newline. It returns an
// error for invalid JSON.
func IndentDocument(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(data), "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// decodeDocument decodes the document data read from path for agent id,
// migrating it to the current version. Errors: a [*identity.CorruptError]
// (which matches [identity.ErrCorrupt]) for anything that is not a valid
// state of agent id, and an error wrapping [identity.ErrFutureVersion] for a
// document written by a newer version. It never panics.
func decodeDocument(path, id string, data []byte) (*identity.AgentState, error) {
	corrupt := func(err error, format string, args ...any) *identity.CorruptError {
		return &identity.CorruptError{Path: path, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	// Fast path (decode once): a current document decodes in
	// one pass. Anything else (an error, another version, a wrong id)
	// takes the slow path below, which explains what is wrong.
	var doc struct {
		SchemaVersion *int                 `json:"schema_version"`
		State         *identity.AgentState `json:"state"`
	}
	if json.Unmarshal(data, &doc) == nil && doc.SchemaVersion != nil && *doc.SchemaVersion == identity.SchemaVersion &&
		doc.State != nil && doc.State.Identity.AgentID == id {
		if err := doc.State.Validate(); err != nil {
			return nil, corrupt(err, "invalid state: %v", err)
		}
		return doc.State, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt(nil, "empty file (%d bytes)", len(data))
	}
	if err := syntaxError(data); err != nil {
		return nil, corrupt(err, "%s", describeSyntaxError(data, err))
	}
	version, err := documentVersion(data)
	if err != nil {
		return nil, corrupt(err, "%s", err)
	}
	if version > identity.SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema_version %d, this version reads at most %d; upgrade the SDK to load it",
			identity.ErrFutureVersion, path, version, identity.SchemaVersion)
	}
	for v := version; v < identity.SchemaVersion; v++ {
		if data, err = migrations[v](data); err != nil {
			return nil, corrupt(err, "migrating schema_version %d to %d: %v", v, v+1, err)
		}
	}

	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil { // checked by documentVersion
		return nil, corrupt(err, "%v", err)
	}
	raw, ok := top["state"]
	if !ok || string(raw) == "null" {
		return nil, corrupt(nil, `no "state" object`)
	}
	s := new(identity.AgentState)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, corrupt(err, "%s", explainDecodeError(raw, err))
	}
	if got := s.Identity.AgentID; got != id {
		if got == "" {
			return nil, corrupt(nil, "identity.agent_id is missing, want %q (the file's name)", id)
		}
		return nil, corrupt(nil, "identity.agent_id is %q, want %q (the file's name)", got, id)
	}
	if err := s.Validate(); err != nil {
		return nil, corrupt(err, "invalid state: %v", err)
	}
	return s, nil
}

// syntaxError returns the error encoding/json reports for data that is not
// one well-formed JSON value, or nil.
func syntaxError(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// describeSyntaxError turns a JSON syntax error into a reason with a line
// and column, and a hint for the non-JSON literals NaN and Infinity.
func describeSyntaxError(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return "invalid JSON: " + err.Error()
	}
	off := int(min(max(se.Offset, 0), int64(len(data))))
	if off >= len(data) && strings.Contains(se.Error(), "unexpected end") {
		return fmt.Sprintf("truncated JSON: input ends after %d bytes", len(data))
	}
	line, col := 1, 1
	bad := max(off-1, 0)
	for _, c := range data[:bad] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	reason := fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
	rest := data[bad:]
	if bad > 0 && data[bad-1] == '-' {
		rest = data[bad-1:]
	}
	for _, lit := range []string{"NaN", "Infinity", "-Infinity"} {
		if bytes.HasPrefix(rest, []byte(lit)) {
			reason += fmt.Sprintf(" (%s is not a JSON number)", lit)
			break
		}
	}
	return reason
}

// documentVersion returns the schema_version of a syntactically valid
// document: 0 when the field is absent.
func documentVersion(data []byte) (int, error) {
	var top map[string]json.RawMessage
	if kind := jsonKindOfRaw(data); kind != "object" || json.Unmarshal(data, &top) != nil {
		return 0, fmt.Errorf("the top level is %s, want an object", kind)
	}
	raw, ok := top["schema_version"]
	if !ok {
		return 0, nil
	}
	var n json.Number
	if kind := jsonKindOfRaw(raw); kind != "number" || json.Unmarshal(raw, &n) != nil {
		return 0, fmt.Errorf("schema_version: want a positive integer, got %s", kind)
	}
	v, err := strconv.Atoi(n.String())
	if err != nil || v < 1 {
		return 0, fmt.Errorf("schema_version: want a positive integer, got %s", n)
	}
	return v, nil
}

// jsonKindOfRaw names the kind of a well-formed JSON value.
func jsonKindOfRaw(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// explainDecodeError returns a readable reason for err, the error of decoding
// the well-formed JSON raw into an [identity.AgentState]: the path of the
// first value that does not fit, e.g. "suffering.active[0].severity: want
// number, got string". It falls back to err's text when it finds no such
// value.
func explainDecodeError(raw []byte, err error) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if reason := explainValue("", reflect.TypeFor[identity.AgentState](), v); reason != "" {
			return reason
		}
	}
	return err.Error()
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// explainValue checks that v, decoded with UseNumber, fits Go type t and
// returns a description of the first mismatch below path, or "".
func explainValue(path string, t reflect.Type, v any) string {
	if v == nil { // null leaves the zero value
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	at := func(format string, args ...any) string {
		p := path
		if p == "" {
			p = "state"
		}
		return p + ": " + fmt.Sprintf(format, args...)
	}
	if t == timeType {
		s, ok := v.(string)
		if !ok {
			return at("want string (an RFC 3339 time), got %s", jsonKind(v))
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return at("want an RFC 3339 time, got %q", s)
		}
		return ""
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "" // decodes itself; nothing to say
	}
	want := func(kind string) string {
		return at("want %s, got %s", kind, jsonKind(v))
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return want("string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return want("boolean")
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return want("number")
		}
		if _, err := strconv.ParseFloat(n.String(), t.Bits()); err != nil {
			return at("number %s is out of range", n)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return want("integer")
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			return at("want an integer in range, got %s", n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return want("integer")
		}
		if _, err := strconv.ParseUint(n.String(), 10, t.Bits()); err != nil {
			return at("want a non-negative integer in range, got %s", n)
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return want("array")
		}
		for i, e := range a {
			if r := explainValue(fmt.Sprintf("%s[%d]", path, i), t.Elem(), e); r != "" {
				return r
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return want("object")
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if r := explainValue(join(path, k), t.Elem(), m[k]); r != "" {
				return r
			}
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return want("object")
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv, ok := lookupKey(m, name)
			if !ok {
				continue
			}
			if r := explainValue(join(path, name), f.Type, fv); r != "" {
				return r
			}
		}
	}
	return ""
}

// lookupKey finds key in m as encoding/json does: an exact match first,
// then a case-insensitive one.
func lookupKey(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonKind names the JSON kind of a value decoded with UseNumber.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number " + v.String()
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
