package prompt

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/runes"
)

// writeFlat writes s to b flattened to one line: leading and trailing
// whitespace is dropped and every run of whitespace (newlines included)
// becomes one space. The code points [Clean] removes (controls, bidi
// controls) separate words as whitespace does, so that "a\x07b" reads
// "a b", never "ab". At most maxChars code points are written (maxChars < 0:
// no limit); a cut never leaves a trailing space. Words are copied as
// substrings, not rune by rune.
func writeFlat(b *strings.Builder, s string, maxChars int) {
	if isFlat(s) && (maxChars < 0 || len(s) <= maxChars) {
		b.WriteString(s) // the common case: already one clean line
		return
	}
	n := 0
	space := false // a space is owed before the next word
	i := 0
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if isGap(r) {
			space = n > 0
			i += size
			continue
		}
		need := 1
		if space {
			need = 2
		}
		if maxChars >= 0 && n+need > maxChars {
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		start := i
		for i < len(s) {
			r, size := rune(s[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(s[i:])
			}
			if isGap(r) {
				break
			}
			if maxChars >= 0 && n >= maxChars {
				b.WriteString(s[start:i])
				return
			}
			n++
			i += size
		}
		b.WriteString(s[start:i])
	}
}

// isFlat reports whether s is already flat: no leading, trailing or double
// space, and no other gap ([isGap]: white space, or a code point [Clean]
// removes). ASCII is checked a byte at a time; every other code point is
// decoded and checked, since the unsafe rule's format characters are
// spread over the whole of Unicode (U+0605, U+FEFF, the tags).
func isFlat(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	prevSpace := false
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isGap(r) {
				return false
			}
			prevSpace = false
			i += size
			continue
		}
		switch {
		case c == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case c < ' ' || c == 0x7F:
			return false
		default:
			prevSpace = false
		}
		i++
	}
	return true
}

// isSpace is unicode.IsSpace with an ASCII fast path.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

// flat returns s flattened to one line and cut to maxChars code points
// (maxChars < 0: no limit); see [writeFlat].
func flat(s string, maxChars int) string {
	var b strings.Builder
	b.Grow(len(s))
	writeFlat(&b, s, maxChars)
	return b.String()
}

// isGap reports whether r separates words in flattened text: white space,
// or a code point [Clean] removes.
func isGap(r rune) bool { return isSpace(r) || runes.Unsafe(r) }

// isBlank reports whether s holds nothing but whitespace and code points
// [Clean] removes: nothing a prompt would show.
func isBlank(s string) bool {
	for _, r := range s {
		if !isGap(r) {
			return false
		}
	}
	return true
}

// writeInt writes n in decimal without allocating.
func writeInt(b *strings.Builder, n int64) {
	var buf [24]byte
	b.Write(strconv.AppendInt(buf[:0], n, 10))
}

// formatDuration renders d the way the TIME section does (spec §2): "45s"
// under a minute, "3m 12s" under an hour, and from an hour on in hours and
// minutes, counting hours past a day as the original did: "2h 5m",
// "168h 9m" (never days). Smaller units are truncated, never rounded; a
// negative d renders as "0s".
func formatDuration(d time.Duration) string {
	var b strings.Builder
	writeDuration(&b, d)
	return b.String()
}

func writeDuration(b *strings.Builder, d time.Duration) {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		writeInt(b, s)
		b.WriteByte('s')
	case s < 3600:
		writeInt(b, s/60)
		b.WriteString("m ")
		writeInt(b, s%60)
		b.WriteByte('s')
	default:
		writeInt(b, s/3600)
		b.WriteString("h ")
		writeInt(b, s%3600/60)
		b.WriteByte('m')
	}
}

// prose returns model-written multi-line text (a worldview, a narrative)
// ready for a section body: surrounding whitespace, blank lines and the
// trailing whitespace of each line are removed, so that a blank line in the
// prompt only ever separates sections. Every line break a model may write
// counts: "\n", "\r\n", a lone "\r", "\v", "\f", U+0085 (NEL), U+2028 and
// U+2029 (line and paragraph separators); the result uses "\n" only. The
// result is cut to maxChars code points, without trailing whitespace. It
// allocates only when s has line breaks.
func prose(s string, maxChars int) string {
	s = strings.TrimSpace(s)
	if hasLineBreak(s) {
		var b strings.Builder
		b.Grow(len(s))
		for rest := s; rest != ""; {
			line := rest
			if i := strings.IndexFunc(rest, isLineBreak); i >= 0 {
				_, size := utf8.DecodeRuneInString(rest[i:])
				line, rest = rest[:i], rest[i+size:]
			} else {
				rest = ""
			}
			line = strings.TrimRightFunc(line, unicode.IsSpace)
			if line == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(line)
		}
		s = b.String()
	}
	return strings.TrimRightFunc(runes.Head(s, maxChars), unicode.IsSpace)
}

// hasLineBreak reports whether s holds a rune for which isLineBreak is
// true, as strings.IndexFunc(s, isLineBreak) >= 0 does, without decoding
// the runes of text that cannot hold one: a line break's encoding starts
// with a byte in 0x0A–0x0D, 0xC2 (U+0085) or 0xE2 (U+2028, U+2029), and
// none of those is a continuation byte, so decoding from it decodes what
// decoding from the start would.
func hasLineBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '\n' && c <= '\r' || c == 0xC2 || c == 0xE2 {
			return strings.IndexFunc(s[i:], isLineBreak) >= 0
		}
	}
	return false
}

// isLineBreak reports whether r ends a line: "\n", "\r", "\v", "\f",
// U+0085, U+2028 or U+2029.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// trimText is strings.TrimSpace; named for what the sections use it for.
func trimText(s string) string { return strings.TrimSpace(s) }

// trimNewlines drops leading and trailing line breaks (and trailing
// whitespace) from a custom section's text, so that sections stay separated
// by exactly one blank line.
func trimNewlines(s string) string {
	s = strings.TrimLeft(s, "\r\n")
	return strings.TrimRightFunc(s, unicode.IsSpace)
}
