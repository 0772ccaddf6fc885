// Package runes cuts strings by Unicode code points, never splitting a
// character. Every "characters" limit in the SDK (spec §3: "Characters" means
// Unicode code points, never bytes) goes through it.
package runes

import "unicode/utf8"

// Count returns the number of code points in s. Invalid UTF-8 bytes count as
// one code point each, as in [utf8.RuneCountInString].
func Count(s string) int { return utf8.RuneCountInString(s) }

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
