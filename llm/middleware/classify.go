package middleware

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"

	"github.com/existence-loop/sdk/llm"
)

// Outcome classes returned by [Classify]. They are short, stable strings
// meant for metrics labels, event fields and log lines. An HTTP status
// without a more specific class is reported as "http_" followed by the
// status code, e.g. "http_503", "http_429", "http_400".
const (
	OutcomeOK            = "ok"              // no error
	OutcomeUnavailable   = "unavailable"     // server unreachable: connection refused or reset, DNS failure ([llm.ErrUnavailable])
	OutcomeModelNotFound = "model_not_found" // the server lacks the model ([llm.ErrModelNotFound])
	OutcomeTruncated     = "truncated"       // stopped at the token limit ([llm.ErrTruncated])
	OutcomeEmpty         = "empty"           // no text and no tool calls ([llm.ErrEmpty])
	OutcomeTimeout       = "timeout"         // a deadline fired ([llm.ErrTimeout], context.DeadlineExceeded, a network timeout)
	OutcomeCanceled      = "canceled"        // the caller's context was canceled (context.Canceled)
	OutcomeInvalidOutput = "invalid_output"  // the reply failed validation, even after repair ([llm.ErrInvalidOutput])
	OutcomeContextLength = "context_length"  // the prompt did not fit the context window ([llm.ErrContextLength])
	OutcomeProtocol      = "protocol"        // a 2xx reply that breaks the protocol: not JSON, the wrong shape ([llm.ErrProtocol])
	OutcomeError         = "error"           // anything else
)

// Classify maps an error returned by a [llm.Model] to a short, stable class name:
// one of the Outcome constants, or "http_NNN" for a [llm.StatusError] with status
// NNN. A nil error is "ok". It sees through wrapping ([errors.Is],
// [errors.As]), so errors from [WithRetry], [WithTimeout] and [WithRepair]
// keep the class of their cause. For an error from [Fallback] it classifies
// the last model's error (see [FallbackError]).
//
// When a chain matches several classes, the first of this order wins:
// timeout ([llm.ErrTimeout]), canceled, timeout (any other deadline),
// invalid_output, context_length, model_not_found, truncated, empty, protocol, http_NNN,
// unavailable, timeout (a network timeout), error.
func Classify(err error) string {
	if err == nil {
		return OutcomeOK
	}
	var fe *FallbackError
	if errors.As(err, &fe) && len(fe.Errs) > 0 {
		return Classify(fe.Errs[len(fe.Errs)-1])
	}
	switch {
	case errors.Is(err, llm.ErrTimeout):
		// Checked before context.Canceled: a timeout set by WithTimeout is
		// never the caller's cancellation.
		return OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, llm.ErrInvalidOutput):
		return OutcomeInvalidOutput
	case errors.Is(err, llm.ErrContextLength):
		return OutcomeContextLength
	case errors.Is(err, llm.ErrModelNotFound):
		return OutcomeModelNotFound
	case errors.Is(err, llm.ErrTruncated):
		return OutcomeTruncated
	case errors.Is(err, llm.ErrEmpty):
		return OutcomeEmpty
	case errors.Is(err, llm.ErrProtocol):
		return OutcomeProtocol
	}
	if se, ok := asStatus(err); ok {
		return "http_" + strconv.Itoa(se.StatusCode)
	}
	if errors.Is(err, llm.ErrUnavailable) || isConnError(err) {
		return OutcomeUnavailable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return OutcomeTimeout
	}
	return OutcomeError
}

// Retryable reports whether err is worth retrying, i.e. whether the same
// request can succeed on a later attempt: the server is unreachable
// ([llm.ErrUnavailable], connection refused or reset), an attempt timed out
// ([llm.ErrTimeout] or a network timeout), the server answered a reply that
// breaks the protocol ([llm.ErrProtocol]), or an HTTP 429, 502, 503 or 504.
//
// Everything else is permanent and not retried: HTTP 400, 401, 403, 404 and
// other statuses, a missing model, truncation, an empty reply, a reply that
// fails validation ([llm.ErrInvalidOutput]), and the caller's own cancellation
// (context.Canceled, or a bare context.DeadlineExceeded that is not an
// [llm.ErrTimeout]). Retryable cannot see the caller's context; [WithRetry] also
// stops as soon as that context ends.
func Retryable(err error) bool {
	switch c := Classify(err); c {
	case OutcomeUnavailable, OutcomeProtocol:
		return true
	case OutcomeTimeout:
		if errors.Is(err, llm.ErrTimeout) {
			return true
		}
		// A network timeout (e.g. http.Client.Timeout) is a per-attempt
		// timeout; a bare context.DeadlineExceeded is the caller's deadline.
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() && ne != context.DeadlineExceeded
	case "http_429", "http_502", "http_503", "http_504":
		return true
	default:
		return false
	}
}

// Permanent reports whether an outcome of [Classify] can never succeed by
// retrying the same configuration: the server lacks the model
// ([OutcomeModelNotFound], or "http_404" from servers that say so), or it
// refused the credentials ("http_401", "http_403"). It is stricter than
// "not [Retryable]": a reply that fails validation is not retried by
// [WithRetry] but may succeed on the next cycle. existence.Config.Calls.FailFast
// stops an agent on these.
func Permanent(outcome string) bool {
	switch outcome {
	case OutcomeModelNotFound, "http_401", "http_403", "http_404":
		return true
	}
	return false
}

// asStatus finds a [llm.StatusError] (value or pointer) in err's chain.
func asStatus(err error) (llm.StatusError, bool) {
	var v llm.StatusError
	if errors.As(err, &v) {
		return v, true
	}
	var p *llm.StatusError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return llm.StatusError{}, false
}

// isConnError reports a raw connection failure that an adapter did not wrap
// in an [llm.UnavailableError].
func isConnError(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE)
}
