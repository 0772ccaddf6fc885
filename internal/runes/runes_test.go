package runes

import (
	"strings"
	"testing"
	"unicode/utf8"
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
		if got := Head(tt.in, tt.n); got != tt.head {
			t.Errorf("Head(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.head)
		}
		if got := Tail(tt.in, tt.n); got != tt.tail {
			t.Errorf("Tail(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.tail)
		}
	}
}

func FuzzHeadTail(f *testing.F) {
	f.Add("日本語テキスト", 3)
	f.Add("\xff\xfeab", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		h, tl := Head(s, n), Tail(s, n)
		if n >= 0 && Count(h) > n || n >= 0 && Count(tl) > n {
			t.Fatalf("cut longer than %d", n)
		}
		if len(h) > len(s) || s[:len(h)] != h || s[len(s)-len(tl):] != tl {
			t.Fatalf("not a prefix/suffix")
		}
	})
}

// FuzzCount checks Count against utf8.RuneCountInString, the definition.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "abc", "abcdefgh", "abcdefghé", "é—ü abcdefghijk", "\xff\xfeabcdefgh", "日本語テキストabcdefgh12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Count(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("Count(%q) = %d, want %d", s, got, want)
		}
	})
}

func BenchmarkCount(b *testing.B) {
	s := strings.Repeat("Everything I know I wrote down; everything else is gone. ", 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Count(s)
	}
}
