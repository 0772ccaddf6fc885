package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/openai"
	"github.com/existence-loop/sdk/llm/pool"
)

// TestRedirectToOtherOriginRefused: a 307 from /v1/chat/completions,
// /v1/embeddings or the Ollama check's /api/version to another origin is
// not followed: the target receives nothing, and the error says why.
func TestRedirectToOtherOriginRefused(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(target.Close)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(src.Close)

	m, err := openai.New(openai.Config{BaseURL: src.URL + "/v1", Model: "m"})
	require.NoError(t, err)
	_, err = m.Generate(t.Context(), userRequest("hi"))
	require.ErrorIs(t, err, llm.ErrRedirect)
	assert.Contains(t, err.Error(), "redirect to "+target.URL+"/v1/chat/completions refused: other origin than "+src.URL)
	assert.True(t, pool.IsServerFailure(err))
	assert.Empty(t, m.Ollama())

	e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: src.URL + "/v1", Model: "e"})
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"x"})
	require.ErrorIs(t, err, llm.ErrRedirect)
	assert.Contains(t, err.Error(), "refused: other origin")
	assert.Zero(t, reached.Load(), "the other origin receives nothing")

	m, err = openai.New(openai.Config{BaseURL: src.URL + "/v1", Model: "m", AllowRedirect: []string{"127.0.0.1"}})
	require.NoError(t, err)
	_, _ = m.Generate(t.Context(), userRequest("hi"))
	assert.Positive(t, reached.Load(), "an allowed host is reached")
}

// TestGarbageIsProtocolError: a 200 whose body is not the protocol is a
// *llm.ProtocolError, a server failure.
func TestGarbageIsProtocolError(t *testing.T) {
	for _, tc := range []struct{ name, ctype, body string }{
		{"not JSON", "text/html", "<html>hello</html>"},
		{"JSON content type, not JSON", "application/json", "garbage"},
		{"wrong shape", "application/json", `{"unexpected": true}`},
		{"null", "application/json", `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := rawServer(t, 200, http.Header{"Content-Type": {tc.ctype}}, tc.body)
			_, err := m.Generate(t.Context(), userRequest("x"))
			require.ErrorIs(t, err, llm.ErrProtocol)
			assert.Equal(t, middleware.OutcomeProtocol, middleware.Classify(err))
			assert.True(t, pool.IsServerFailure(err))
		})
		t.Run("embed "+tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			e, err := openai.NewEmbedder(openai.EmbedConfig{BaseURL: srv.URL + "/v1", Model: "e"})
			require.NoError(t, err)
			_, err = e.Embed(t.Context(), []string{"x"})
			require.ErrorIs(t, err, llm.ErrProtocol)
			assert.True(t, pool.IsServerFailure(err))
		})
	}
}

// TestOllamaCheckHangHonoursEachCaller: a server whose /api/version hangs
// holds a caller no longer than its own context.
func TestOllamaCheckHangHonoursEachCaller(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m"})
	require.NoError(t, err)
	go func() { _, _, _ = m.ContextWindow(t.Context()) }()
	<-arrived
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = m.ContextWindow(ctx)
	require.NoError(t, err, "the check's failure is not the call's")
	assert.Less(t, time.Since(start), 3*time.Second, "the caller keeps to its own deadline, not the check's 5 s")
}
