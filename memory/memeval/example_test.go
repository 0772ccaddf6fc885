package memeval_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/memory/memeval"
)

// Evaluate recall by words on a dataset of two memories and two
// questions, in the in-process store.
func Example() {
	ds, err := memeval.Load(strings.NewReader(`
{"kind":"memory","agent":"scout","id":"m1","text":"FAILED: the deploy broke on a missing DATABASE_URL","time":"2026-03-02T10:00:00Z"}
{"kind":"memory","agent":"scout","id":"m2","text":"lunch was pasta with the analyst","time":"2026-03-02T12:00:00Z"}
{"kind":"query","agent":"scout","text":"why did the deploy fail?","gold":["m1"],"category":"single-hop"}
{"kind":"query","agent":"scout","text":"what did we eat?","gold":["m2"],"category":"paraphrase"}
`))
	if err != nil {
		log.Fatal(err)
	}
	rep, err := memeval.Run(context.Background(), ds, memeval.Options{Store: memory.NewMemoryStore(), K: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("recall_any@1 %.2f, mrr %.2f\n", rep.All.RecallAny1, rep.All.MRR)
	// The paraphrase shares no word with its answer: with relevance alone
	// weighed, that recall lists every memory, oldest first, and finds
	// it second.
	fmt.Printf("paraphrase recall_any@1 %.2f, @10 %.2f\n", rep.Categories["paraphrase"].RecallAny1, rep.Categories["paraphrase"].RecallAnyK)
	// Output:
	// recall_any@1 0.50, mrr 0.75
	// paraphrase recall_any@1 0.00, @10 1.00
}
