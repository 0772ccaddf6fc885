package middleware_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/ctxwindow"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

func TestReplyLimits(t *testing.T) {
	assert.Equal(t, int64(32*768*24+1<<20), middleware.EmbedReplyLimit(32, 768))
	assert.Equal(t, int64(8192*24+1<<20), middleware.EmbedReplyLimit(0, 0), "unknown dimensions: 8192; at least one text")
	assert.Equal(t, int64(1000*1024+1<<20), middleware.ChatReplyLimit(1000))
	assert.Equal(t, middleware.ChatReplyLimit(ctxwindow.DefaultMaxWindow), middleware.ChatReplyLimit(0))
}

func TestLimitReplies(t *testing.T) {
	f := llmtest.NewFlood("", 10<<20)
	t.Cleanup(f.Close)
	client := &http.Client{Transport: middleware.LimitReplies(nil, 1<<20)}
	get := func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/x?secret=1", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}

	n, err := get(t.Context())
	require.ErrorIs(t, err, llm.ErrReplyTooLarge, "the default cap")
	assert.Equal(t, 1<<20, n, "exactly the cap is read")
	var tl *llm.ReplyTooLargeError
	require.True(t, errors.As(err, &tl))
	assert.Equal(t, f.URL+"/x", tl.URL, "the query is left out")
	assert.False(t, middleware.Retryable(err), "the same request would get the same reply")

	n, err = get(middleware.WithReplyLimit(t.Context(), 4096))
	require.ErrorIs(t, err, llm.ErrReplyTooLarge, "the context's cap")
	assert.Equal(t, 4096, n)
	assert.Contains(t, err.Error(), "passed 4096 bytes")

	n, err = get(middleware.WithReplyLimit(t.Context(), 20<<20))
	require.NoError(t, err, "a reply under the cap is whole")
	assert.Equal(t, 10<<20, n)
}

// TestLimitRepliesDeadline: the request's deadline covers reading the
// body, not only its headers.
func TestLimitRepliesDeadline(t *testing.T) {
	block := make(chan struct{})
	srv := llmtest.NewFlood("", 0)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(srv.Close)
	defer close(block)
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: middleware.LimitReplies(nil, 1<<20)}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 1)
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err)
	cancel() // the deadline passes while the body is read
	_, err = io.ReadAll(resp.Body)
	require.ErrorIs(t, err, context.Canceled)
}
