package identity_test

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/identity"
)

// The caps of spec §3 and §5 apply on every write: the worldview is cut to
// 600 characters (code points, never bytes), open questions keep the newest
// 12, the narrative its last 800 characters.
func ExampleIdentity() {
	now := time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)
	id := identity.New("scout", "Cedar", now)
	var l identity.Limits // zero: the spec's defaults

	id.SetWorldview(strings.Repeat("世界", 400), l)
	for i := 1; i <= 15; i++ {
		id.AddQuestion(fmt.Sprintf("question %d?", i), l)
	}
	_ = id.StartGoal(identity.Goal{ID: "g1", Objective: "map the workspace", Started: now}, l)
	_, _ = id.EndGoal(identity.Done, "a map of 12 directories", now.Add(time.Hour), l)

	fmt.Println("worldview characters:", utf8.RuneCountInString(id.Worldview))
	fmt.Println("questions:", len(id.Questions), "oldest:", id.Questions[0])
	fmt.Println("narrative:", id.Narrative)
	// Output:
	// worldview characters: 600
	// questions: 12 oldest: question 4?
	// narrative: [2026-11-21] Completed: map the workspace.
}

// State written by older versions or other tools may be over its caps. On
// load it is trimmed, never refused, and each cut is reported.
func ExampleIdentity_Enforce() {
	id := identity.Identity{AgentID: "scout", Worldview: strings.Repeat("w", 700)}
	for i := range 25 {
		id.Opinions = append(id.Opinions, identity.Opinion{Text: fmt.Sprint("opinion ", i)})
	}
	for _, cut := range id.Enforce(identity.Limits{}) {
		fmt.Println(cut)
	}
	fmt.Println("oldest opinion kept:", id.Opinions[0].Text)
	// Output:
	// worldview characters: 700 → 600
	// opinions: 25 → 20
	// oldest opinion kept: opinion 5
}
