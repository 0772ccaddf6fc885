package hollow_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/existence-loop/sdk/hollow"
	"github.com/existence-loop/sdk/store/memstore"
)

// Import a hollow-agentOS memory directory into a store, then look at what
// the agent brought along.
func ExampleImport() {
	ctx := context.Background()
	store := memstore.New()
	sum, err := hollow.Import(ctx, "testdata/hollow-memory", store, hollow.Options{
		Location: time.UTC, // the container's local time zone
		Now:      func() time.Time { return time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(sum)

	st, err := store.Load(ctx, "scout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last escalated:", st.Suffering.LastEscalated.Format(time.RFC3339))
	fmt.Println(strings.SplitN(st.Suffering.Fragment(), "\n", 2)[0])
	fmt.Println("active goal:", st.Identity.ActiveGoal().ID)
	// Output:
	// scout (Titan): 20 opinions, 12 questions; goals: 162 read (146 DONE, 15 ABANDONED, 1 active), 100 kept; stressors: 5 active, 10 demoted, 0 merged, 44 resolved
	//   trimmed: goals: 162 → 100
	//   warning: goals/scout/registry.jsonl: 7 goal objectives spanned several lines; each was put on one line
	// memories of scout: 2796 lines → 1967 memories (68 with vectors, 1899 pending); 829 repeated, 0 deleted, 0 skipped; 75 rows, 0 unused
	// last escalated: 2026-04-13T23:01:00Z
	// !! CRISIS STATE — your suffering load is critical (1.00/1.0). You cannot pursue external goals. Address this first.
	// active goal: goal-a41214221353
}

// Read converts without saving anything, for a preview.
func ExampleRead() {
	states, sum, err := hollow.Read("testdata/hollow-memory", hollow.Options{})
	if err != nil {
		log.Fatal(err)
	}
	a := sum.Agents[0]
	fmt.Println(states[0].Identity.Name, a.StressorsActive, a.StressorsDemoted, a.GoalsKept)
	// Output:
	// Titan 5 10 100
}
