package repeat_test

import (
	"fmt"

	"github.com/existence-loop/sdk/internal/repeat"
)

// A goal repeats an earlier one when their word sets share at least
// Threshold of their distinct words, whatever the case and punctuation.
func ExampleSimilarity() {
	same := repeat.Similarity("Write the README!", "write  the readme")
	changed := repeat.Similarity("a b c d e f g h i j", "a b c d e f g h i k")
	added := repeat.Similarity("a b c d e f g h i j", "a b c d e f g h i j k")
	fmt.Printf("%.2f %v\n", same, same >= repeat.Threshold)
	fmt.Printf("%.2f %v\n", changed, changed >= repeat.Threshold)
	fmt.Printf("%.2f %v\n", added, added >= repeat.Threshold)
	// Output:
	// 1.00 true
	// 0.82 false
	// 0.91 true
}
