package repeat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jaccardSets is the definition that Hashes and Jaccard
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

// FuzzHashes checks the hashed token sets against Tokens: the same
// number of distinct words, and the same similarity for any two texts.
func FuzzHashes(f *testing.F) {
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
		ha, ta := Hashes(a), Tokens(a)
		require.Len(t, ha, len(ta), "Hashes(%q) against Tokens %v", a, ta)
		got, want := Jaccard(ha, Hashes(b)), jaccardSets(ta, Tokens(b))
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
			Hashes(objective)
		}
	})
}

func TestSimilarity(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"Write the README!", "write  the readme", 1},
		{"write the readme", "readme: the write, write", 1},
		{"", "  ?! ", 1},
		{"write the readme", "", 0},
		{"a b c d e f g h i j", "a b c d e f g h i k", 9.0 / 11},
		{"a b c d e f g h i j", "a b c d e f g h i j k", 10.0 / 11},
		{"Écrire le résumé", "écrire LE résumé.", 1},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, Similarity(tt.a, tt.b), 1e-12, "%q vs %q", tt.a, tt.b)
	}
}
