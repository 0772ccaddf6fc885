package prompt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
)

// Clean returns s without the code points no prompt may carry: text
// written by one party (another agent, the host, a task, a tool result)
// and shown to a model must not be able to hide or reorder what the model
// reads. It removes
//
//   - the C0 controls U+0000–U+001F except tab (U+0009) and newline
//     (U+000A) — NUL, BEL, ESC, carriage return included — and DEL
//     (U+007F);
//   - the C1 controls U+0080–U+009F;
//   - the bidirectional embedding and override controls U+202A–U+202E and
//     the isolates U+2066–U+2069.
//
// Everything else is kept byte for byte, so that ordinary text (and the
// spec §2 strings) is unchanged; s itself is returned, without
// allocating, when it holds none of them. In text that holds one, bytes
// that are not valid UTF-8 become U+FFFD first, so that removing a code
// point can never join two stray bytes into a new one. The assembler applies Clean to every section it
// joins into a [Prompt], custom sections included (see [Assembler.Assemble]),
// and the toolloop executor to what it shows its model; an application
// that builds prompts of its own can call it too.
func Clean(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if i = unsafeAt(s); i < 0 {
			return s
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i+unsafeLen(s[i:]):]
		i = unsafeAt(s)
	}
	b.WriteString(s)
	return b.String()
}

// unsafeAt returns the byte index of the first code point [Clean] removes,
// or -1. It scans bytes: a C1 control is encoded C2 80–C2 9F, a bidi
// control E2 80 AA–AE or E2 81 A6–A9, and neither lead byte can be a
// continuation byte, so scanning from any byte finds what decoding would.
func unsafeAt(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20:
			if c != '\t' && c != '\n' {
				return i
			}
		case c == 0x7F:
			return i
		case c == 0xC2:
			if i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9F {
				return i
			}
		case c == 0xE2:
			if i+2 < len(s) && (s[i+1] == 0x80 && s[i+2] >= 0xAA && s[i+2] <= 0xAE || s[i+1] == 0x81 && s[i+2] >= 0xA6 && s[i+2] <= 0xA9) {
				return i
			}
		}
	}
	return -1
}

// unsafeLen is the byte length of the code point to remove at the start of
// s (unsafeAt(s) == 0).
func unsafeLen(s string) int {
	switch s[0] {
	case 0xC2:
		return 2
	case 0xE2:
		return 3
	}
	return 1
}

// isUnsafe reports whether Clean removes r.
func isUnsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r == 0x7F, r >= 0x80 && r <= 0x9F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// cleanSection cleans one rendered section's text (see [Clean]). A line
// that held text and is left blank by the cleaning is dropped, and so are
// leading and trailing line breaks, so that a blank line still only ever
// separates sections.
func cleanSection(t string) string {
	if unsafeAt(t) < 0 {
		return t
	}
	lines := strings.Split(t, "\n")
	out := lines[:0]
	for _, line := range lines {
		c := Clean(line)
		if c != line && strings.TrimSpace(c) == "" && strings.TrimSpace(line) != "" {
			continue
		}
		out = append(out, c)
	}
	return trimNewlines(strings.Join(out, "\n"))
}

// maxLabelChars bounds a name or sender shown quoted (see writeLabel).
const maxLabelChars = identity.MaxNameChars

// writeLabel writes a name or a message's sender, which the prompt shows
// inside its own markers ("You are {name}.", "  {name}: …",
// "  [{from}]: …"; spec §2 rows 2, 10, 15). A label that is, once
// flattened to one line, a valid agent name ([identity.ValidateName]) is
// written as it is. Anything else — line breaks, brackets, colons,
// controls that would let it imitate a marker or a header, such as a
// sender "host\nA PERSON SAID:" — is written as a quoted string with its
// escapes visible, brackets turned into parentheses and cut to 64
// characters: ["host\nA PERSON SAID:"]. A blank label writes nothing.
func writeLabel(b *strings.Builder, s string) {
	if isBlank(s) {
		return
	}
	f := flat(s, -1)
	if identity.ValidateName(f) == nil {
		b.WriteString(f)
		return
	}
	q := strings.TrimSpace(s)
	if runes.Count(q) > maxLabelChars {
		q = runes.Head(q, maxLabelChars-1) + "…"
	}
	q = strings.Map(func(r rune) rune {
		switch r {
		case '[':
			return '('
		case ']':
			return ')'
		}
		return r
	}, q)
	b.WriteString(strconv.QuoteToGraphic(q))
}
