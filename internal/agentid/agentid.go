package agentid

import (
	"errors"
	"fmt"
	"regexp"
)

// ErrInvalid: an agent id is empty or not of the form [Validate] accepts.
// identity.ErrInvalidID is this error.
var ErrInvalid = errors.New("identity: invalid agent id")

var pattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Validate reports whether id can name an agent: 1–64 characters of
// lower-case ASCII letters, digits, "_" and "-", starting with a letter or
// digit. Ids become file names and rows, so anything else (separators,
// "..", NUL) is refused with an error matching [ErrInvalid].
func Validate(id string) error {
	if !pattern.MatchString(id) {
		return fmt.Errorf("%w: %q (want 1–64 of a-z 0-9 _ -, not starting with _ or -)", ErrInvalid, id)
	}
	return nil
}
