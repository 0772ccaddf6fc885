package existence

import "github.com/existence-loop/sdk/identity"

// Apply is the internal apply, for the external tests (package
// existence_test) that check the spec's field table directly.
var Apply = apply

// Repeats is the internal repeat rule over a goal history, for the external
// tests.
func Repeats(id *identity.Identity, i int) (string, bool) { return repeats(id, i, nil) }

// Unexported rules the external tests check directly.
var (
	GoalEvidence       = goalEvidence
	DefaultMemoryQuery = defaultMemoryQuery
)

const (
	InterruptedByHost = interruptedByHost
	MaxOutcomeChars   = 120 // the cap of a 🏁 line in event.Event.String
)
