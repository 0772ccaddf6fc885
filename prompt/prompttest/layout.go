package prompttest

import (
	"github.com/existence-loop/sdk/prompt"
)

// Layouts returns every [prompt.Layout], the original first, for tests
// that check a property of the prompt under each.
func Layouts() []prompt.Layout {
	return []prompt.Layout{prompt.LayoutOriginal, prompt.LayoutCache, prompt.LayoutCacheAgent}
}

// CommonPrefix returns how many leading characters (code points) a and b
// share: what a model server's KV cache would reuse of b after a, at the
// granularity of characters rather than tokens.
func CommonPrefix(a, b string) int {
	n := 0
	ra, rb := []rune(a), []rune(b)
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}
