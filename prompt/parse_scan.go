package prompt

import (
	"encoding/json"
	"errors"
	"strings"
)

// maxCandidates bounds how many '{' starts ParseResponse tries, so hostile
// input ("{{{{…", thousands of small objects) costs at most a few passes
// over MaxResponseBytes.
const maxCandidates = 16

// maxDepth is the deepest nesting scanObject follows. encoding/json refuses
// more than 10000 levels anyway; stopping early keeps "{{{{…" cheap.
const maxDepth = 10000

const (
	bom        = "\uFEFF"
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	fence      = "```"
)

// responseScanner finds JSON object candidates in raw model output.
type responseScanner struct {
	raw    string
	budget int  // candidates left to try
	slow   bool // always run the schema validator (tests; see fastValid)
}

func newResponseScanner(raw string) *responseScanner {
	return &responseScanner{raw: raw, budget: maxCandidates}
}

// region is a byte range [lo, hi) of the raw input to search. When a soft
// region holds candidates but no valid response, the search goes on to the
// next region; a hard one ends it (so a draft inside a closed <think> block
// is not used when the answer after it is broken).
type region struct {
	lo, hi int
	soft   bool
}

// parse runs the search described in ParseResponse's documentation. The
// error reported is the one from the first region that held a candidate.
func (s *responseScanner) parse() (*Response, error) {
	var first error
	for _, r := range s.regions() {
		resp, found, err := s.search(r)
		if resp != nil {
			return resp, nil
		}
		if !found {
			continue
		}
		if errors.Is(err, ErrDuplicateKey) {
			return nil, err // an ambiguous reply: nothing else in it is tried
		}
		if first == nil {
			first = err
		}
		if !r.soft {
			break
		}
	}
	if first != nil {
		return nil, first
	}
	detail := ""
	if strings.TrimSpace(strings.TrimPrefix(s.raw, bom)) == "" {
		detail = "empty output"
	}
	return nil, &ParseError{Kind: ErrNoJSON, Detail: detail, Offset: -1}
}

// regions returns the parts of the input to search, most likely first: the
// body of a code fence after any think preamble, the text after the
// preamble, and (when a preamble was cut) everything after the BOM.
func (s *responseScanner) regions() []region {
	raw := s.raw
	lo := 0
	if strings.HasPrefix(raw, bom) {
		lo = len(bom)
	}
	lo = skipSpace(raw, lo)
	whole := region{lo: lo, hi: len(raw)}
	body := whole
	rest := raw[lo:]
	switch {
	case strings.HasPrefix(rest, thinkOpen):
		after := lo + len(thinkOpen)
		if j := strings.Index(raw[after:], thinkClose); j >= 0 {
			body.lo = after + j + len(thinkClose)
		} else {
			body.lo = after // unclosed: the object may follow the reasoning
		}
	case strings.HasPrefix(rest, thinkClose):
		// A stray closing tag: the chat template opened the block.
		body.lo = lo + len(thinkClose)
		whole = body
	default:
		// Reasoning whose opening tag was in the prompt, then </think>.
		// Soft: the "</think>" may instead be inside a JSON string.
		if j := strings.Index(rest, thinkClose); j >= 0 {
			body.lo = lo + j + len(thinkClose)
			body.soft = true
		}
	}
	out := make([]region, 0, 3)
	if f, ok := fenceBody(raw, body); ok {
		out = append(out, f)
	}
	out = append(out, body)
	if whole.lo != body.lo {
		out = append(out, whole)
	}
	return out
}

// fenceBody returns the inside of the first Markdown code fence in r: from
// the line after the opening ``` (and its language tag) to the closing ```,
// or to the end of r when the fence is never closed (a cut-off output).
func fenceBody(raw string, r region) (region, bool) {
	text := raw[r.lo:r.hi]
	open := strings.Index(text, fence)
	if open < 0 {
		return region{}, false
	}
	nl := strings.IndexByte(text[open:], '\n')
	if nl < 0 {
		return region{}, false
	}
	start := open + nl + 1
	end := len(text)
	if c := strings.Index(text[start:], fence); c >= 0 {
		end = start + c
	}
	return region{lo: r.lo + start, hi: r.lo + end, soft: true}, true
}

// search tries the candidates of r in order. It returns the first valid
// response, or the error of the longest candidate; found reports whether r
// held any candidate at all.
func (s *responseScanner) search(r region) (resp *Response, found bool, err error) {
	raw := s.raw
	pos := r.lo
	bestLen := -1
	for s.budget > 0 && pos < r.hi {
		j := strings.IndexByte(raw[pos:r.hi], '{')
		if j < 0 {
			break
		}
		i := pos + j
		found = true
		s.budget--

		sc := scanObject(raw, i, r.hi)
		var cerr error
		switch {
		case sc.closed || sc.mismatch:
			resp, cerr = decodeCandidate(raw[i:sc.end], i, s.slow)
		case sc.tooDeep:
			cerr = &ParseError{Kind: ErrSyntax, Detail: "JSON nested too deeply", Offset: sc.end - 1}
		case sc.inString:
			cerr = &ParseError{Kind: ErrSyntax, Detail: "unexpected end of input inside a string", Offset: r.hi}
		default:
			if text, ok := repairTruncated(raw[i:r.hi], sc.stack); ok {
				resp, cerr = decodeCandidate(text, i, s.slow)
			} else {
				_, cerr = decodeCandidate(raw[i:r.hi], i, s.slow)
			}
		}
		if cerr == nil && resp != nil {
			return resp, true, nil
		}
		if errors.Is(cerr, ErrDuplicateKey) {
			return nil, true, cerr
		}
		if n := sc.end - i; n > bestLen {
			bestLen, err = n, cerr
		}
		if sc.closed && !isSyntaxError(cerr) {
			pos = sc.end // a whole JSON object: the next candidate follows it
		} else {
			pos = i + 1 // not JSON: an object may start inside it
		}
	}
	return nil, found, err
}

func isSyntaxError(err error) bool {
	pe, ok := err.(*ParseError)
	return ok && pe.Kind == ErrSyntax
}

// objectScan is the result of scanObject.
type objectScan struct {
	end      int    // index after the last byte scanned (the closing brace, or hi)
	closed   bool   // the object closed at end-1
	mismatch bool   // a '}' or ']' that does not match at end-1
	inString bool   // the text ended inside a string
	tooDeep  bool   // nesting exceeded maxDepth at end-1
	stack    []byte // the closers still open when the text ended
}

// scanObject scans from the '{' at raw[i] to its matching '}', counting
// braces and brackets outside JSON strings (with their escapes). It does not
// validate JSON; json.Unmarshal does that.
func scanObject(raw string, i, hi int) objectScan {
	stack := make([]byte, 0, 8)
	inStr := false
	for j := i; j < hi; j++ {
		c := raw[j]
		if inStr {
			switch c {
			case '\\':
				j++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if len(stack) == maxDepth {
				return objectScan{end: j + 1, tooDeep: true}
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			stack = append(stack, closer)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return objectScan{end: j + 1, mismatch: true}
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return objectScan{end: j + 1, closed: true}
			}
		}
	}
	return objectScan{end: hi, inString: inStr, stack: stack}
}

// repairTruncated closes an object cut off at the end of the text: it drops
// trailing white space and one trailing comma, then appends the open
// closers in reverse. It reports false when the result is not valid JSON
// (the text ends after a key, a colon or inside a literal).
func repairTruncated(text string, open []byte) (string, bool) {
	t := strings.TrimRight(text, " \t\r\n")
	if strings.HasSuffix(t, ",") {
		t = strings.TrimRight(t[:len(t)-1], " \t\r\n")
	}
	var b strings.Builder
	b.Grow(len(t) + len(open))
	b.WriteString(t)
	for k := len(open) - 1; k >= 0; k-- {
		b.WriteByte(open[k])
	}
	out := b.String()
	if !json.Valid([]byte(out)) {
		return "", false
	}
	return out, true
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}
