package llm

import (
	"errors"
	"fmt"
)

// ErrInvalidOutput: the reply did not pass the caller's validation (for
// example it is not JSON, or does not match the requested JSON Schema),
// even after one repair attempt. See [InvalidOutputError] and middleware.WithRepair.
var ErrInvalidOutput = errors.New("llm: reply does not match the requested format")

// InvalidOutputError reports a reply that failed validation. It matches
// [ErrInvalidOutput] with [errors.Is] and unwraps to the validation error,
// so errors.As still finds the validator's own error type.
type InvalidOutputError struct {
	// Err is the validation error of the last reply, verbatim (it typically
	// names a JSON Pointer, e.g. "/content").
	Err error
	// Text is the last reply's text, for the caller to log or report.
	Text string
	// Repaired is true when Text is the reply to the repair follow-up, i.e.
	// the model was given one chance to correct itself and failed again.
	Repaired bool
}

// Error reads "llm: invalid reply: " and the validation error, or "llm:
// invalid reply after one repair: ..." when the repair follow-up failed
// too.
func (e *InvalidOutputError) Error() string {
	if e.Repaired {
		return fmt.Sprintf("llm: invalid reply after one repair: %v", e.Err)
	}
	return fmt.Sprintf("llm: invalid reply: %v", e.Err)
}

// Unwrap returns the validation error.
func (e *InvalidOutputError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInvalidOutput].
func (e *InvalidOutputError) Is(target error) bool { return target == ErrInvalidOutput }
