package storetest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// A store's own tests use the suite's fixtures as well: FullState sets
// every field of an agent's state, so a round trip through a store shows
// any field it loses. (The suite itself runs from a test function:
// storetest.Run(t, newStore).)
func ExampleFullState() {
	ctx := context.Background()
	store := memstore.New()
	want := storetest.FullState("scout")
	if err := store.Save(ctx, want); err != nil {
		log.Fatal(err)
	}
	got, err := store.Load(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Identity.AgentID, got.Identity.Name != "", len(got.Identity.Goals) > 0)
	fmt.Println("over the caps:", len(storetest.OverCapState("scout").Identity.Opinions) > identity.DefaultLimits().Opinions)
	// Output:
	// scout true true
	// over the caps: true
}
