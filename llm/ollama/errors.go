package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/existence-loop/sdk/llm"
)

// Hints shown in errors, telling the user what to run.
const (
	hintServe = "is Ollama running? start it with `ollama serve`"
	hintPull  = "run `ollama pull %s`"
)

// exchange records what the HTTP layer saw during one Generate call. The
// official client turns HTTP errors into api.StatusError without headers and
// ignores a failed read of the reply body, so the adapter's transport
// records the status, Retry-After and transport/body errors here, reached
// through the request context.
type exchange struct {
	mu           sync.Mutex
	status       int
	retryAfter   string
	transportErr error // RoundTrip failed: no response at all
	bodyErr      error // reading the reply body failed (not io.EOF)
}

type exchangeKey struct{}

func (ex *exchange) snapshot() (status int, retryAfter string, transportErr, bodyErr error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.status, ex.retryAfter, ex.transportErr, ex.bodyErr
}

// incomplete explains why Chat returned without error but without the final
// "done" object.
func (ex *exchange) incomplete() error {
	status, _, transportErr, bodyErr := ex.snapshot()
	switch {
	case transportErr != nil:
		return transportErr
	case status >= http.StatusBadRequest:
		// An error status with an empty body: the client saw no line to
		// turn into an api.StatusError.
		return api.StatusError{StatusCode: status, Status: http.StatusText(status)}
	case bodyErr != nil:
		return fmt.Errorf("reading the reply: %w", bodyErr)
	default:
		return fmt.Errorf("reply ended before the final (done) object: %w", io.ErrUnexpectedEOF)
	}
}

// transport wraps the configured RoundTripper to fill the exchange found in
// the request context. Requests without one pass through untouched.
type transport struct {
	base http.RoundTripper // nil means http.DefaultTransport
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return resp, err
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err != nil {
		ex.transportErr = err
		return resp, err
	}
	ex.status = resp.StatusCode
	ex.retryAfter = resp.Header.Get("Retry-After")
	resp.Body = &body{ReadCloser: resp.Body, ex: ex}
	return resp, nil
}

// body records the first read error other than io.EOF.
type body struct {
	io.ReadCloser
	ex *exchange
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.ex.mu.Lock()
		if b.ex.bodyErr == nil {
			b.ex.bodyErr = err
		}
		b.ex.mu.Unlock()
	}
	return n, err
}

// classify turns an error from the api client into the llm error classes.
func (m *Model) classify(ctx context.Context, model string, ex *exchange, err error) error {
	return classify(ctx, m.base, "chat with", model, ex, err)
}

// classify turns an error from the api client, for a call to base doing op
// ("chat with", "embed with") with model, into the llm error classes.
func classify(ctx context.Context, base *url.URL, op, model string, ex *exchange, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("ollama: %s %s: %w", op, model, err)
		}
		return fmt.Errorf("ollama: %s %s: %w (%w)", op, model, ctxErr, err)
	}
	_, retryAfter, transportErr, bodyErr := ex.snapshot()
	if tl, ok := errors.AsType[*llm.ReplyTooLargeError](errors.Join(err, bodyErr)); ok {
		return fmt.Errorf("ollama: %s %s: %w", op, model, tl)
	}

	var se api.StatusError
	var ae api.AuthorizationError
	switch {
	case errors.As(err, &se):
		msg := se.ErrorMessage
		if msg == "" {
			msg = se.Status
		}
		if isModelNotFound(se.StatusCode, msg) {
			return &llm.ModelNotFoundError{Provider: Provider, Model: model, Hint: fmt.Sprintf(hintPull, model)}
		}
		return llm.StatusError{
			Provider:   Provider,
			StatusCode: se.StatusCode,
			Message:    msg,
			RetryAfter: parseRetryAfter(retryAfter, time.Now()),
		}
	case errors.As(err, &ae):
		msg := ae.Status
		if ae.SigninURL != "" {
			msg = strings.TrimSpace(msg + " (sign in at " + ae.SigninURL + ")")
		}
		return llm.StatusError{Provider: Provider, StatusCode: ae.StatusCode, Message: msg}
	case transportErr != nil || bodyErr != nil:
		return &llm.UnavailableError{Provider: Provider, URL: base.String(), Hint: hintServe, Err: err}
	default:
		return fmt.Errorf("ollama: %s %s: %w", op, model, err)
	}
}

// tooLong recognises Ollama's refusals of a prompt over the window (with
// "truncate": false): "the input length exceeds the context length", and
// llama.cpp's "request (N tokens) exceeds the available context size (W
// tokens)" that current servers pass on.
func tooLong(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "exceeds the context length") || strings.Contains(msg, "exceeds maximum context length") ||
		strings.Contains(msg, "exceeds the available context size")
}

// isModelNotFound recognises Ollama's answers for a missing model:
// 404 "model 'NAME' not found" and 404 "model \"NAME\" not found, try
// pulling it first". A bare 404 (wrong URL path) is not one.
func isModelNotFound(status int, msg string) bool {
	msg = strings.ToLower(msg)
	return status == http.StatusNotFound && strings.Contains(msg, "model") && strings.Contains(msg, "not found")
}

// parseRetryAfter parses a Retry-After header value: delay-seconds or an
// HTTP date (RFC 9110 §10.2.3). Missing, invalid or past values give 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		const maxSecs = int64(1<<63-1) / int64(time.Second)
		if secs > maxSecs {
			secs = maxSecs
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
