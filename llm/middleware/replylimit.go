package middleware

import (
	"context"
	"io"
	"net/http"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
)

// Reply size bounds. A reply an adapter reads from a server is capped in
// proportion to what the request asked for, so that a misbehaving or
// hostile server cannot make the process allocate without bound: the body
// is cut, and the call fails with a [*llm.ReplyTooLargeError], as soon as it
// passes the cap, before any of it is decoded.
const (
	// ReplySlack is added to every proportional cap: room for the reply's
	// envelope (model name, timings, usage, field names), 1 MiB.
	ReplySlack = 1 << 20
	// ReplyBytesPerToken bounds the bytes of reply per generated token:
	// a token of up to 16 characters, each escaped as \uXXXX in JSON,
	// plus a streamed chunk's envelope (an NDJSON line or an SSE event
	// per token), 1 KiB.
	ReplyBytesPerToken = 1 << 10
	// ReplyBytesPerDimension bounds the bytes of one embedding value in
	// JSON: "-1.2345678901234567e-05," is 24 bytes.
	ReplyBytesPerDimension = 24
	// ReplyMaxDimensions is the dimensions assumed for an embedding reply
	// when the model's are not known yet (its first call): 8,192, twice
	// the largest common embedding models'.
	ReplyMaxDimensions = 8192
	// ReplyDefaultTokens is the reply tokens assumed for a chat request
	// that sets no limit (no [llm.Request].MaxTokens and no known window):
	// 32,768, [ctxwindow.DefaultMaxWindow].
	ReplyDefaultTokens = ctxwindow.DefaultMaxWindow
	// SmallReplyLimit caps the replies of metadata endpoints (Ollama's
	// /api/show, a model list), 4 MiB.
	SmallReplyLimit = 4 << 20
)

// ChatReplyLimit returns the cap, in bytes, of the reply to a chat request
// that may generate up to tokens tokens (tokens <= 0: ReplyDefaultTokens):
// tokens × ReplyBytesPerToken + ReplySlack.
func ChatReplyLimit(tokens int) int64 {
	if tokens <= 0 {
		tokens = ReplyDefaultTokens
	}
	return int64(tokens)*ReplyBytesPerToken + ReplySlack
}

// EmbedReplyLimit returns the cap, in bytes, of the reply to an embedding
// request of texts texts of dims dimensions (dims <= 0: unknown, taken as
// ReplyMaxDimensions): texts × dims × ReplyBytesPerDimension + ReplySlack.
func EmbedReplyLimit(texts, dims int) int64 {
	if dims <= 0 {
		dims = ReplyMaxDimensions
	}
	return int64(max(texts, 1))*int64(dims)*ReplyBytesPerDimension + ReplySlack
}

type replyLimitKey struct{}

// WithReplyLimit returns ctx carrying a cap of n bytes (n > 0) for the
// reply bodies of the requests made with it through a [LimitReplies]
// transport. Adapters set it per call from [ChatReplyLimit],
// [EmbedReplyLimit] or [SmallReplyLimit].
func WithReplyLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, replyLimitKey{}, n)
}

// LimitReplies returns a RoundTripper that sends requests with base (nil:
// http.DefaultTransport) and caps every reply body: reading past the cap
// of the request's context ([WithReplyLimit]), else def bytes (def <= 0:
// no cap without one), returns a [*llm.ReplyTooLargeError] and closes the
// body. Bodies stay bound to the request's context, so that its deadline
// covers reading them as well as the headers.
func LimitReplies(base http.RoundTripper, def int64) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &limitTransport{base: base, def: def}
}

type limitTransport struct {
	base http.RoundTripper
	def  int64
}

func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	limit, _ := r.Context().Value(replyLimitKey{}).(int64)
	if limit <= 0 {
		limit = t.def
	}
	if limit > 0 {
		u := *r.URL
		u.RawQuery, u.User = "", nil
		resp.Body = &limitedBody{body: resp.Body, left: limit, err: &llm.ReplyTooLargeError{URL: u.String(), Limit: limit}}
	}
	return resp, nil
}

// limitedBody reads at most left bytes of body; past them, it fails with
// err and closes body (a server streaming forever is cut off at once).
type limitedBody struct {
	body io.ReadCloser
	left int64
	err  *llm.ReplyTooLargeError
	over bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) > b.left {
		b.over = true
		_ = b.body.Close()
		return int(b.left), b.err
	}
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }
