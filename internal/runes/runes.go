package runes

import "unicode/utf8"

// Count returns the number of code points in s. Invalid UTF-8 bytes count as
// one code point each, as in [utf8.RuneCountInString]. Runs of ASCII are
// counted eight bytes at a time: prompts are mostly ASCII, and the
// assembler counts every section on every cycle.
func Count(s string) int {
	n := 0
	for len(s) > 0 {
		if len(s) >= 8 {
			w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
				uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
			if w&0x8080808080808080 == 0 {
				n += 8
				s = s[8:]
				continue
			}
		}
		if s[0] < utf8.RuneSelf {
			s = s[1:]
		} else {
			_, size := utf8.DecodeRuneInString(s)
			s = s[size:]
		}
		n++
	}
	return n
}

// Head returns the first n code points of s (all of s when it is shorter).
// n <= 0 gives "".
func Head(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n { // fewer bytes than n: at most n code points
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Tail returns the last n code points of s (all of s when it is shorter).
// n <= 0 gives "".
func Tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	end := len(s)
	for i := 0; i < n && end > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(s[:end])
		end -= size
	}
	return s[end:]
}
