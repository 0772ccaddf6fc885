package agentdef

import (
	"errors"
	"fmt"
	"strconv"
)

// The kinds of [Error]: every error [Load] returns about a definition
// matches exactly one of them with errors.Is.
var (
	// ErrSyntax: the file is not valid YAML.
	ErrSyntax = errors.New("agentdef: not valid YAML")
	// ErrType: a value has the wrong type (a string where a number is
	// expected, a list where a block is).
	ErrType = errors.New("agentdef: wrong type")
	// ErrDuplicateKey: a block names a key twice.
	ErrDuplicateKey = errors.New("agentdef: key named twice")
	// ErrUnknownKey: a block the SDK knows (rag, working_memory,
	// workflow, a step, …) holds a key it does not know, usually a
	// misspelling. Unknown top-level keys are not errors: see [Ignored].
	ErrUnknownKey = errors.New("agentdef: unknown key")
	// ErrInvalid: a value of the right type breaks a rule (an invalid id,
	// a negative max_tokens, an unknown step type, a code step whose
	// action is not registered, …).
	ErrInvalid = errors.New("agentdef: invalid value")
	// ErrTooLarge: a file is larger than [MaxFileBytes].
	ErrTooLarge = errors.New("agentdef: file too large")
	// ErrFile: a file cannot be read: missing, a directory, or a symbolic
	// link leading out of the definitions directory (refused by os.Root).
	ErrFile = errors.New("agentdef: cannot read file")
)

// Error is one problem in a definition: the file (a path under the
// definitions directory, as given to [Load]), the line and column
// (1-based; 0 when the problem is about the file as a whole), the kind
// (one of the Err variables of this package, matched by errors.Is) and
// what is wrong.
type Error struct {
	File   string
	Line   int
	Column int
	Kind   error
	Msg    string
}

// Error returns "FILE:LINE:COLUMN: MSG", leaving out a zero line or
// column.
func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
		if e.Column > 0 {
			s += ":" + strconv.Itoa(e.Column)
		}
	}
	return s + ": " + e.Msg
}

// Unwrap returns the error's kind.
func (e *Error) Unwrap() error { return e.Kind }

func errorf(file string, line, col int, kind error, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Column: col, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Ignored is a top-level key of an agent.yaml that the SDK does not use,
// such as agent_ecology's starting_scrip: it is reported, not an error,
// so that an agent_ecology definition loads unchanged.
type Ignored struct {
	File string // the agent.yaml
	Line int
	Key  string // e.g. "starting_scrip", or "working_memory.include_in_rag"
}

// String returns "FILE:LINE: KEY".
func (i Ignored) String() string { return i.File + ":" + strconv.Itoa(i.Line) + ": " + i.Key }
