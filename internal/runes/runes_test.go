package runes

import "testing"

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
