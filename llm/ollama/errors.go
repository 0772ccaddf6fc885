package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/existence-loop/sdk/internal/retryafter"
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
	status, retryAfter, transportErr, bodyErr := ex.snapshot()
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
			RetryAfter: retryafter.Parse(retryAfter, time.Now()),
		}
	case errors.As(err, &ae):
		msg := ae.Status
		if ae.SigninURL != "" {
			msg = strings.TrimSpace(msg + " (sign in at " + ae.SigninURL + ")")
		}
		return llm.StatusError{Provider: Provider, StatusCode: ae.StatusCode, Message: msg}
	case transportErr != nil || bodyErr != nil:
		return &llm.UnavailableError{Provider: Provider, URL: base.String(), Hint: hintServe, Err: err}
	case status >= 200 && status < 300:
		// The server answered, and what it answered is not the protocol:
		// not JSON, the wrong shape, no final object, an error object in
		// a success.
		return &llm.ProtocolError{Provider: Provider, URL: base.String(), Err: err}
	default:
		return fmt.Errorf("ollama: %s %s: %w", op, model, err)
	}
}

// refusalStatus reports whether an HTTP status may carry a refusal of a
// prompt over the window: 400 (Ollama, llama.cpp), 413 or 500 (a runner's
// error passed on).
func refusalStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusInternalServerError
}

// TruncateSince is the first Ollama release that honours "truncate":
// false on /api/chat, refusing a prompt over the window with HTTP 400
// instead of cutting its beginning.
const TruncateSince = "0.12.6"

// honoursTruncate reports whether an Ollama server of version v (as
// /api/version says, e.g. "0.17.4" or "0.13.0-rc1") honours "truncate":
// false: version [TruncateSince] or later. A version that does not parse
// (a development build's "0.0.0", an empty one) does not.
func honoursTruncate(v string) bool {
	got, ok := semver(v)
	want, _ := semver(TruncateSince)
	return ok && slices.Compare(got, want) >= 0
}

// wholeCounts reports whether an Ollama server of version v counts the
// whole prompt in prompt_eval_count, KV-cache hits included: its Go
// runner, from 0.4.0 until 0.30.0. Before, and in the first releases
// that run llama.cpp's server, a count leaves out the cached prefix.
func wholeCounts(v string) bool {
	got, ok := semver(v)
	return ok && slices.Compare(got, []int{0, 4, 0}) >= 0 && slices.Compare(got, []int{0, 30, 0}) < 0
}

// semver parses "MAJOR.MINOR.PATCH" with an optional "v" before and a
// pre-release or build suffix after; 0.0.0 is not a release.
func semver(v string) ([]int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+ "); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return nil, false
	}
	out := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, out[0]+out[1]+out[2] > 0
}

// isModelNotFound recognises Ollama's answers for a missing model:
// 404 "model 'NAME' not found" and 404 "model \"NAME\" not found, try
// pulling it first". A bare 404 (wrong URL path) is not one.
func isModelNotFound(status int, msg string) bool {
	msg = strings.ToLower(msg)
	return status == http.StatusNotFound && strings.Contains(msg, "model") && strings.Contains(msg, "not found")
}
