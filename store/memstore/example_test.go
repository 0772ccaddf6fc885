package memstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/memstore"
)

// A Store keeps states in the process: what is saved is loaded back as a
// copy, and nothing survives the process.
func ExampleStore() {
	ctx := context.Background()
	s := memstore.New()
	st := &identity.AgentState{Identity: identity.New("scout", "Cedar", time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))}
	if err := s.Save(ctx, st); err != nil {
		log.Fatal(err)
	}
	got, err := s.Load(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	ids, _ := s.List(ctx)
	fmt.Println(got.Identity.Name, ids, got != st)
	// Output: Cedar [scout] true
}
