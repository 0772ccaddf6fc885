package hollow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/internal/runes"
)

// maxWarnings caps the warnings kept per agent (and for the directory);
// the rest are counted in one last warning.
const maxWarnings = 200

// notes collects warnings.
type notes struct {
	list    []string
	dropped int
}

func (n *notes) add(format string, args ...any) {
	if len(n.list) >= maxWarnings {
		n.dropped++
		return
	}
	n.list = append(n.list, fmt.Sprintf(format, args...))
}

func (n *notes) result() []string {
	out := n.list
	if n.dropped > 0 {
		out = append(out, fmt.Sprintf("… and %d more warnings", n.dropped))
	}
	return out
}

// decoder carries what every conversion needs: the location of
// "YYYY-MM-DD HH:MM" timestamps, the import instant and the warnings.
type decoder struct {
	loc   *time.Location
	now   time.Time
	notes *notes
}

func (d *decoder) warn(format string, args ...any) { d.notes.add(format, args...) }

// pythonJSON rewrites the number tokens Python's json module writes but
// JSON does not allow (NaN, Infinity, -Infinity) as JSON strings, so that
// encoding/json reads the document and [object.num] can still see them.
// Text inside strings is left alone. Input without such tokens is returned
// unchanged.
func pythonJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			out = append(out, `"NaN"`...)
			i += len("NaN") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			out = append(out, `"Infinity"`...)
			i += len("Infinity") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			out = append(out, `"-Infinity"`...)
			i += len("-Infinity") - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// object is one JSON object read leniently: each field is decoded on its
// own, and a field of the wrong type is skipped with a warning instead of
// failing the whole document.
type object struct {
	fields map[string]json.RawMessage
	where  string // e.g. "identity/scout/suffering.json: active_stressors[3]"
	d      *decoder
}

// parseObject decodes raw as a JSON object (after [pythonJSON]; a UTF-8
// byte order mark is ignored).
func (d *decoder) parseObject(raw []byte, where string) (object, error) {
	var fields map[string]json.RawMessage
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(pythonJSON(raw)))
	if err := dec.Decode(&fields); err != nil {
		return object{}, err
	}
	if fields == nil {
		return object{}, fmt.Errorf("null instead of a JSON object")
	}
	if dec.More() {
		return object{}, fmt.Errorf("unexpected data after the JSON object")
	}
	return object{fields: fields, where: where, d: d}, nil
}

// child decodes raw (a value inside o) as an object.
func (o object) child(raw json.RawMessage, where string) (object, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		o.d.warn("%s: skipped: not a JSON object", where)
		return object{}, false
	}
	return object{fields: fields, where: where, d: o.d}, true
}

// raw returns the field key, or nil when it is absent or null.
func (o object) raw(key string) json.RawMessage {
	r, ok := o.fields[key]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return nil
	}
	return r
}

// has reports whether field key is present and not null.
func (o object) has(key string) bool { return o.raw(key) != nil }

// str returns the string field key, trimmed; "" when absent, null or of
// another type (with a warning).
func (o object) str(key string) string {
	r := o.raw(key)
	if r == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		o.d.warn("%s: %s: want a string, got %s; ignored", o.where, key, kind(r))
		return ""
	}
	return strings.TrimSpace(s)
}

// num returns the number field key and whether it was present. NaN and
// ±Infinity (as Python writes them) and numeric strings are accepted; the
// caller clamps. Another type gives a warning and ok = false.
func (o object) num(key string) (v float64, ok bool) {
	r := o.raw(key)
	if r == nil {
		return 0, false
	}
	text := string(bytes.TrimSpace(r))
	if strings.HasPrefix(text, `"`) {
		var s string
		if json.Unmarshal(r, &s) == nil {
			text = strings.TrimSpace(s)
		}
	}
	switch text {
	case "NaN", "nan":
		return math.NaN(), true
	case "Infinity", "inf":
		return math.Inf(1), true
	case "-Infinity", "-inf":
		return math.Inf(-1), true
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) { // out of range gives ±Inf: clamped by the caller
		o.d.warn("%s: %s: want a number, got %s; ignored", o.where, key, kind(r))
		return 0, false
	}
	return v, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// flag returns the boolean field key (false when absent or not a boolean).
func (o object) flag(key string) bool {
	var b bool
	if r := o.raw(key); r != nil && json.Unmarshal(r, &b) != nil {
		o.d.warn("%s: %s: want true or false, got %s; ignored", o.where, key, kind(r))
	}
	return b
}

// list returns the array field key; nil when absent, null or not an array
// (with a warning).
func (o object) list(key string) []json.RawMessage {
	r := o.raw(key)
	if r == nil {
		return nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(r, &l); err != nil {
		o.d.warn("%s: %s: want a list, got %s; ignored", o.where, key, kind(r))
		return nil
	}
	return l
}

// strList returns the list-of-strings field key, trimmed, without blank
// entries. A single string is taken as a one-element list; entries of
// another type are skipped; both with a warning.
func (o object) strList(key string) []string {
	r := o.raw(key)
	if r == nil {
		return nil
	}
	var one string
	if json.Unmarshal(r, &one) == nil {
		o.d.warn("%s: %s: want a list of strings, got one string; imported as a list of one", o.where, key)
		if one = strings.TrimSpace(one); one != "" {
			return []string{one}
		}
		return nil
	}
	var out []string
	for i, e := range o.list(key) {
		var s string
		if err := json.Unmarshal(e, &s); err != nil {
			o.d.warn("%s: %s[%d]: want a string, got %s; skipped", o.where, key, i, kind(e))
			continue
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// timestamp returns the time field key in UTC. It accepts the original's
// "YYYY-MM-DD HH:MM" (in the decoder's location) and a few neighbours
// (seconds, fractions, "T", a date alone, RFC 3339 with a zone), and unix
// seconds as a number. ok is false when the field is absent, null or
// unreadable (with a warning).
func (o object) timestamp(key string) (t time.Time, ok bool) {
	r := o.raw(key)
	if r == nil {
		return time.Time{}, false
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		if t, ok := parseStamp(s, o.d.loc); ok {
			return t, true
		}
		o.d.warn("%s: %s: unreadable time %q; ignored", o.where, key, clip(s, 40))
		return time.Time{}, false
	}
	if kind(r) != "a number" {
		o.d.warn("%s: %s: want a time, got %s; ignored", o.where, key, kind(r))
		return time.Time{}, false
	}
	if f, isNum := o.num(key); isNum {
		if t, ok := unixTime(f); ok {
			return t, true
		}
		o.d.warn("%s: %s: %v is not a plausible unix time; ignored", o.where, key, f)
	}
	return time.Time{}, false
}

var stampLayouts = []string{
	"2006-01-02 15:04",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05.999999999",
	time.DateOnly,
}

// parseStamp parses a timestamp string: RFC 3339 with its own zone, or one
// of stampLayouts in loc. The result is in UTC.
func parseStamp(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	for _, layout := range stampLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// maxUnix is 9999-12-31T23:59:59Z.
const maxUnix = 253402300799

// unixTime converts unix seconds (a float, as Python's time.time() gives)
// to a UTC time rounded to the microsecond. Non-finite, negative and
// far-future values are refused.
func unixTime(f float64) (time.Time, bool) {
	if math.IsNaN(f) || f < 0 || f > maxUnix {
		return time.Time{}, false
	}
	sec := math.Floor(f)
	usec := math.Round((f - sec) * 1e6)
	return time.Unix(int64(sec), int64(usec)*1000).UTC(), true
}

// kind names the JSON type of r for warnings.
func kind(r json.RawMessage) string {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return "nothing"
	}
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

var newlineRun = regexp.MustCompile(`\s*[\r\n]\s*`)

// oneLine collapses every run of whitespace that contains a line break into
// one space and trims the result. Other runs of spaces are kept.
func oneLine(s string) string {
	return strings.TrimSpace(newlineRun.ReplaceAllString(s, " "))
}

// clip returns s cut to n code points, with "…" when cut, for warnings.
func clip(s string, n int) string {
	if runes.Count(s) <= n {
		return s
	}
	return runes.Head(s, n) + "…"
}
