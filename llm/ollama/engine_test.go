package ollama_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/internal/engine"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
)

var engineUpdate = engine.UpdateFlag()

// The TestEngine… tests run against a real engine (package
// internal/engine; they skip without one) and record what it answered
// under testdata/engine/ with -update; their TestTranscript… twins replay
// those transcripts in the quick suite, running the same checks.

// replayEach runs check against the transcript name of each engine.
func replayEach(t *testing.T, name string, check func(*testing.T, engine.Target)) {
	for _, eng := range engine.Engines {
		t.Run(eng, func(t *testing.T) { check(t, engine.ReplayedOn(t, name, eng)) })
	}
}

func newEngineModel(t *testing.T, tg engine.Target, cfg ollama.Config) *ollama.Model {
	t.Helper()
	cfg.URL, cfg.Model, cfg.HTTPClient = tg.URL, tg.Model, tg.Client
	m, err := ollama.New(cfg)
	require.NoError(t, err)
	return m
}

// A reply stops at num_predict: done_reason "length", reported as a
// TruncatedError holding the partial reply and its token count.
func TestEngineBoundedReply(t *testing.T) {
	checkBoundedReply(t, engine.Live(t, "ollama_bounded_reply", engine.Config{Window: 1024}, engineUpdate()))
}

func TestTranscriptBoundedReply(t *testing.T) {
	replayEach(t, "ollama_bounded_reply", checkBoundedReply)
}

func checkBoundedReply(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	for _, stream := range []bool{false, true} {
		m := newEngineModel(t, tg, ollama.Config{Stream: stream})
		// The model may end a reply before the limit (the model file
		// favours its end-of-turn token): seeds are tried until one
		// reaches it.
		var te *llm.TruncatedError
		for seed := 1; seed <= 8 && te == nil; seed++ {
			resp, err := m.Generate(ctx, &llm.Request{
				Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Tell me everything about the workspace."}},
				Seed:      llm.Ptr(seed),
				MaxTokens: 3,
			})
			if errors.As(err, &te) {
				break
			}
			if err == nil {
				require.Equal(t, llm.DoneStop, resp.DoneReason)
				require.LessOrEqual(t, resp.OutputTokens, 3, "stream=%v seed=%d: eval_count within the limit", stream, seed)
				continue
			}
			require.ErrorIs(t, err, llm.ErrEmpty, "stream=%v seed=%d", stream, seed) // an end-of-turn token first
		}
		require.NotNil(t, te, "stream=%v: no reply reached the limit", stream)
		require.Equal(t, llm.DoneLength, te.Response.DoneReason)
		require.Equal(t, 3, te.Response.OutputTokens, "stream=%v: eval_count is the reply limit", stream)
		require.Positive(t, te.Response.PromptTokens)
	}
}

// The window the adapter asks for (num_ctx) is the one the engine uses: a
// prompt over the server's default window but within the adapter's is
// answered whole, and the engine then runs the model with that window.
func TestEngineNumCtx(t *testing.T) {
	checkNumCtx(t, engine.Live(t, "ollama_num_ctx", engine.Config{Window: 512}, engineUpdate()))
}

func TestTranscriptNumCtx(t *testing.T) {
	replayEach(t, "ollama_num_ctx", checkNumCtx)
}

func checkNumCtx(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	text, err := tg.Filler(ctx, 700)
	require.NoError(t, err)
	m := newEngineModel(t, tg, ollama.Config{NumCtx: 1024})
	resp, err := m.Generate(ctx, &llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: text}},
		MaxTokens: 4,
	})
	var te *llm.TruncatedError
	if errors.As(err, &te) {
		resp, err = te.Response, nil // the reply limit, not the window
	}
	require.NoError(t, err)
	require.GreaterOrEqual(t, resp.PromptTokens, 700, "the whole prompt was evaluated, over the 512-token default")
	var ps struct {
		Models []struct {
			ContextLength int `json:"context_length"`
		} `json:"models"`
	}
	require.NoError(t, tg.Do(ctx, http.MethodGet, "/api/ps", nil, &ps))
	require.Len(t, ps.Models, 1)
	require.Equal(t, 1024, ps.Models[0].ContextLength, "the engine runs with the num_ctx asked for")
}

// A prompt over the window is refused (HTTP 400, "request (N tokens)
// exceeds the available context size (W tokens), try increasing it") and
// the adapter reports an *llm.ContextLengthError carrying the server's
// message. The prompt is made of characters the estimate undercounts, so
// that the adapter sends it.
func TestEngineRefusal(t *testing.T) {
	checkRefusal(t, engine.Live(t, "ollama_refusal", engine.Config{Window: 1024}, engineUpdate()))
}

func TestTranscriptRefusal(t *testing.T) {
	replayEach(t, "ollama_refusal", checkRefusal)
}

func checkRefusal(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	// Rare characters the tokenizer spells byte by byte: several tokens
	// each, where the adapter's estimate counts a quarter of one.
	unit := strings.Repeat("𝔄𝔅𝔇𝔈𝔉𝔊𝔍𝔎𝔏𝔐 鑫龘靐齉 ", 10)
	per, err := tg.Tokens(ctx, unit)
	require.NoError(t, err)
	dense := strings.Repeat(unit, 2200/max(per, 1)+1)
	n, err := tg.Tokens(ctx, dense)
	require.NoError(t, err)
	require.Greater(t, n, 2048, "the prompt is over the window in the engine's tokens")
	require.Less(t, llm.RawTokens(dense), 1800, "the adapter must think it fits")
	m := newEngineModel(t, tg, ollama.Config{NumCtx: 2048})
	_, err = m.Generate(ctx, &llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: dense}},
		MaxTokens: 8,
	})
	require.ErrorIs(t, err, llm.ErrContextLength)
	var ce *llm.ContextLengthError
	require.ErrorAs(t, err, &ce)
	require.Zero(t, ce.Kept, "a refusal, not a cut")
	if tg.Engine == engine.Ollama {
		// Ollama's runner states neither number: the adapter lowers its
		// window below the refused prompt's estimate (80 % of it and the
		// reply's reserve, never below 1024), and the prompt is its
		// estimate.
		require.Equal(t, "the input length exceeds the context length", ce.Message)
		require.Equal(t, 1024, ce.Window, "lowered below the estimate of the refused prompt, to the least window")
		require.Positive(t, ce.Prompt)
		require.Less(t, ce.Prompt, 2048, "the adapter's estimate: it took the prompt to fit")
		return
	}
	require.Contains(t, ce.Message, "exceeds the available context size (2048 tokens)")
	require.Equal(t, 2048, ce.Window, "the window the server stated")
	require.Greater(t, ce.Prompt, 2048, "the server's count")
}

// A conversation that grows as a tool loop's does: each request repeats
// the one before and adds to it. The engine reuses the KV cache of the
// shared prefix and counts only the tokens after it (Ollama's
// prompt_eval_count): the second request's count, over a thousand tokens
// yet far below its estimate, is a cache hit, not a cut. No error, and
// the window is not lowered.
func TestEngineCacheReuse(t *testing.T) {
	checkCacheReuse(t, engine.Live(t, "ollama_cache_reuse", engine.Config{Window: 4096}, engineUpdate()))
}

func TestTranscriptCacheReuse(t *testing.T) {
	replayEach(t, "ollama_cache_reuse", checkCacheReuse)
}

func checkCacheReuse(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	system, err := tg.Filler(ctx, 1100)
	require.NoError(t, err)
	result, err := tg.Filler(ctx, 1100)
	require.NoError(t, err)
	m := newEngineModel(t, tg, ollama.Config{NumCtx: 4096})
	before, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "Read the workspace."}}
	var counts []int
	for _, next := range []string{"Tool result:\n" + result, "Which goal comes next?"} {
		resp := cacheTurn(ctx, t, m, msgs, len(counts)+1)
		counts = append(counts, resp.PromptTokens)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text}, llm.Message{Role: llm.RoleUser, Content: next})
	}
	counts = append(counts, cacheTurn(ctx, t, m, msgs, 3).PromptTokens)
	t.Logf("prompt_eval_count: %v", counts)
	require.GreaterOrEqual(t, counts[0], 1100, "the first prompt is evaluated whole")
	if tg.Engine == engine.Ollama {
		// Ollama 0.17's prompt_eval_count counts the whole prompt; its
		// debug log says how much of it came from the KV cache.
		require.GreaterOrEqual(t, counts[1], counts[0]+1100, "the whole second prompt, tool result included")
		require.Greater(t, counts[2], counts[1], "the whole third prompt")
		require.Less(t, counts[2], counts[1]+100)
		if tg.Server != nil {
			lines, err := engine.CacheLines(tg.Server.Log())
			require.NoError(t, err)
			require.Len(t, lines, 3, "one cache lookup a request")
			require.Zero(t, lines[0].Used, "an empty cache")
			for i := 1; i < 3; i++ {
				require.Equal(t, lines[i].Prompt, counts[i], "request %d: the log and the reply count the same prompt", i+1)
				require.GreaterOrEqual(t, lines[i].Used, lines[i-1].Prompt-2, "request %d: the previous prompt came from the cache", i+1)
				require.Less(t, lines[i].Used, lines[i].Prompt)
			}
		}
	} else {
		require.GreaterOrEqual(t, counts[1], 1100, "the second evaluates what follows the cached prefix: the tool result")
		require.Less(t, counts[1], 1300, "and not the prefix")
		require.Less(t, counts[2], 100, "the third evaluates only the new question")
	}
	after, _, err := m.ContextWindow(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "the window is not lowered by cache hits")
}

// cacheTurn sends one request of the growing conversation. A reply cut at
// its limit is expected; any other error fails the test, which goes on
// with the reply the error holds, if any, so that the transcript holds
// every request.
func cacheTurn(ctx context.Context, t *testing.T, m *ollama.Model, msgs []llm.Message, n int) *llm.Response {
	t.Helper()
	resp, err := m.Generate(ctx, &llm.Request{Messages: msgs, Seed: llm.Ptr(5), MaxTokens: 6})
	var te *llm.TruncatedError
	var ce *llm.ContextLengthError
	switch {
	case err == nil:
	case errors.As(err, &te):
		resp = te.Response // the reply limit
	case errors.As(err, &ce) && ce.Response != nil:
		t.Errorf("request %d: a cache hit taken for a cut: %v", n, err)
		resp = ce.Response
	default:
		require.NoError(t, err, "request %d", n)
	}
	return resp
}

// /api/embed: one vector per text, of the model's embedding length,
// normalised; the same text gives the same vector.
func TestEngineEmbed(t *testing.T) {
	checkEmbed(t, engine.Live(t, "ollama_embed", engine.Config{Window: 1024}, engineUpdate()))
}

func TestTranscriptEmbed(t *testing.T) {
	replayEach(t, "ollama_embed", checkEmbed)
}

func checkEmbed(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	e, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: tg.URL, Model: tg.Model, HTTPClient: tg.Client})
	require.NoError(t, err)
	texts := []string{"the rate limiter failed at 3AM", "a poem about the sea", "the rate limiter failed at 3AM"}
	vecs, err := e.Embed(ctx, texts)
	require.NoError(t, err)
	require.Len(t, vecs, 3)
	require.Equal(t, len(vecs[0]), e.Dimensions())
	require.GreaterOrEqual(t, e.Dimensions(), 64)
	for _, v := range vecs {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		require.InDelta(t, 1, math.Sqrt(s), 1e-3, "Ollama normalises embeddings")
	}
	require.Equal(t, vecs[0], vecs[2])
	require.NotEqual(t, vecs[0], vecs[1])
}

// Two slots and a queue of one: of six requests sent at once, two run,
// one waits (under Ollama: one loads the model, one waits) and the rest
// are answered 503 "server busy, please try again.
// maximum pending requests exceeded", which the adapter reports as a
// retryable llm.StatusError.
func TestEngineSlotsQueue(t *testing.T) {
	tg := engine.Live(t, "ollama_slots_queue", engine.Config{Window: 1024, Slots: 2, Queue: 1}, engineUpdate())
	checkSlotsQueue(t, tg)
	log := tg.Server.Log()
	if tg.Engine == engine.Ollama {
		// Whether the two served requests overlap, and so take both
		// slots, depends on when the second leaves the queue.
		lines, err := engine.CacheLines(log)
		require.NoError(t, err)
		require.Len(t, lines, 2, "one cache lookup a served request; log:\n%s", log)
		for _, l := range lines {
			require.Contains(t, []int{0, 1}, l.Slot, "two slots (OLLAMA_NUM_PARALLEL)")
		}
		return
	}
	require.Contains(t, log, "slot=0", "log:\n%s", log)
	require.Contains(t, log, "slot=1", "both slots served requests; log:\n%s", log)
}

func TestTranscriptSlotsQueue(t *testing.T) {
	replayEach(t, "ollama_slots_queue", checkSlotsQueue)
}

func checkSlotsQueue(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	m := newEngineModel(t, tg, ollama.Config{NumCtx: 1024})
	_, _, err := m.ContextWindow(ctx) // /api/show before the burst
	require.NoError(t, err)
	const n = 6
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ok   int
		busy []llm.StatusError
	)
	for range n {
		wg.Go(func() {
			_, err := m.Generate(ctx, &llm.Request{
				Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Describe the workspace in detail."}},
				Seed:      llm.Ptr(1),
				MaxTokens: 48,
			})
			mu.Lock()
			defer mu.Unlock()
			var te *llm.TruncatedError
			var se llm.StatusError
			switch {
			case err == nil || errors.As(err, &te) || errors.Is(err, llm.ErrEmpty):
				// Random weights may end a reply at its first token: an
				// empty reply was still served by a slot.
				ok++
			case errors.As(err, &se):
				busy = append(busy, se)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	served := 3 // two slots and one waiting request
	if tg.Engine == engine.Ollama {
		// Ollama's queue (OLLAMA_MAX_QUEUE) holds the requests waiting
		// for its scheduler, which is busy loading the model for the
		// first one: that one and one waiting request are served.
		served = 2
	}
	require.Equal(t, served, ok, "the requests the slots and the queue hold are served")
	require.Len(t, busy, n-served)
	for _, se := range busy {
		require.Equal(t, http.StatusServiceUnavailable, se.StatusCode)
		require.Contains(t, se.Message, "maximum pending requests exceeded")
		require.True(t, middleware.Retryable(se), "a busy server is retried")
	}
}

// A reply that would run past the end of the window stops there with
// done_reason "length", reported as a TruncatedError ("shift": false):
// Ollama would otherwise discard half the context in the middle of the
// reply and end it "stop". The prompt is made of characters the adapter's
// estimate undercounts, so that it sends a prompt that leaves less room
// than the reply's limit; the reply is JSON with a string of at least 1500
// characters, so that only a limit ends it.
func TestEngineNoShift(t *testing.T) {
	checkNoShift(t, engine.Live(t, "ollama_no_shift", engine.Config{Window: 1024, JSONLimit: -1}, engineUpdate()))
}

func TestTranscriptNoShift(t *testing.T) {
	replayEach(t, "ollama_no_shift", checkNoShift)
}

func checkNoShift(t *testing.T, tg engine.Target) {
	ctx := engine.Context(t)
	unit := "𝔄𝔅𝔇𝔈𝔉𝔊𝔍𝔎𝔏𝔐 鑫龘靐齉 "
	per, err := tg.Tokens(ctx, unit)
	require.NoError(t, err)
	dense := strings.Repeat(unit, 840/max(per, 1)+1)
	n, err := tg.Tokens(ctx, dense)
	require.NoError(t, err)
	require.Less(t, n, 900, "the prompt fits the window")
	require.Greater(t, n+256, 1024, "but not with the reply's limit")
	require.LessOrEqual(t, llm.RawTokens(dense)+256, 1024, "the adapter must think both fit")
	m := newEngineModel(t, tg, ollama.Config{NumCtx: 1024})
	_, err = m.Generate(ctx, &llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: dense}},
		Format:    []byte(`{"type":"object","properties":{"text":{"type":"string","minLength":1500}},"required":["text"]}`),
		Seed:      llm.Ptr(1),
		MaxTokens: 256,
	})
	var te *llm.TruncatedError
	require.ErrorAs(t, err, &te, "the window ended the reply")
	require.Equal(t, llm.DoneLength, te.Response.DoneReason)
	require.Less(t, te.Response.OutputTokens, 256, "the window, not the reply limit, ended it")
	require.GreaterOrEqual(t, te.Response.PromptTokens, n, "the whole prompt was evaluated")
	require.InDelta(t, 1024, te.Response.PromptTokens+te.Response.OutputTokens, 4, "the reply ran to the end of the window and no further")
}
