package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/existence-loop/sdk/internal/origin"
	"github.com/existence-loop/sdk/internal/runes"
)

// Sentinel errors. Adapters return the typed errors below, which match these
// sentinels with [errors.Is].
var (
	// ErrUnavailable: the server could not be reached (connection refused,
	// DNS failure, connection reset). See [UnavailableError].
	ErrUnavailable = errors.New("llm: server unavailable")
	// ErrModelNotFound: the server does not have the model. See
	// [ModelNotFoundError].
	ErrModelNotFound = errors.New("llm: model not found")
	// ErrTruncated: generation stopped at the token limit (done_reason or
	// finish_reason "length"). See [TruncatedError].
	ErrTruncated = errors.New("llm: reply truncated at the token limit")
	// ErrEmpty: the server answered with no text and no tool calls.
	ErrEmpty = errors.New("llm: empty reply")
	// ErrTimeout: the call exceeded its deadline (see middleware.WithTimeout).
	ErrTimeout = errors.New("llm: call timed out")
)

// StatusError is an HTTP error status from a provider. It is a value type, as
// in ollama/api.
type StatusError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// StatusCode is the HTTP status, e.g. 503.
	StatusCode int
	// Message is the provider's error message, or the response body.
	Message string
	// RetryAfter is the server's Retry-After delay, 0 when absent.
	RetryAfter time.Duration
}

// Error reads like "ollama: HTTP 503: Service Unavailable": the provider,
// the status code, and the server's message (else the status text).
func (e StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, msg)
}

// UnavailableError reports a server that could not be reached. Hint tells the
// user what to run, e.g. "start it with `ollama serve`".
type UnavailableError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// URL is the server's base URL the adapter tried to reach, e.g.
	// "http://127.0.0.1:11434".
	URL string
	// Hint is a short suggestion for the user, e.g. "is Ollama running?
	// start it with `ollama serve`"; it may be empty.
	Hint string
	// Err is the underlying network error (connection refused, DNS
	// failure, connection reset, ...).
	Err error
}

// Error reads like "ollama: cannot reach http://127.0.0.1:11434: ... (is
// Ollama running? start it with `ollama serve`)": the provider, the URL,
// the network error and the Hint.
func (e *UnavailableError) Error() string {
	s := fmt.Sprintf("%s: cannot reach %s: %v", e.Provider, e.URL, e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the underlying network error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ModelNotFoundError reports a model the server does not have. Hint tells the
// user what to run, e.g. "run `ollama pull qwen3.5:9b`".
type ModelNotFoundError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// Model is the model name the request asked for, e.g. "qwen3.5:9b".
	Model string
	// Hint is a short suggestion for the user, e.g. "run `ollama pull
	// qwen3.5:9b`"; it may be empty.
	Hint string
}

// Error names the provider and the model, then the Hint in parentheses:
//
//	ollama: model "qwen3.5:9b" not found (run `ollama pull qwen3.5:9b`)
func (e *ModelNotFoundError) Error() string {
	s := fmt.Sprintf("%s: model %q not found", e.Provider, e.Model)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is reports whether target is [ErrModelNotFound].
func (e *ModelNotFoundError) Is(target error) bool { return target == ErrModelNotFound }

// TruncatedError reports a reply cut off at the token limit. Response holds
// what was generated, which a caller may still try to salvage.
type TruncatedError struct {
	// Response is the partial reply, with DoneReason "length" and the
	// provider's token counts; adapters always set it, but callers should
	// allow for nil.
	Response *Response
}

// Error reads "llm: reply truncated at the token limit after N output
// tokens" (0 when the partial reply reports no count).
func (e *TruncatedError) Error() string {
	n := 0
	if e.Response != nil {
		n = e.Response.OutputTokens
	}
	return fmt.Sprintf("llm: reply truncated at the token limit after %d output tokens", n)
}

// Is reports whether target is [ErrTruncated].
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// ErrRedirect matches (errors.Is) a call an adapter did not send on
// because the server redirected it to another origin (scheme, host and
// port) than the one configured, to a host not allowed: the other host
// received nothing. A pool.Pool counts it as a server failure
// (pool.IsServerFailure). The rule is internal/origin's, shared with
// existence/minds.
var ErrRedirect = origin.ErrRedirect

// ErrProtocol: a server answered with a success status (HTTP 2xx) and a
// reply that cannot be read as the protocol: not JSON, JSON of the wrong
// shape, a stream without its final object. See [ProtocolError].
var ErrProtocol = errors.New("llm: reply breaks the protocol")

// ProtocolError reports a reply that breaks the provider's protocol
// ([ErrProtocol]): the server is unwell or is not the server it claims to
// be, so a pool.Pool counts it as a server failure (pool.IsServerFailure) and
// middleware.WithRetry retries it. A model's reply whose *content* is not the JSON
// asked for is not one: that is [ErrInvalidOutput], the repair turn's
// business.
type ProtocolError struct {
	// Provider names the adapter ("ollama", "openai").
	Provider string
	// URL is the server's base URL.
	URL string
	// Err is what failed: the decoder's error, or what was missing.
	Err error
}

// Error reads like "ollama: http://127.0.0.1:11434 answered a reply that
// breaks the protocol: invalid character 'x' looking for beginning of
// value": what failed is cut to its first 200 characters, without the
// unsafe code points (a reply may be any text).
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s: %s answered a reply that breaks the protocol: %s", e.Provider, e.URL, runes.Strip(runes.Head(strings.ToValidUTF8(fmt.Sprint(e.Err), "\uFFFD"), maxProtocolDetail)))
}

// maxProtocolDetail caps, in characters, what a [ProtocolError] quotes.
const maxProtocolDetail = 200

// Unwrap returns what failed.
func (e *ProtocolError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrProtocol].
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }
