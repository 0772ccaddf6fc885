package event_test

import (
	"fmt"
	"time"

	"github.com/existence-loop/sdk/existence/event"
)

// An event prints as one line of the thoughts log.
func ExampleEvent_String() {
	e := event.Event{
		Kind:      event.GoalChosen,
		Time:      time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC),
		AgentID:   "scout",
		Agent:     "Cedar",
		Text:      "map the workspace",
		Reasoning: "nothing is written down yet",
	}
	fmt.Println(e)
	// Output:
	// 12:00:00 Cedar 🎯 map the workspace — why: nothing is written down yet
}
