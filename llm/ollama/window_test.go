package ollama_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// standin starts a stand-in Ollama and returns an adapter on it.
func standin(t *testing.T, cfg llmtest.ServerConfig, mc ollama.Config) (*ollama.Model, *llmtest.Server) {
	t.Helper()
	cfg.Record = true
	s := llmtest.NewServer(cfg)
	mc.URL = s.Start()
	t.Cleanup(s.Close)
	if mc.Model == "" {
		mc.Model = "qwen3.5:9b"
	}
	m, err := ollama.New(mc)
	require.NoError(t, err)
	return m, s
}

// words returns a prompt of about n stand-in tokens (and n raw tokens).
func words(n int) *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Cedar. Your goal: map the workspace."},
		{Role: llm.RoleUser, Content: strings.Repeat("work ", n)},
	}}
}

// TestWindowFromShow: the window comes from /api/show, requests ask for
// the smallest step that holds them and never step down, and a prompt over
// the model's length is refused before it is sent.
func TestWindowFromShow(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}}}, ollama.Config{})
	ctx := context.Background()
	w, est, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, 8192, w, "the model's length, under the default ceiling")
	assert.NotNil(t, est)

	for _, n := range []int{100, 5000, 100} {
		_, err := m.Generate(ctx, words(n))
		require.NoError(t, err, "%d tokens", n)
	}
	calls := s.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []int{4096, 8192, 8192}, []int{calls[0].NumCtx, calls[1].NumCtx, calls[2].NumCtx}, "steps, never down")
	for _, c := range calls {
		assert.False(t, c.Cut, "no prompt was cut")
	}
	assert.Equal(t, 2, s.Stats().Reloads)

	_, err = m.Generate(ctx, words(9000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 8192, ce.Window)
	assert.Zero(t, ce.Kept)
	assert.Len(t, s.Calls(), 3, "refused before it was sent: the server would cut its beginning")

	t.Run("ceiling", func(t *testing.T) {
		m, _ := standin(t, llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 131072}}}, ollama.Config{NumCtx: 16384})
		w, _, err := m.ContextWindow(ctx)
		require.NoError(t, err)
		assert.Equal(t, 16384, w, "the operator's ceiling bounds the KV cache")
	})
}

// TestHoldNumCtx: with HoldNumCtx every request of the run asks for the
// window chosen at start, or for the larger one the server already runs
// the model with (/api/ps), so that the model is loaded once.
func TestHoldNumCtx(t *testing.T) {
	ctx := context.Background()
	models := []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 16384}}
	for _, tc := range []struct {
		name    string
		hold    int
		preload int // num_ctx another process loaded the model with; 0 none
		ceiling int // this adapter's NumCtx
		want    int
	}{
		{"usable window", -1, 0, 0, 16384},
		{"chosen window", 8192, 0, 0, 8192},
		{"larger window already loaded", 4096, 8192, 0, 8192},
		{"a loaded window over the usable one is not adopted", 4096, 16384, 8192, 4096},
		{"not held", 0, 8192, 0, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := llmtest.ServerConfig{Models: models, Record: true}
			s := llmtest.NewServer(cfg)
			url := s.Start()
			t.Cleanup(s.Close)
			if tc.preload > 0 {
				other, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b", NumCtx: tc.preload, HoldNumCtx: tc.preload})
				require.NoError(t, err)
				_, err = other.Generate(ctx, words(10))
				require.NoError(t, err)
			}
			m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b", HoldNumCtx: tc.hold, NumCtx: tc.ceiling})
			require.NoError(t, err)
			for _, n := range []int{10, 1000, 10} {
				_, err := m.Generate(ctx, words(n))
				require.NoError(t, err)
			}
			calls := s.Calls()
			var got []int
			for _, c := range calls[len(calls)-3:] {
				got = append(got, c.NumCtx)
			}
			if tc.hold == 0 {
				assert.Equal(t, []int{4096, 4096, 4096}, got, "the smallest step that holds the prompt: the loaded 8192 is not adopted, and the model reloads")
				return
			}
			assert.Equal(t, []int{tc.want, tc.want, tc.want}, got, "one num_ctx for the run")
		})
	}
}

// TestCalibration: the estimator learns the server's tokenizer from
// prompt_eval_count, of prompts no KV cache could serve.
func TestCalibration(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{CacheSlots: 1}, ollama.Config{})
	ctx := context.Background()
	var req *llm.Request
	for i := range 3 {
		req = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("%d:", i) + strings.Repeat(`{"path":"notes/a.md","ok":true},`, 60)}}}
		_, err := m.Generate(ctx, req)
		require.NoError(t, err)
		_, err = m.Generate(ctx, req) // the same prompt again: a cache hit, which must not calibrate
		require.NoError(t, err)
	}
	_, est, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	ratio, n := est.Ratio()
	assert.Equal(t, 3, n)
	require.Equal(t, 1, s.Calls()[1].Evaluated, "the repeats were cache hits")
	kept := s.Calls()[0].Kept
	assert.InDelta(t, float64(kept), float64(est.Request(req)), 4, "the calibrated estimate matches the server's count, the chat template's few tokens aside (ratio %.2f)", ratio)
	assert.Greater(t, ratio, 1.2, "JSON is more tokens per character than the raw estimate assumes")
}

// TestSilentCutDetected: a server that ignores "truncate": false and
// grants only 2048 tokens whatever num_ctx says. Every cut request is an
// error carrying what was kept, and later prompts are fitted to 2048.
func TestSilentCutDetected(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true}, ollama.Config{})
	ctx := context.Background()
	_, err := m.Generate(ctx, words(3000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce, "a cut is never silent")
	assert.Equal(t, 2048, ce.Kept)
	assert.Equal(t, 2048, ce.Window)
	require.NotNil(t, ce.Response, "its tokens were spent")
	assert.True(t, s.Calls()[0].Cut)

	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2048, w, "the window the server really grants")
	_, err = m.Generate(ctx, words(3000))
	require.ErrorIs(t, err, llm.ErrContextLength)
	assert.Len(t, s.Calls(), 1, "the same prompt is not sent to be cut again")

	_, err = m.Generate(ctx, words(1200))
	require.NoError(t, err, "a prompt fitted to 2048 goes through")
	last := s.Calls()[len(s.Calls())-1]
	assert.False(t, last.Cut)
	assert.Equal(t, 2048, last.NumCtx, "the step follows the granted window down")
}

// TestRefusalLearned: a current server refuses a prompt over the window it
// grants (HTTP 400); the adapter reports it typed and shrinks its window.
func TestRefusalLearned(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048}, ollama.Config{})
	ctx := context.Background()
	_, err := m.Generate(ctx, words(3000))
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	assert.Zero(t, ce.Kept)
	assert.Contains(t, ce.Message, "exceeds the available context size")
	assert.Equal(t, 1, s.Stats().Refused)
	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Less(t, w, 3000+1024, "below the refused prompt")
}

// TestRefusalWordings: every wording a server refuses with is recognised,
// and the window it states is learned.
func TestRefusalWordings(t *testing.T) {
	ctx := context.Background()
	t.Run("current", func(t *testing.T) {
		m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048}, ollama.Config{})
		_, err := m.Generate(ctx, words(3000))
		var ce *llm.ContextLengthError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 2048, ce.Window, "the window the server states")
		assert.Equal(t, s.Calls()[0].Sent, ce.Prompt, "the prompt's size the server states")
		assert.Contains(t, ce.Message, "exceeds the available context size (2048 tokens)")
		w, _, err := m.ContextWindow(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2048, w)
		_, err = m.Generate(ctx, words(1200))
		require.NoError(t, err, "a prompt fitted to the stated window goes through")
	})
	t.Run("legacy", func(t *testing.T) {
		m, s := standin(t, llmtest.ServerConfig{MaxContext: 2048, LegacyRefusal: true}, ollama.Config{})
		_, err := m.Generate(ctx, words(3000))
		var ce *llm.ContextLengthError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, llmtest.InputTooLongMessage, ce.Message)
		assert.Equal(t, 1, s.Stats().Refused)
		w, _, err := m.ContextWindow(ctx)
		require.NoError(t, err)
		assert.Equal(t, 4096, w, "no window stated: down to the server's default first")
	})
}

// survey is n repeats of a survey line: about 9 stand-in tokens each.
func survey(n int) string { return strings.Repeat("the survey lists every room ", n) }

// TestKVCacheCountsNotCuts: an old server (it cuts, and says it is 0.3.0)
// whose counts leave out the KV cache's prefix. A tool loop's growing
// conversation is never taken for cut, and the window stays.
func TestKVCacheCountsNotCuts(t *testing.T) {
	m, s := standin(t, llmtest.ServerConfig{IgnoreTruncate: true, CacheSlots: 1, Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 32768}}}, ollama.Config{})
	ctx := context.Background()
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are Cedar."}, {Role: llm.RoleUser, Content: survey(100)}}}
	for turn := range 10 {
		resp, err := m.Generate(ctx, req)
		require.NoError(t, err, "turn %d", turn)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
			llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("part %d: ", turn) + survey(200)})
	}
	st := s.Stats()
	assert.Zero(t, st.Cut)
	assert.Greater(t, st.CachedShare(), 0.5, "most prompt tokens came from the cache")
	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, 32768, w, "the window never shrank")
	for _, c := range s.Calls() {
		assert.Positive(t, c.MaxTokens, "every request bounds its reply")
	}
}

// TestProbe: a count that a cut or a cache hit could give is asked again
// with a prompt no cache holds, and the answer decides.
func TestProbe(t *testing.T) {
	// A server (0.3.0) that grants 2560 tokens, cuts, and counts after the
	// cached prefix. The second request repeats the first and adds a
	// short turn; the server drops the oldest message to fit, so its
	// count is neither a cache hit on the first nor the whole prompt.
	m, s := standin(t, llmtest.ServerConfig{IgnoreTruncate: true, CacheSlots: 1, MaxContext: 2560}, ollama.Config{})
	ctx := context.Background()
	first := &llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are Cedar."},
		{Role: llm.RoleUser, Content: "a: " + survey(100)}, {Role: llm.RoleUser, Content: "b: " + survey(100)}, {Role: llm.RoleUser, Content: "c: " + survey(100)}}}
	_, err := m.Generate(ctx, first)
	require.NoError(t, err)
	second := &llm.Request{Messages: append(slices.Clone(first.Messages),
		llm.Message{Role: llm.RoleAssistant, Content: "ok"}, llm.Message{Role: llm.RoleUser, Content: "d: " + survey(50)})}
	_, err = m.Generate(ctx, second)
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce, "the probe showed the cut")
	calls := s.Calls()
	require.Len(t, calls, 3, "the request, then one probe")
	assert.True(t, calls[1].Cut)
	assert.Equal(t, 1, calls[2].MaxTokens, "the probe asks for one token")
	assert.Less(t, calls[2].Cached, 15, "no cache served the probe beyond the template's system header")
	assert.Equal(t, calls[2].Evaluated, ce.Kept)
	assert.NotNil(t, ce.Response, "the cut reply's tokens were spent")
	w, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	assert.Equal(t, ce.Kept, w, "the window the server was seen to keep")
}

// TestTrustsCurrentServer: a server that honours "truncate": false (its
// /api/version says 0.12.6 or later) refuses what does not fit, so a reply
// is never taken for a cut, however low its count. (This stand-in says so
// and cuts anyway, to show that the count is not judged; the same server
// saying 0.12.5 is caught.)
func TestTrustsCurrentServer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		version string
		trusted bool
	}{{"0.12.6", true}, {"0.17.4", true}, {"0.12.5", false}, {"0.3.0", false}} {
		t.Run(tc.version, func(t *testing.T) {
			m, _ := standin(t, llmtest.ServerConfig{IgnoreTruncate: true, MaxContext: 2048, Version: tc.version}, ollama.Config{})
			_, err := m.Generate(ctx, words(3000))
			if tc.trusted {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, llm.ErrContextLength)
			}
		})
	}
}
