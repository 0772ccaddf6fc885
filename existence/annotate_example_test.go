package existence_test

import (
	"fmt"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
)

// The default goal annotator is the original's opinion-conflict rule: an
// opinion whose domain appears in the goal and which reads as a reservation
// ("waste", "avoid", "already", ...) gives the goal a note.
func ExampleOpinionConflict() {
	id := identity.New("builder", "Vault", t0)
	id.AddOpinion(identity.Opinion{Text: "Another caching layer is pointless until something is slow.", Domain: "Caching"}, identity.Limits{})

	fmt.Println(existence.OpinionConflict.Annotate(&id, "build a caching layer for the loader"))
	fmt.Printf("%q\n", existence.OpinionConflict.Annotate(&id, "write the loader's design spec"))
	// Output:
	// Note: Opinion conflict: you believe 'Another caching layer is pointless until something is slow.' but this goal involves caching. Proceed carefully and log any dissonance.
	// ""
}
