package prompt

import (
	"strings"
	"unicode/utf8"
)

// decodeFast decodes text, one candidate JSON object, straight into a
// [Response] when the object is the plain, well-formed reply that models
// send nearly every time. It reports false for anything else, and then
// decodeCandidate takes the general path (encoding/json into
// map[string]any, unwrapping, normalisation, the schema validator), which
// decides and names every error. It is a shortcut for issue 9's cycle
// cost, like [fastValid], and it never changes a result.
//
// The invariant, checked by FuzzFastCheck and TestFastDecode, is one way:
// when decodeFast returns a Response, the general path returns an equal
// one. To keep that easy to see, decodeFast accepts only:
//
//   - strict JSON: white space is space, tab, CR or LF; strings hold valid
//     UTF-8 and no byte below 0x20, and their escapes are the two-
//     character ones (\" \\ \/ \b \f \n \r \t), never \u;
//   - the keys of [Schema] and no other, each at most once, and the
//     object ending the text;
//   - "action" a string (any: normalisation makes it "goal"), "content" a
//     string that is not blank, "reasoning" a string or null (or absent);
//   - the optional parts with the types of [Schema], null where
//     normalisation drops or defaults it (step 7 of [ParseResponse]),
//     and an opinion given as a bare string.
//
// Numbers, booleans, unknown keys, wrappers, duplicate keys, \u escapes
// and blank content all take the general path. The strings of the result
// are copies, so the reply text is not kept alive by the agent's identity.
func decodeFast(text string) (*Response, bool) {
	d := fastDecoder{s: text}
	r := &Response{Action: "goal"}
	var seen uint8
	var content string
	ok := d.object(func(key string) bool {
		var bit uint8
		switch key {
		case "action":
			bit = 1 << 0
			_, ok := d.str()
			if !ok {
				return false
			}
		case "content":
			bit = 1 << 1
			s, ok := d.str()
			if !ok {
				return false
			}
			content = s
		case "reasoning":
			bit = 1 << 2
			s, _, ok := d.strOrNull()
			if !ok {
				return false
			}
			r.Reasoning = strings.TrimSpace(s)
		case "worldview_update":
			bit = 1 << 3
			s, null, ok := d.strOrNull()
			if !ok {
				return false
			}
			if !null {
				r.WorldviewUpdate = &s
			}
		case "new_open_questions":
			bit = 1 << 4
			if !listOf(&d, &r.NewOpenQuestions, d.str) {
				return false
			}
		case "new_opinions":
			bit = 1 << 5
			if !listOf(&d, &r.NewOpinions, d.opinion) {
				return false
			}
		case "suffering_assessment":
			bit = 1 << 6
			if !d.assessment(r) {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false // a duplicate key: the general path keeps the last
		}
		seen |= bit
		return true
	})
	if !ok || d.skipSpace() != len(d.s) || seen&(1<<1) == 0 {
		return nil, false
	}
	r.Content = strings.TrimSpace(content)
	if r.Content == "" {
		return nil, false // blank: normalisation falls back to reasoning
	}
	return r, true
}

// fastDecoder reads strict JSON from s at i.
type fastDecoder struct {
	s string
	i int
}

// skipSpace moves past JSON white space and returns the new position.
func (d *fastDecoder) skipSpace() int {
	d.i = skipSpace(d.s, d.i)
	return d.i
}

// byte consumes c after white space.
func (d *fastDecoder) byte(c byte) bool {
	if d.skipSpace() < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// null consumes a null after white space.
func (d *fastDecoder) null() bool {
	if strings.HasPrefix(d.s[d.skipSpace():], "null") {
		d.i += len("null")
		return true
	}
	return false
}

// object reads {"key": value, …}, calling member with each key once the
// position is at its value; member consumes the value.
func (d *fastDecoder) object(member func(key string) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		if d.skipSpace() >= len(d.s) || d.s[d.i] != '"' {
			return false
		}
		key, ok := d.rawKey()
		if !ok || !d.byte(':') || !member(key) {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte('}')
	}
}

// rawKey reads a key string with no escapes, without copying it.
func (d *fastDecoder) rawKey() (string, bool) {
	start := d.i + 1
	for j := start; j < len(d.s); j++ {
		switch c := d.s[j]; {
		case c == '"':
			d.i = j + 1
			return d.s[start:j], true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// list reads null (no entries) or [entry, …], calling entry at each.
func (d *fastDecoder) list(entry func() bool) bool {
	if d.null() {
		return true
	}
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	for {
		if !entry() {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte(']')
	}
}

// listOf reads null (no entries) or a list of entries, each read by read
// and appended to *dst.
func listOf[T any](d *fastDecoder, dst *[]T, read func() (T, bool)) bool {
	return d.list(func() bool {
		v, ok := read()
		*dst = append(*dst, v)
		return ok
	})
}

// strOrNull reads a string, or null (reported, with "").
func (d *fastDecoder) strOrNull() (s string, null, ok bool) {
	if d.null() {
		return "", true, true
	}
	s, ok = d.str()
	return s, false, ok
}

// str reads a string after white space and returns a copy of its value.
func (d *fastDecoder) str() (string, bool) {
	if d.skipSpace() >= len(d.s) || d.s[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	var buf []byte // nil until the first escape
	from := start  // start of the literal run not yet copied into buf
	for j := start; j < len(d.s); j++ {
		c := d.s[j]
		switch {
		case c == '"':
			d.i = j + 1
			if buf == nil {
				return strings.Clone(d.s[start:j]), true
			}
			return string(append(buf, d.s[from:j]...)), true
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(d.s[j:])
			if r == utf8.RuneError && n == 1 {
				return "", false // invalid UTF-8: encoding/json substitutes U+FFFD
			}
			j += n - 1
		case c == '\\':
			if j+1 >= len(d.s) {
				return "", false
			}
			var e byte
			switch d.s[j+1] {
			case '"', '\\', '/':
				e = d.s[j+1]
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			default:
				return "", false // \u and invalid escapes
			}
			buf = append(buf, d.s[from:j]...)
			buf = append(buf, e)
			j++
			from = j + 1
		}
	}
	return "", false
}

// opinion reads an entry of new_opinions: a bare string (an opinion
// without a domain), or {"opinion": string, "domain": string or null}.
func (d *fastDecoder) opinion() (NewOpinion, bool) {
	if d.skipSpace() < len(d.s) && d.s[d.i] == '"' {
		s, ok := d.str()
		return NewOpinion{Opinion: s}, ok
	}
	var o NewOpinion
	ok := d.entry(field{"opinion", &o.Opinion, true}, field{"domain", &o.Domain, false})
	return o, ok
}

// assessment reads suffering_assessment: null (absent), or an object
// with new_stressors and resolved, each null or a list of entries.
func (d *fastDecoder) assessment(r *Response) bool {
	if d.null() {
		return true
	}
	sa := &SufferingAssessment{}
	var seen uint8
	ok := d.object(func(key string) bool {
		var bit uint8
		var ok bool
		switch key {
		case "new_stressors":
			bit = 1
			ok = listOf(d, &sa.NewStressors, d.stressor)
		case "resolved":
			bit = 2
			ok = listOf(d, &sa.Resolved, d.resolution)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	if !ok {
		return false
	}
	r.SufferingAssessment = sa
	return true
}

// stressor reads {"type": string, "description": string or null,
// "condition": string or null}.
func (d *fastDecoder) stressor() (NewStressor, bool) {
	var st NewStressor
	ok := d.entry(field{"type", &st.Type, true}, field{"description", &st.Description, false}, field{"condition", &st.Condition, false})
	return st, ok
}

// resolution reads {"type": string, "reason": string or null}.
func (d *fastDecoder) resolution() (Resolution, bool) {
	var rs Resolution
	ok := d.entry(field{"type", &rs.Type, true}, field{"reason", &rs.Reason, false})
	return rs, ok
}

// field is one string property of a list entry.
type field struct {
	key string
	dst *string
	// required: a string that must be present; otherwise it may be
	// absent or null, which give "" (normalisation, step 7 of
	// [ParseResponse]).
	required bool
}

// entry reads an object whose properties are fields (at most 8), each at
// most once, and no other key.
func (d *fastDecoder) entry(fields ...field) bool {
	var seen uint8
	ok := d.object(func(key string) bool {
		for i, f := range fields {
			if f.key != key {
				continue
			}
			if seen&(1<<i) != 0 {
				return false // a duplicate key
			}
			seen |= 1 << i
			var ok bool
			if f.required {
				*f.dst, ok = d.str()
			} else {
				*f.dst, _, ok = d.strOrNull()
			}
			return ok
		}
		return false // an unknown key
	})
	if !ok {
		return false
	}
	for i, f := range fields {
		if f.required && seen&(1<<i) == 0 {
			return false
		}
	}
	return true
}
