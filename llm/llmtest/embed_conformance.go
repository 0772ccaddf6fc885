package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// EmbedModel is the embedding model the embedder conformance suite's
// stand-in server serves: nomic-embed-text, 768 dimensions.
const EmbedModel = "nomic-embed-text"

// EmbedHarness connects [RunEmbedder] to one [llm.Embedder] adapter.
type EmbedHarness struct {
	// Name names the adapter in test output, e.g. "ollama".
	Name string
	// API is the wire protocol the adapter speaks: "ollama" (/api/embed)
	// or "openai" (/v1/embeddings). The suite writes its injected replies
	// (a wrong number of dimensions, a vector count that does not match)
	// in this protocol.
	API string
	// New returns an embedder of model talking to the server at baseURL
	// (http://127.0.0.1:PORT; an OpenAI-compatible adapter appends "/v1").
	New func(t *testing.T, baseURL, model string) llm.Embedder
}

// embedWatchdog bounds every Embed call of [RunEmbedder].
const embedWatchdog = 10 * time.Second

// RunEmbedder is the conformance suite every [llm.Embedder] adapter
// passes, against llmtest's stand-in server ([NewServer] with
// [EmbedModel]) and injected faults. One subtest each:
//   - Vectors: three texts give three vectors, in order, equal to the
//     stand-in's [Embedding] within 1e-6; Model names the model and
//     Dimensions is 768 after the first call;
//   - Batch: 150 texts, more than one request of any adapter's default
//     batch, give 150 vectors in order;
//   - Empty: no texts, no request, an empty result;
//   - Unicode: texts in several scripts and emoji embed as the stand-in does;
//   - ModelMissing: [llm.ErrModelNotFound], naming the model;
//   - Unreachable: [llm.ErrUnavailable] with a hint, not a context error;
//   - Busy: a server whose only slot is held and whose queue is full
//     answers 503; the error is an [llm.StatusError] 503, retryable;
//   - RetryAfter: a 429 with Retry-After 7 gives RetryAfter 7 s;
//   - Dimensions: a reply whose second vector is shorter gives
//     [llm.ErrDimensions]; so does a reply with fewer vectors than texts;
//   - Cancel: a context cancelled before the call gives an error matching
//     context.Canceled;
//   - Slow: the caller's context ends while the server holds the request;
//     Embed returns at once with the context's error;
//   - Concurrent: 8 goroutines embedding at once all get their own
//     vectors;
//   - Usage: the tokens the server counts reach [middleware.WithEmbedUsage]'s
//     function of the call's context ([middleware.ReportEmbedUsage]);
//   - TooLarge: a server streaming a 300 MB reply ([Flood]) gets the call
//     refused with [llm.ErrReplyTooLarge], allocating under 64 MB and
//     reading little of it.
//
// It never sleeps: latency is a channel the suite controls, and every
// Embed call is bounded by a 10 s watchdog.
func RunEmbedder(t *testing.T, h EmbedHarness) {
	t.Helper()
	require.NotNil(t, h.New, "llmtest.RunEmbedder: EmbedHarness.New is nil")
	require.Contains(t, []string{"ollama", "openai"}, h.API, "EmbedHarness.API")
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h EmbedHarness)
	}{
		{"Vectors", embedVectors},
		{"Batch", embedBatch},
		{"Empty", embedEmpty},
		{"Unicode", embedUnicode},
		{"ModelMissing", embedModelMissing},
		{"Unreachable", embedUnreachable},
		{"Busy", embedBusy},
		{"RetryAfter", embedRetryAfter},
		{"Dimensions", embedDimensions},
		{"Cancel", embedCancel},
		{"Slow", embedSlow},
		{"Concurrent", embedConcurrent},
		{"Usage", embedUsage},
		{"TooLarge", embedTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// standIn starts a stand-in server with the embedding model and returns
// it and its URL.
func standIn(t *testing.T, cfg ServerConfig) (*Server, string) {
	t.Helper()
	cfg.Models = append(cfg.Models, ModelSpec{Name: EmbedModel, Embedding: true})
	s := NewServer(cfg)
	url := s.Start()
	t.Cleanup(s.Close)
	return s, url
}

// embed calls e.Embed, failing the test if it does not return within the
// watchdog.
func embed(t *testing.T, ctx context.Context, e llm.Embedder, texts []string) ([][]float32, error) {
	t.Helper()
	type result struct {
		v   [][]float32
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := e.Embed(ctx, texts)
		done <- result{v, err}
	}()
	timer := time.NewTimer(embedWatchdog)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		t.Fatalf("Embed did not return within %v", embedWatchdog)
		return nil, nil
	}
}

// wantVectors checks vecs against the stand-in's embeddings of texts.
func wantVectors(t *testing.T, texts []string, vecs [][]float32) {
	t.Helper()
	require.Len(t, vecs, len(texts), "one vector per text")
	for i, text := range texts {
		want := Embedding(text, 768)
		require.Len(t, vecs[i], 768, "vector %d", i)
		require.InDeltaSlice(t, want, vecs[i], 1e-6, "vector %d is the embedding of text %d (%q), in order", i, i, text)
	}
}

func embedVectors(t *testing.T, h EmbedHarness) {
	_, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	assert.Equal(t, EmbedModel, e.Model(), "Model names the embedding model")
	assert.Contains(t, []int{0, 768}, e.Dimensions(), "Dimensions is 0 (unknown) or right before the first call")
	texts := []string{"the rate limiter failed at 3AM", "bucket depth was wrong", "map the workspace"}
	vecs, err := embed(t, t.Context(), e, texts)
	require.NoError(t, err)
	wantVectors(t, texts, vecs)
	assert.Equal(t, 768, e.Dimensions(), "Dimensions is learned from the reply")
}

func embedBatch(t *testing.T, h EmbedHarness) {
	s, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d about topic %d", i, i%7)
	}
	vecs, err := embed(t, t.Context(), e, texts)
	require.NoError(t, err)
	wantVectors(t, texts, vecs)
	assert.GreaterOrEqual(t, s.Stats().Requests, 1)
}

func embedEmpty(t *testing.T, h EmbedHarness) {
	s, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	vecs, err := embed(t, t.Context(), e, nil)
	require.NoError(t, err)
	assert.Empty(t, vecs)
	assert.Zero(t, s.Stats().Requests, "no texts, no request")
}

func embedUnicode(t *testing.T, h EmbedHarness) {
	_, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	texts := []string{"naïve café", "日本語のテキスト", "🚀🚀 launch", "\"quoted\" \\ back\nslash"}
	vecs, err := embed(t, t.Context(), e, texts)
	require.NoError(t, err)
	wantVectors(t, texts, vecs)
}

func embedModelMissing(t *testing.T, h EmbedHarness) {
	_, url := standIn(t, ServerConfig{})
	e := h.New(t, url, "no-such-embedder")
	_, err := embed(t, t.Context(), e, []string{"x"})
	require.ErrorIs(t, err, llm.ErrModelNotFound)
	var mnf *llm.ModelNotFoundError
	require.ErrorAs(t, err, &mnf)
	assert.Equal(t, "no-such-embedder", mnf.Model, "the error names the model")
	assert.Contains(t, err.Error(), "no-such-embedder")
}

func embedUnreachable(t *testing.T, h EmbedHarness) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	e := h.New(t, url, EmbedModel)
	_, err = embed(t, t.Context(), e, []string{"anyone there?"})
	require.ErrorIs(t, err, llm.ErrUnavailable)
	var ue *llm.UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.NotEmpty(t, ue.URL)
	assert.NotEmpty(t, ue.Hint)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, middleware.Retryable(err), "an unreachable server is retryable")
}

// heldServer is a stand-in whose requests hold their slot until the test
// releases them.
func heldServer(t *testing.T, slots, queue int) (s *Server, url string, held <-chan struct{}, release func()) {
	t.Helper()
	h := make(chan struct{}, 16)
	rel := make(chan struct{})
	var once sync.Once
	s, url = standIn(t, ServerConfig{Slots: slots, Queue: queue, Latency: time.Hour,
		Sleep: func(ctx context.Context, _ time.Duration) error {
			h <- struct{}{}
			select {
			case <-rel:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
	release = func() { once.Do(func() { close(rel) }) }
	t.Cleanup(release)
	return s, url, h, release
}

func embedBusy(t *testing.T, h EmbedHarness) {
	s, url, held, release := heldServer(t, 1, -1)
	e := h.New(t, url, EmbedModel)
	first := make(chan error, 1)
	go func() {
		_, err := e.Embed(t.Context(), []string{"holds the only slot"})
		first <- err
	}()
	<-held // the first request holds the slot; the queue takes none
	_, err := embed(t, t.Context(), e, []string{"finds the server busy"})
	var se llm.StatusError
	require.ErrorAs(t, err, &se, "a full server is an llm.StatusError")
	assert.Equal(t, http.StatusServiceUnavailable, se.StatusCode)
	assert.True(t, middleware.Retryable(err), "503 is retryable")
	assert.Equal(t, 1, s.Stats().Busy)
	release()
	require.NoError(t, <-first, "the request that held the slot succeeds")
}

// faultServer answers every request with reply, written by the test.
func faultServer(t *testing.T, reply http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(reply)
	t.Cleanup(srv.Close)
	return srv.URL
}

func embedRetryAfter(t *testing.T, h EmbedHarness) {
	url := faultServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":"rate limit exceeded"}`))
	})
	e := h.New(t, url, EmbedModel)
	_, err := embed(t, t.Context(), e, []string{"x"})
	var se llm.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusTooManyRequests, se.StatusCode)
	assert.Equal(t, 7*time.Second, se.RetryAfter, "Retry-After is kept")
	assert.Contains(t, se.Message, "rate limit exceeded", "the server's message is kept")
}

// vectorsReply writes vecs in the harness's protocol.
func vectorsReply(api string, vecs [][]float32) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var body any
		if api == "ollama" {
			body = map[string]any{"model": EmbedModel, "embeddings": vecs}
		} else {
			data := make([]any, len(vecs))
			for i, v := range vecs {
				data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
			}
			body = map[string]any{"object": "list", "model": EmbedModel, "data": data,
				"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}
}

func embedDimensions(t *testing.T, h EmbedHarness) {
	for _, c := range []struct {
		name string
		vecs [][]float32
	}{
		{"short vector", [][]float32{{1, 0, 0}, {1, 0}}},
		{"too few vectors", [][]float32{{1, 0, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := h.New(t, faultServer(t, vectorsReply(h.API, c.vecs)), EmbedModel)
			_, err := embed(t, t.Context(), e, []string{"a", "b"})
			require.ErrorIs(t, err, llm.ErrDimensions)
			var de *llm.DimensionsError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, EmbedModel, de.Model)
		})
	}
}

func embedCancel(t *testing.T, h EmbedHarness) {
	_, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := embed(t, ctx, e, []string{"x"})
	require.ErrorIs(t, err, context.Canceled)
}

func embedSlow(t *testing.T, h EmbedHarness) {
	_, url, held, _ := heldServer(t, 1, 0)
	e := h.New(t, url, EmbedModel)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-held; cancel() }() // the server is slow: give up while it holds the request
	_, err := embed(t, ctx, e, []string{"slow"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded),
		"the error wraps the context's: %v", err)
}

func embedConcurrent(t *testing.T, h EmbedHarness) {
	_, url := standIn(t, ServerConfig{Slots: 4})
	e := h.New(t, url, EmbedModel)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	got := make([][][]float32, 8)
	texts := make([][]string, 8)
	for i := range 8 {
		texts[i] = []string{fmt.Sprintf("goroutine %d first", i), fmt.Sprintf("goroutine %d second %s", i, strings.Repeat("x", i))}
		wg.Go(func() { got[i], errs[i] = e.Embed(t.Context(), texts[i]) })
	}
	wg.Wait()
	for i := range 8 {
		require.NoError(t, errs[i])
		wantVectors(t, texts[i], got[i])
	}
}

func embedUsage(t *testing.T, h EmbedHarness) {
	s, url := standIn(t, ServerConfig{})
	e := h.New(t, url, EmbedModel)
	var tokens atomic.Int64
	ctx := middleware.WithEmbedUsage(t.Context(), func(n int) { tokens.Add(int64(n)) })
	texts := make([]string, 150) // several requests
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	_, err := embed(t, ctx, e, texts)
	require.NoError(t, err)
	assert.Positive(t, tokens.Load())
	assert.Equal(t, int64(s.Stats().EmbedTokens), tokens.Load(), "every request's count, once")
	_, err = embed(t, t.Context(), e, []string{"no report function"})
	require.NoError(t, err)
}

func embedTooLarge(t *testing.T, h EmbedHarness) {
	prefix := `{"model":"m","embeddings":[[`
	if h.API == "openai" {
		prefix = `{"object":"list","data":[{"index":0,"embedding":[`
	}
	f := NewFlood(prefix, 300<<20)
	t.Cleanup(f.Close)
	e := h.New(t, f.URL, EmbedModel)
	var err error
	n := Allocated(func() { _, err = embed(t, t.Context(), e, []string{"hello"}) })
	require.ErrorIs(t, err, llm.ErrReplyTooLarge)
	assert.False(t, middleware.Retryable(err), "the same request would get the same reply")
	assert.Less(t, n, uint64(64<<20), "allocated %d bytes for a 300 MB reply", n)
	assert.Less(t, f.Sent(), int64(100<<20), "the server was cut off")
}
