package identity

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/runes"
)

// MaxNameChars is the longest agent name [ValidateName] accepts, in
// characters (code points).
const MaxNameChars = 64

// ErrInvalidName: an agent name is empty, too long, or holds a character
// [ValidateName] does not accept.
var ErrInvalidName = errors.New("identity: invalid agent name")

// ValidateName reports whether name can be an agent's display name: 1 to
// [MaxNameChars] characters of letters, combining marks and digits (any
// script), single spaces and the punctuation - _ . ' ’, starting with a
// letter or digit and ending with one (or its combining mark) ("Cedar", "Agent 00042", "O'Brien",
// "Zoë-2"). A name is shown to other agents inside the prompt's own
// markers ("You are {name}.", "  {name}: …", "  [{name}]: …", spec §2
// rows 2, 10 and 15), so line breaks, tabs, the characters the prompt's
// unsafe-character rule removes (controls, format characters, tags,
// variation selectors used as carriers),
// brackets, colons and quotes, which could imitate those markers or hide
// text, are refused. The error matches [ErrInvalidName] and says which
// rule the name breaks.
func ValidateName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidName, name, why) }
	if name == "" {
		return bad("a name needs at least one letter or digit")
	}
	if !utf8.ValidString(name) {
		return bad("not valid UTF-8")
	}
	n := 0
	prevSpace := false
	for _, r := range name {
		n++
		switch {
		case r == '\n' || r == '\t' || runes.Unsafe(r):
			return bad(fmt.Sprintf("it holds the control or formatting character %U (line breaks, tabs, zero-width, bidirectional and tag characters are not allowed)", r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
			prevSpace = false
		case r == ' ':
			if prevSpace {
				return bad("two spaces in a row")
			}
			prevSpace = true
		case r == '-' || r == '_' || r == '.' || r == '\'' || r == '’':
			prevSpace = false
		default:
			return bad(fmt.Sprintf("it holds %q: a name may hold letters, digits, single spaces and - _ . ' ’ only", r))
		}
	}
	if n > MaxNameChars {
		return bad(fmt.Sprintf("%d characters; the limit is %d", n, MaxNameChars))
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if !unicode.IsLetter(first) && !unicode.IsDigit(first) || !unicode.IsLetter(last) && !unicode.IsDigit(last) && !unicode.IsMark(last) {
		return bad("it must start and end with a letter or digit")
	}
	return nil
}
