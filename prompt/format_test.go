package prompt

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/runes"
)

// The one-line cutters count characters as Unicode code points (spec §3),
// never bytes. Every case below has more bytes than code points, so a
// byte-counting cutter would return less text (or split a character).
func TestFlatCountsCodePoints(t *testing.T) {
	const smile = "🙂" // 4 bytes, 1 code point
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"two-byte letters", "ééééé", 3, "ééé"},
		{"three-byte letters", "日本語の本", 4, "日本語の"},
		{"emoji", strings.Repeat(smile, 5), 2, smile + smile},
		{"exact fit", "日本", 2, "日本"},
		{"fewer code points than bytes, no cut", "日本", 3, "日本"},
		{"cut inside a word", "héllo wörld", 8, "héllo wö"},
		{"cut at a space leaves none", "日本 語", 3, "日本"},
		{"whitespace flattened, then counted", "é\n\n\t日  🙂 ", 5, "é 日 🙂"},
		{"unicode spaces flattened", "é\u00a0日\u3000本", 5, "é 日 本"},
		{"no limit", "é\n日", -1, "é 日"},
		{"zero", "é", 0, ""},
		// Format characters the unsafe rule removes, even in a line that
		// is otherwise flat already.
		{"a lone format character", "\u0605", 10, ""},
		{"format characters between words", "a\u0605b\ufeffc\U000E0041d", -1, "a b c d"},
		{"a variation selector run", "x\ufe00\ufe01y", -1, "x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flat(tt.in, tt.max)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got), "a cut never splits a character: %q", got)
			if tt.max >= 0 {
				assert.LessOrEqual(t, runes.Count(got), tt.max)
			}
			var b strings.Builder
			b.WriteString("x")
			writeFlat(&b, tt.in, tt.max)
			assert.Equal(t, "x"+tt.want, b.String(), "writeFlat appends what flat returns")
		})
	}
}

func TestProseCountsCodePoints(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"two-byte letters", strings.Repeat("é", 10), 7, strings.Repeat("é", 7)},
		{"lines count their newline", "日本\n\n語の\n本", 5, "日本\n語の"},
		{"emoji", "🙂🙃\n🙂🙃", 4, "🙂🙃\n🙂"},
		{"trailing space of a cut dropped", "日本 語", 3, "日本"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prose(tt.in, tt.max)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

// FuzzFlat checks writeFlat against a plain reference: the words of s
// (strings.Fields) joined by one space, cut to max code points, without a
// trailing space.
func FuzzFlat(f *testing.F) {
	for _, s := range []string{"", " ", "héllo wörld", "日本\n\n語", "🙂 🙃\t🙂", "a\u00a0b\u2028c", "\xffé\xfe", "  x  "} {
		f.Add(s, 3)
		f.Add(s, -1)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < -1 {
			max = -1
		}
		max %= 1 << 16
		// Words are separated by white space and by the code points Clean
		// removes (the one unsafe-character rule: controls, format
		// characters such as U+0605 and the bidi controls, tags, variation
		// selectors).
		want := strings.Join(strings.FieldsFunc(s, func(r rune) bool {
			return unicode.IsSpace(r) || runes.Unsafe(r)
		}), " ")
		if max >= 0 {
			want = strings.TrimRight(runes.Head(want, max), " ")
		}
		require.Equal(t, want, flat(s, max), "flat(%q, %d)", s, max)
	})
}

// TestProseNoBlankLines checks that model-written text cannot open a blank
// line inside a section with any line break a model may write.
func TestProseNoBlankLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"newlines", "a\n\n\nb", "a\nb"},
		{"CRLF", "a\r\n\r\nb\r\n", "a\nb"},
		{"lone CR", "a\r\rb\rc", "a\nb\nc"},
		{"vertical tab and form feed", "a\v\vb\f\fc", "a\nb\nc"},
		{"NEL", "a\u0085\u0085b", "a\nb"},
		{"line and paragraph separators", "a\u2028\u2028b\u2029\u2029c", "a\nb\nc"},
		{"white space only lines", "a\n \t\u00a0\r\n\u3000\nb", "a\nb"},
		{"indentation kept", "a\n  b\n\t c", "a\n  b\n\t c"},
		{"trailing white space of lines", "a \t\nb\u00a0\n", "a\nb"},
		{"one line", "  just one  ", "just one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prose(tt.in, 1000)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "\n\n")
			assert.Equal(t, -1, strings.IndexFunc(got, func(r rune) bool { return r != '\n' && isLineBreak(r) }),
				"only \\n breaks lines: %q", got)
		})
	}
}

// FuzzProse checks the invariants of prose on any input: no blank line, no
// line break but "\n", no trailing white space on a line, at most max code
// points, and valid UTF-8 out of valid UTF-8 in.
func FuzzProse(f *testing.F) {
	for _, s := range []string{"", "a\n\nb", "a\r\rb", "日本\u2028\u2028語", " \n \n ", "x\u0085\fy\v", "\xff\n\n\xfe"} {
		f.Add(s, 5)
		f.Add(s, 600)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1 << 16
		got := prose(s, max)
		if max >= 0 {
			require.LessOrEqual(t, runes.Count(got), max, "prose(%q, %d) = %q: too long", s, max, got)
		}
		if utf8.ValidString(s) {
			require.True(t, utf8.ValidString(got), "prose(%q, %d) = %q: invalid UTF-8", s, max, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if got == "" {
				break
			}
			require.NotEmpty(t, strings.TrimSpace(line), "prose(%q, %d) = %q: blank line", s, max, got)
			require.Equal(t, -1, strings.IndexFunc(line, isLineBreak), "prose(%q, %d) = %q: line break other than \\n", s, max, got)
			require.Equal(t, line, strings.TrimRightFunc(line, unicode.IsSpace), "prose(%q, %d) = %q: trailing white space", s, max, got)
		}
	})
}

// FuzzHasLineBreak checks hasLineBreak against its definition,
// strings.IndexFunc(s, isLineBreak) >= 0, on any bytes.
func FuzzHasLineBreak(f *testing.F) {
	for _, s := range []string{"", "a b", "a\nb", "\r", "a\u0085b", "x\u2028", "\u2029", "\xe2\x80", "\xc2", "é—ü", "\xf0\x9f\xe2\x80\xa8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, strings.IndexFunc(s, isLineBreak) >= 0, hasLineBreak(s), "hasLineBreak(%q)", s)
	})
}
