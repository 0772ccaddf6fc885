package runes

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r is a code point that text written by one party
// (another agent, the host, a task, a tool result, a memory, a slot) may
// never carry to a model or a screen, because it can hide, reorder or
// smuggle what the reader sees. This is the SDK's one unsafe-character
// rule; prompt.Clean, the slot checks and identity.ValidateName all apply
// it. Unsafe are:
//
//   - the C0 controls U+0000–U+001F except tab (U+0009) and newline
//     (U+000A) — NUL, BEL, ESC, carriage return included — DEL (U+007F)
//     and the C1 controls U+0080–U+009F;
//   - every format character (general category Cf): the zero-width space,
//     non-joiner and joiner U+200B–U+200D, the word joiner U+2060, the
//     byte order mark U+FEFF, the soft hyphen U+00AD, the bidirectional
//     marks U+200E, U+200F and U+061C, the bidirectional embedding,
//     override and isolate controls U+202A–U+202E and U+2066–U+2069, and
//     the others;
//   - the whole tag block U+E0000–U+E007F (tag characters spell out ASCII
//     invisibly, a known carrier of hidden instructions to a model);
//   - the variation selectors U+FE00–U+FE0D and U+E0100–U+E01EF, which
//     change no meaning a model reads and, strung together, carry bytes.
//
// The text and emoji presentation selectors U+FE0E and U+FE0F are not
// unsafe on their own (they follow ordinary emoji, "❤️"); [UnsafeAt] and
// [Strip] refuse or remove one that follows another variation selector,
// so that a run of them cannot carry data either.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7F:
		return false
	case r <= 0x9F:
		return true
	case r < 0xAD:
		return false
	case r >= 0xFE00 && r <= 0xFE0D, r >= 0xE0000 && r <= 0xE007F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// isSelector reports whether r is a variation selector.
func isSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// UnsafeAt returns the byte index in s of the first code point the unsafe
// rule refuses ([Unsafe], or a presentation selector U+FE0E/U+FE0F right
// after another variation selector), or -1 when there is none. Bytes that
// are not valid UTF-8 are not unsafe here. ASCII is checked a byte at a
// time without decoding, so ordinary text costs little.
func UnsafeAt(s string) int {
	afterSelector := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' || c == 0x7F {
				return i
			}
			afterSelector = false
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if Unsafe(r) || afterSelector && isSelector(r) {
			return i
		}
		afterSelector = isSelector(r)
		i += n
	}
	return -1
}

// Strip returns s without the code points [UnsafeAt] finds: every
// [Unsafe] code point, and a presentation selector that would follow
// another variation selector. Everything else is kept byte for byte, and
// s itself is returned, without allocating, when it holds none of them.
// In text that holds one, bytes that are not valid UTF-8 become U+FFFD
// first, so that removing a code point can never join two stray bytes
// into a new one. Strip(Strip(s)) == Strip(s).
func Strip(s string) string {
	i := UnsafeAt(s)
	if i < 0 {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if i = UnsafeAt(s); i < 0 {
			return s
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	afterSelector := isSelector(lastRune(s[:i]))
	for _, r := range s[i:] {
		if Unsafe(r) || afterSelector && isSelector(r) {
			continue
		}
		afterSelector = isSelector(r)
		b.WriteRune(r)
	}
	return b.String()
}

// lastRune returns the last code point of s, or -1 for "".
func lastRune(s string) rune {
	if s == "" {
		return -1
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}
