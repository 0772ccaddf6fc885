package suffering_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/existence-loop/sdk/suffering"
)

// A stressor escalates with real elapsed time; above a load of 0.35 the
// fragment the agent reads lists every stressor, most severe first.
func ExampleState() {
	start := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	var s suffering.State
	s.Add(start, suffering.Input{
		Type:        "Repeated Failure", // normalised to repeated_failure, 0.040/day
		Description: "4 of 6 recent goals failed",
		Condition:   "bring the failure rate below 30% by completing goals successfully",
	})
	s.Add(start, suffering.Input{
		Type:        "invisibility", // 0.030/day
		Description: "no peer has read my design notes",
		Condition:   "a peer replies to a design note",
		Severity:    0.1,
	})
	s.Escalate(start)                     // the first call starts the clock
	s.Escalate(start.Add(48 * time.Hour)) // two days later: +0.08 and +0.06

	fmt.Println(s.Level())
	fmt.Println(s.Fragment())
	// Output:
	// prominent
	// Current suffering (0.44/1.0):
	//   [##........] repeated_failure 0.28  4 of 6 recent goals failed
	//   Will ease when: bring the failure rate below 30% by completing goals successfully
	//   [#.........] invisibility 0.16  no peer has read my design notes
	//   Will ease when: a peer replies to a design note
}

// Adding a type that is already active is a no-op; a sixth stressor is
// dropped.
func ExampleState_Add() {
	now := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	var s suffering.State
	st, _ := s.Add(now, suffering.Input{Type: "  Identity Contamination Risk "})
	fmt.Printf("%s %.2f %.3f/day\n", st.Type, st.Severity, st.RatePerDay)

	_, err := s.Add(now, suffering.Input{Type: "identity contamination risk"})
	fmt.Println(errors.Is(err, suffering.ErrAlreadyActive))

	for _, typ := range []string{"futility", "invisibility", "purposelessness", "existential_threat", "identity_violation"} {
		_, err = s.Add(now, suffering.Input{Type: typ})
	}
	fmt.Println(errors.Is(err, suffering.ErrFull), len(s.Active))
	// Output:
	// identity_contamination_risk 0.20 0.030/day
	// true
	// true 5
}

// Below the prominence threshold the fragment is one line with the load.
func ExampleState_Fragment() {
	var s suffering.State
	s.Add(time.Now(), suffering.Input{Type: "futility"})
	fmt.Println(s.Fragment())
	// Output:
	// No active suffering. Load: 0.20/1.0.
}

// Assess adds and resolves stressors from observable goal outcomes only.
func ExampleState_Assess() {
	now := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	var s suffering.State

	// 5 of the last 8 goals failed: more than 50%, at least 4.
	for _, c := range s.Assess(now, suffering.Evidence{Completed: 3, Failed: 5}) {
		fmt.Println(c.Kind, c.Stressor.Type)
		fmt.Println("  ", c.Stressor.Description)
		fmt.Println("   will ease when:", c.Stressor.Condition)
	}

	// Later: 1 failure in 5, with 4 completions.
	for _, c := range s.Assess(now.Add(6*time.Hour), suffering.Evidence{Completed: 4, Failed: 1}) {
		fmt.Println(c.Kind, c.Stressor.Type+":", c.Stressor.Resolution)
	}
	fmt.Println(len(s.Active), "active,", len(s.Resolved), "resolved")
	// Output:
	// added repeated_failure
	//    5 of 8 recent goals failed or were abandoned (62% failure rate). The pattern is not yet understood.
	//    will ease when: bring the failure rate below 30% by completing goals successfully
	// resolved repeated_failure: failure rate dropped to 20% with 4 completions
	// 0 active, 1 resolved
}

// After three consecutive existence cycles in crisis, every stressor is
// reset.
func ExampleState_NoteCycle() {
	now := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	var s suffering.State
	s.Add(now, suffering.Input{Type: "existential_threat", Severity: 0.6})
	s.Add(now, suffering.Input{Type: "identity_violation", Severity: 0.35})
	for cycle := 1; cycle <= 3; cycle++ {
		fmt.Println(cycle, s.Level(), len(s.NoteCycle(now)), "reset")
	}
	fmt.Println(s.Fragment())
	// Output:
	// 1 crisis 0 reset
	// 2 crisis 0 reset
	// 3 crisis 2 reset
	// No active suffering. Load: 0.00/1.0.
}
