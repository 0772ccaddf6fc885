package existence

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// jaccardSets is the definition that tokenHashes and jaccardSorted
// implement: the Jaccard index of two Tokens sets.
func jaccardSets(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if _, ok := b[w]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// FuzzTokenHashes checks the hashed token sets against Tokens: the same
// number of distinct words, and the same similarity for any two texts.
func FuzzTokenHashes(f *testing.F) {
	for _, c := range [][2]string{
		{"Write the README!", "write  the readme"},
		{"map the workspace", "map the workspace and write it down"},
		{"ÉCRIRE le résumé", "écrire LE RÉSUMÉ"},
		{"İstanbul ΣΊΣΥΦΟΣ straße", "istanbul σίσυφος STRASSE"},
		{"a\xffb c", "a b c"},
		{"", "   ...   "},
		{"日本語テキスト 42", "日本語テキスト"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ha, ta := tokenHashes(a), Tokens(a)
		require.Len(t, ha, len(ta), "tokenHashes(%q) against Tokens %v", a, ta)
		got, want := jaccardSorted(ha, tokenHashes(b)), jaccardSets(ta, Tokens(b))
		require.Equal(t, want, got, "similarity of %q and %q", a, b)
	})
}

func BenchmarkTokens(b *testing.B) {
	const objective = "Read design/index.md and write a one-page map of what exists, with paths"
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Tokens(objective)
		}
	})
	b.Run("hashes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tokenHashes(objective)
		}
	})
}
