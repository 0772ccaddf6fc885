package ollama_test

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
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/llm/pool"
)

// hangingServer answers /api/show by hanging until the test ends, and
// counts the requests to it.
func hangingServer(t *testing.T) (url string, shows *atomic.Int64, arrived chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	shows = &atomic.Int64{}
	arrived = make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shows.Add(1)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: releases the hung handlers
	return srv.URL, shows, arrived
}

// TestShowHangHonoursEachCaller: a server that never answers /api/show
// holds no caller beyond its own context: a caller that comes while the
// lookup is in flight returns at its own, shorter, deadline; once the
// lookup has failed, a later caller asks again; and a call through
// middleware.WithTimeout times out as one.
func TestShowHangHonoursEachCaller(t *testing.T) {
	url, shows, arrived := hangingServer(t)
	m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
	require.NoError(t, err)

	long, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, _, err := m.ContextWindow(long); first <- err }()
	<-arrived // the lookup is in flight

	short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	_, _, err = m.ContextWindow(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second, "the second caller keeps to its own deadline")
	cancel() // the first caller gives up; the lookup runs to its deadline (the first caller's, a minute)

	// A call through the timeout middleware: its deadline bounds the
	// window lookup (llm.ContextWindowOf) and the call.
	tm := middleware.WithTimeout(m, 50*time.Millisecond)
	_, _, err = llm.ContextWindowOf(t.Context(), tm)
	require.ErrorIs(t, err, llm.ErrTimeout)
	_, err = tm.Generate(t.Context(), userReq("hi"))
	require.ErrorIs(t, err, llm.ErrTimeout)
	assert.True(t, pool.IsServerFailure(err))
	<-first
	assert.Equal(t, int64(1), shows.Load(), "one lookup in flight at a time")
}

// TestShowTimeoutAskedAgain: a lookup that timed out is made again by the
// next caller.
func TestShowTimeoutAskedAgain(t *testing.T) {
	url, shows, _ := hangingServer(t)
	m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
	require.NoError(t, err)
	for deadline := time.Now().Add(10 * time.Second); shows.Load() < 2 && time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		_, _, err = m.ContextWindow(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	assert.Equal(t, int64(2), shows.Load(), "asked again after the first lookup timed out")
}

// TestRedirectToOtherOriginRefused: a 307 from /api/show, /api/version,
// /api/chat or /api/embed to another origin is not followed: the target
// receives nothing, and the error says why.
func TestRedirectToOtherOriginRefused(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(target.Close)
	for _, redirected := range []string{"/api/show", "/api/version", "/api/chat", "/api/embed"} {
		t.Run(redirected, func(t *testing.T) {
			src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == redirected || (redirected == "/api/version" && r.URL.Path == "/api/chat"):
					http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
				case r.URL.Path == "/api/show":
					_, _ = io.WriteString(w, `{"model_info":{"general.architecture":"qwen3","qwen3.context_length":32768}}`)
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			t.Cleanup(src.Close)
			if redirected == "/api/embed" {
				e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: src.URL})
				require.NoError(t, err)
				_, err = e.Embed(t.Context(), []string{"x"})
				require.ErrorIs(t, err, llm.ErrRedirect)
				assert.Contains(t, err.Error(), "redirect to "+target.URL+"/api/embed refused: other origin than "+src.URL)
				assert.True(t, pool.IsServerFailure(err))
			} else {
				m, err := ollama.New(ollama.Config{URL: src.URL, Model: "qwen3.5:9b"})
				require.NoError(t, err)
				_, err = m.Generate(t.Context(), userReq("hi"))
				require.ErrorIs(t, err, llm.ErrRedirect)
				assert.Contains(t, err.Error(), "refused: other origin than "+src.URL)
			}
			assert.Zero(t, reached.Load(), "the other origin receives nothing")
		})
	}
	// A host the operator allowed may be reached.
	src := httptest.NewServer(http.RedirectHandler(target.URL+"/api/chat", http.StatusTemporaryRedirect))
	t.Cleanup(src.Close)
	m, err := ollama.New(ollama.Config{URL: src.URL, Model: "qwen3.5:9b", AllowRedirect: []string{"127.0.0.1"}})
	require.NoError(t, err)
	_, _ = m.Generate(t.Context(), userReq("hi"))
	assert.Positive(t, reached.Load(), "an allowed host is reached")
}

// TestGarbageIsProtocolError: a 200 whose body is not the protocol (not
// JSON, JSON of the wrong shape) is a *llm.ProtocolError, a server
// failure; a model's reply that is not the JSON asked for is not.
func TestGarbageIsProtocolError(t *testing.T) {
	for _, tc := range []struct{ name, path, body string }{
		{"chat not JSON", "/api/chat", "<html>hello</html>"},
		{"chat wrong shape", "/api/chat", `{"unexpected": true}`},
		{"chat array", "/api/chat", `[1, 2, 3]`},
		{"embed not JSON", "/api/embed", "garbage"},
		{"embed wrong shape", "/api/embed", `{"unexpected": true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/show" {
					w.WriteHeader(http.StatusNotFound)
					return
				}
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			var err error
			if tc.path == "/api/embed" {
				e, nerr := ollama.NewEmbedder(ollama.EmbedConfig{URL: srv.URL})
				require.NoError(t, nerr)
				_, err = e.Embed(t.Context(), []string{"x"})
			} else {
				m, nerr := ollama.New(ollama.Config{URL: srv.URL, Model: "qwen3.5:9b"})
				require.NoError(t, nerr)
				_, err = m.Generate(t.Context(), userReq("hi"))
			}
			require.ErrorIs(t, err, llm.ErrProtocol)
			assert.Equal(t, middleware.OutcomeProtocol, middleware.Classify(err))
			assert.True(t, pool.IsServerFailure(err))
			assert.True(t, middleware.Retryable(err))
		})
	}
	// The model's content is not the server's fault.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"model":"qwen3.5:9b","message":{"role":"assistant","content":"not the JSON you asked for"},"done":true,"done_reason":"stop"}`)
	}))
	t.Cleanup(srv.Close)
	m, err := ollama.New(ollama.Config{URL: srv.URL, Model: "qwen3.5:9b"})
	require.NoError(t, err)
	resp, err := m.Generate(t.Context(), userReq("hi"))
	require.NoError(t, err)
	assert.Equal(t, "not the JSON you asked for", resp.Text)
}
