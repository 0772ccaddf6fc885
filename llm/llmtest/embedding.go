package llmtest

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedding returns a deterministic unit vector of dim dimensions for
// text, standing in for an embedding model: the same text gives the same
// vector on every machine. It is a bag of words (feature hashing): each
// word, lower-cased letters and digits, adds ±1 to four dimensions chosen
// by an FNV-1a hash of the word, and the sum is normalised. Texts that
// share words have a high cosine similarity, texts with no word in common
// one near 0. A text without words hashes its characters instead. dim
// below 1 gives nil.
func Embedding(text string, dim int) []float32 {
	if dim < 1 {
		return nil
	}
	v := make([]float64, dim)
	add := func(feature string) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(feature))
		x := h.Sum64()
		for k := range 4 {
			bits := x >> (16 * k)
			sign := 1.0
			if bits&0x8000 != 0 {
				sign = -1
			}
			v[int(bits&0x7fff)%dim] += sign
		}
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		add(w)
	}
	if len(words) == 0 {
		for _, r := range text {
			add(string(r))
		}
		if text == "" {
			add("")
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, dim)
	if sum == 0 { // features that cancelled out: any fixed unit vector
		out[0] = 1
		return out
	}
	norm := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x * norm)
	}
	return out
}
