package runes

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeadTail(t *testing.T) {
	tests := []struct {
		in         string
		n          int
		head, tail string
	}{
		{"", 3, "", ""},
		{"abc", 0, "", ""},
		{"abc", -1, "", ""},
		{"abc", 2, "ab", "bc"},
		{"abc", 3, "abc", "abc"},
		{"abc", 9, "abc", "abc"},
		{"é—ü", 2, "é—", "—ü"},
		{"日本語テキスト", 3, "日本語", "キスト"},
		{"a😀b", 2, "a😀", "😀b"},
		{"\xff\xfeab", 3, "\xff\xfea", "\xfeab"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.head, Head(tt.in, tt.n), "Head(%q, %d)", tt.in, tt.n)
		assert.Equal(t, tt.tail, Tail(tt.in, tt.n), "Tail(%q, %d)", tt.in, tt.n)
	}
}

func FuzzHeadTail(f *testing.F) {
	f.Add("日本語テキスト", 3)
	f.Add("\xff\xfeab", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		h, tl := Head(s, n), Tail(s, n)
		if n >= 0 {
			require.LessOrEqual(t, Count(h), n, "head cut longer than %d", n)
			require.LessOrEqual(t, Count(tl), n, "tail cut longer than %d", n)
		}
		require.True(t, strings.HasPrefix(s, h), "Head(%q, %d) = %q: not a prefix", s, n, h)
		require.True(t, strings.HasSuffix(s, tl), "Tail(%q, %d) = %q: not a suffix", s, n, tl)
	})
}

// FuzzCount checks Count against utf8.RuneCountInString, the definition.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "abc", "abcdefgh", "abcdefghé", "é—ü abcdefghijk", "\xff\xfeabcdefgh", "日本語テキストabcdefgh12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, utf8.RuneCountInString(s), Count(s), "Count(%q)", s)
	})
}

func BenchmarkCount(b *testing.B) {
	s := strings.Repeat("Everything I know I wrote down; everything else is gone. ", 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Count(s)
	}
}
