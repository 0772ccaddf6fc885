package llm

import (
	"errors"
	"fmt"
)

// ErrReplyTooLarge matches (errors.Is) a [*ReplyTooLargeError].
var ErrReplyTooLarge = errors.New("llm: reply too large")

// ReplyTooLargeError is the failure of a call whose reply body passed its
// cap (see middleware.WithReplyLimit). It matches [ErrReplyTooLarge]. It is not
// middleware.Retryable: the same request would get the same reply.
type ReplyTooLargeError struct {
	// URL is the address the request went to (without its query).
	URL string
	// Limit is the cap in bytes.
	Limit int64
}

// Error reads like "llm: the reply of http://127.0.0.1:11434/api/embed
// passed 1835008 bytes, the most this request can need: the server is
// misbehaving, or is not the server meant".
func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("llm: the reply of %s passed %d bytes, the most this request can need: the server is misbehaving, or is not the server meant", e.URL, e.Limit)
}

// Is reports whether target is [ErrReplyTooLarge].
func (e *ReplyTooLargeError) Is(target error) bool { return target == ErrReplyTooLarge }
