package strictjson

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrDuplicateKey matches every [*DuplicateKeyError] (errors.Is).
var ErrDuplicateKey = errors.New("duplicate key")

// DuplicateKeyError reports an object that names a key twice.
type DuplicateKeyError struct {
	// Key is the repeated name, with its escapes decoded.
	Key string
	// Pointer is the JSON Pointer (RFC 6901) of the second occurrence,
	// relative to the decoded value, e.g. "/content" or
	// "/new_opinions/0/domain".
	Pointer string
	// Offset is the byte offset in the input at which the second
	// occurrence starts.
	Offset int64
}

// Error returns `duplicate key "KEY" at POINTER`.
func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key %q at %s", e.Key, e.Pointer)
}

// Is reports whether target is [ErrDuplicateKey].
func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

// Unmarshal decodes data, which must hold exactly one JSON value, into v
// with encoding/json/v2 semantics and opts (for example
// json.RejectUnknownMembers(true)). A key named twice in one object is a
// [*DuplicateKeyError]; any other failure is the decoder's error
// (*jsontext.SyntacticError, *json.SemanticError), unchanged.
func Unmarshal(data []byte, v any, opts ...json.Options) error {
	return translate(json.Unmarshal(data, v, opts...))
}

// Check reports the first key named twice in one object of the JSON value
// data, as a [*DuplicateKeyError]. It returns nil when there is none, and
// also when data is not valid JSON: reporting syntax is left to the
// caller's decoder. Invalid UTF-8 in strings does not stop the search.
func Check(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadValue(); err != nil {
		if d := duplicate(err); d != nil {
			return d
		}
	}
	return nil
}

// AllowInvalidUTF8 decodes strings holding invalid UTF-8 (or an unpaired
// surrogate escape) with U+FFFD in place of the bad bytes, as
// encoding/json does, instead of refusing them: the option for text that
// a model wrote.
func AllowInvalidUTF8() json.Options { return jsontext.AllowInvalidUTF8(true) }

// translate turns the decoder's duplicate-name error into a
// *DuplicateKeyError.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if d := duplicate(err); d != nil {
		return d
	}
	return err
}

func duplicate(err error) *DuplicateKeyError {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || !errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return nil
	}
	return &DuplicateKeyError{Key: se.JSONPointer.LastToken(), Pointer: string(se.JSONPointer), Offset: se.ByteOffset}
}
