package slot_test

import (
	"fmt"

	"github.com/existence-loop/sdk/slot"
)

// A board keeps at most its cap of slots: the least important goes first.
func ExamplePut() {
	var board []slot.Slot
	for _, s := range []slot.Slot{
		{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "rain at 15:00", Importance: 0.8},
		{ID: "news", Title: "News", Status: slot.Pending, Importance: 0.3, NextRun: 1800},
		{ID: "backup", Title: "Backup", Status: slot.Failed, Summary: "disk full", Importance: 0.9},
	} {
		var dropped []slot.Slot
		board, dropped = slot.Put(board, s, 2)
		for _, d := range dropped {
			fmt.Println("dropped:", d.ID)
		}
	}
	for _, s := range slot.Sorted(board) {
		fmt.Printf("%s: %s - %s (importance=%.2f)\n", s.Title, s.Status, s.Summary, s.Importance)
	}
	// Output:
	// dropped: news
	// Backup: failed - disk full (importance=0.90)
	// Weather: completed - rain at 15:00 (importance=0.80)
}
