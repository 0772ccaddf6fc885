package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/existence-loop/sdk/internal/retryafter"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/llm"
)

// maxErrorBody caps how much of an error response body is read, and
// maxErrorMessage how many characters of it are kept in an error.
const (
	maxErrorBody    = 64 << 10
	maxErrorMessage = 2000
)

// endpoint is one API endpoint of a server: what error classification
// needs to name it in hints.
type endpoint struct {
	base string       // the base URL, without a trailing "/"
	path string       // the request path after base, e.g. "/chat/completions"
	hc   *http.Client // the client the services send with (clientOptions)
}

// classify turns an error from the client into the llm error classes.
func (m endpoint) classify(ctx context.Context, model string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return fmt.Errorf("openai: %w", err)
		}
		return fmt.Errorf("openai: %w (%v)", cerr, err)
	}
	var he *httpError
	if errors.As(err, &he) {
		msg, code := parseErrorBody(he.body)
		return m.statusError(he.status, he.header, msg, code, model)
	}
	var ae *oai.Error
	if errors.As(err, &ae) {
		return m.apiError(ae, model)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// An error event in the middle of a stream, e.g. llama.cpp's
		// data: {"error": {"code": 500, "message": "...", "type": "server_error"}}.
		msg, code := parseErrorBody(se.Event.Data)
		if status, cerr := strconv.Atoi(code); cerr == nil && status >= 400 && status <= 599 {
			return llm.StatusError{Provider: Provider, StatusCode: status, Message: runes.Head(msg, maxErrorMessage)}
		}
		return fmt.Errorf("openai: error event in stream: %s", runes.Head(msg, maxErrorMessage))
	}
	var ne net.Error
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		// e.g. http.Client.Timeout: a timeout, not an unreachable server.
		return fmt.Errorf("openai: %w", err)
	}
	if unreachable(err) {
		return &llm.UnavailableError{
			Provider: Provider,
			URL:      m.base,
			Hint:     fmt.Sprintf("is the server running at %s?", m.base),
			Err:      err,
		}
	}
	if s := statusFrom(ctx); s != nil && s.Load() >= 200 && s.Load() < 300 && !errors.Is(err, llm.ErrReplyTooLarge) {
		// The server answered, and what it answered is not the
		// protocol: not JSON, the wrong shape.
		return &llm.ProtocolError{Provider: Provider, URL: m.base, Err: err}
	}
	return fmt.Errorf("openai: %w", err)
}

// statusKey carries the *atomic.Int32 in which [catchErrors] records the
// HTTP status of a call's last reply.
type statusKey struct{}

// withStatus returns ctx carrying a fresh status record for one call,
// which [endpoint.classify] reads: a 2xx reply that failed is a
// [*llm.ProtocolError].
func withStatus(ctx context.Context) context.Context {
	return context.WithValue(ctx, statusKey{}, new(atomic.Int32))
}

// statusFrom returns the status record of ctx, or nil.
func statusFrom(ctx context.Context) *atomic.Int32 {
	s, _ := ctx.Value(statusKey{}).(*atomic.Int32)
	return s
}

// unreachable reports a connection-level failure: refused, reset, DNS, or
// the server closing the connection mid-reply.
func unreachable(err error) bool {
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// httpError is an HTTP error status caught by [catchErrors] before the
// client parses the body.
type httpError struct {
	status int
	header http.Header
	body   []byte
}

func (e *httpError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, runes.Head(plainText(e.body), 200))
}

// catchErrors is a client middleware that turns every HTTP error status
// into an [*httpError] holding the body (at most maxErrorBody bytes), and
// records the status of every reply in the call's status record
// ([withStatus]), if any.
//
// Work-around, still needed with openai-go v3.96.0: the client decodes
// the body's "error" member into its own error type and, when that member
// is not an object ({"error": "..."} from LM Studio and Ollama, vLLM's
// {"object": "error", ...}), returns a bare JSON decoding error that has
// lost the status code and the message. Reading the body here keeps both
// for every server shape [parseErrorBody] knows.
func catchErrors(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if s := statusFrom(req.Context()); s != nil && err == nil {
		s.Store(int32(res.StatusCode))
	}
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	defer res.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	if rerr != nil && len(body) == 0 {
		body = []byte(rerr.Error())
	}
	return nil, &httpError{status: res.StatusCode, header: res.Header, body: body}
}

// apiError maps an HTTP error status the client parsed itself (kept for
// errors that did not go through [catchErrors]).
func (m endpoint) apiError(ae *oai.Error, model string) error {
	msg, code := ae.Message, ae.Code
	var header http.Header
	if ae.Response != nil {
		header = ae.Response.Header
	}
	return m.statusError(ae.StatusCode, header, msg, code, model)
}

// statusError maps an HTTP error status, the server's message and its
// error code to the llm error classes.
func (m endpoint) statusError(status int, header http.Header, msg, code, model string) error {
	msg = runes.Head(strings.TrimSpace(msg), maxErrorMessage)
	if ce, ok := contextLengthError(status, msg, code); ok {
		ce.Model = model
		return ce
	}
	if code == "model_not_found" ||
		(status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "model")) {
		return &llm.ModelNotFoundError{
			Provider: Provider,
			Model:    model,
			Hint:     fmt.Sprintf("check the model name; GET %s/models lists the models the server has", m.base),
		}
	}
	if status == http.StatusNotFound {
		msg = strings.TrimSpace(msg + fmt.Sprintf(" (is the base URL right? requests go to %s%s)", m.base, m.path))
	}
	return llm.StatusError{
		Provider:   Provider,
		StatusCode: status,
		Message:    msg,
		RetryAfter: retryafter.FromHeader(header, time.Now()),
	}
}

// contextLengthError recognises a server's refusal of a prompt over its
// context window ([llm.ParseContextRefusal]: OpenAI's
// context_length_exceeded, vLLM's "maximum context length is N tokens",
// llama.cpp's exceed_context_size_error), sent with 400, 413 or 500, with
// the window and the prompt's tokens when the message gives them.
func contextLengthError(status int, msg, code string) (*llm.ContextLengthError, bool) {
	if status != 0 && status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusInternalServerError {
		return nil, false
	}
	window, prompt, ok := llm.ParseContextRefusal(msg, code)
	if !ok {
		return nil, false
	}
	return &llm.ContextLengthError{Provider: Provider, Message: msg, Window: window, Prompt: prompt}, true
}

// parseErrorBody extracts the message and code from an error body in any of
// the shapes OpenAI-compatible servers use:
//
//	{"error": {"message": "...", "type": "...", "code": "..." | 404}}  OpenAI, llama.cpp
//
// llama.cpp's type exceed_context_size_error is returned as the code.
//
//	{"error": "..."}                                                   LM Studio, Ollama
//	{"object": "error", "message": "...", "code": 404}                 vLLM
//	{"detail": "..."}                                                  FastAPI-based servers
//
// Anything else is returned as text.
func parseErrorBody(body []byte) (msg, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return plainText(body), ""
	}
	if len(v.Error) > 0 {
		var inner struct {
			Message json.RawMessage `json:"message"`
			Code    json.RawMessage `json:"code"`
			Type    string          `json:"type"`
		}
		if json.Unmarshal(v.Error, &inner) == nil && len(inner.Message) > 0 {
			if inner.Type == "exceed_context_size_error" {
				// llama.cpp's code is the HTTP status; its type names
				// the error.
				return jsonText(inner.Message), inner.Type
			}
			return jsonText(inner.Message), jsonText(inner.Code)
		}
		if s := jsonText(v.Error); s != "" {
			return s, jsonText(v.Code)
		}
	}
	if len(v.Message) > 0 {
		return jsonText(v.Message), jsonText(v.Code)
	}
	if len(v.Detail) > 0 {
		return jsonText(v.Detail), ""
	}
	return plainText(body), ""
}

// plainText returns body as trimmed, valid UTF-8 text.
func plainText(body []byte) string {
	return string(bytes.ToValidUTF8(bytes.TrimSpace(body), []byte("\uFFFD")))
}

// jsonText renders a JSON value as text: a string unquoted, null as "",
// anything else as compact JSON.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return plainText(b.Bytes())
	}
	return plainText(raw)
}
