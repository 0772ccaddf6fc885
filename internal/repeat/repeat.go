package repeat

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The repeat rule's parameters.
const (
	// Window is how many earlier goals a new goal is compared with.
	Window = 10
	// Threshold is the token-set similarity ([Similarity]) at or above
	// which a goal repeats an earlier one.
	Threshold = 0.9
)

// Tokens returns the normalised token set of a goal's objective: the text
// lower-cased, every character that is not a letter or a digit (punctuation,
// symbols, white space) taken as a separator, each remaining word counted
// once. "Write the README!" and "write  the readme" give the same set.
func Tokens(objective string) map[string]struct{} {
	words := strings.FieldsFunc(strings.ToLower(objective), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	set := make(map[string]struct{}, len(words))
	for _, w := range words {
		set[w] = struct{}{}
	}
	return set
}

// Similarity is the token-set similarity of two objectives: the Jaccard
// index |A∩B| / |A∪B| of their [Tokens], from 0 (no word in common) to 1
// (the same words, whatever their case, order, repetition, spacing and
// punctuation). Two objectives without any word are similar (1).
//
// At [Threshold] (0.9), two goals must share at least 9 of every 10
// distinct words: a 10-word goal with one word changed (9/11 ≈ 0.82) is
// not a repeat, one with a word added (10/11 ≈ 0.91) is.
func Similarity(a, b string) float64 {
	return Jaccard(Hashes(a), Hashes(b))
}

// Hashes returns the 64-bit FNV-1a hashes of objective's [Tokens],
// sorted and without duplicates: the same set (up to a hash collision,
// about 2⁻⁶⁴ for a pair of words), without a string or a map per goal.
// Repeat detection runs on every heartbeat over the last goals, so this is
// on the cycle's path, whose cost counts in a process that runs thousands
// of agents. FuzzHashes checks it against Tokens.
func Hashes(objective string) []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	out := make([]uint64, 0, 16)
	h, in := uint64(offset), false
	var enc [utf8.UTFMax]byte
	for _, r := range objective { // invalid UTF-8 gives RuneError: a separator, as in Tokens
		var word bool
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			word = 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
			if word {
				h = (h ^ uint64(r)) * prime
			}
		} else {
			r = unicode.ToLower(r)
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
			if word {
				for _, c := range enc[:utf8.EncodeRune(enc[:], r)] {
					h = (h ^ uint64(c)) * prime
				}
			}
		}
		switch {
		case word:
			in = true
		case in:
			out = append(out, h)
			h, in = offset, false
		}
	}
	if in {
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Jaccard is the Jaccard index of two sorted sets without
// duplicates; two empty sets are similar (1).
func Jaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
