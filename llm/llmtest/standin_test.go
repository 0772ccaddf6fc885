package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
)

// post sends body as JSON and returns the status and the decoded reply.
func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return resp.StatusCode, out
}

func chat(content string, opts map[string]any, truncate *bool) map[string]any {
	body := map[string]any{"model": "qwen3.5:9b", "stream": false,
		"messages": []any{map[string]any{"role": "system", "content": "You are Cedar."}, map[string]any{"role": "user", "content": content}}}
	if opts != nil {
		body["options"] = opts
	}
	if truncate != nil {
		body["truncate"] = *truncate
	}
	return body
}

func TestTokenize(t *testing.T) {
	assert.Equal(t, []string{"Hell", "o", ",", " worl", "d", "\n", " 123", "4", " —", " ok", "  "}, llmtest.Tokenize("Hello, world\n 1234 — ok  "))
	prose := strings.Repeat("The agents read the files in the workspace and write what they find. ", 20)
	n := llmtest.CountTokens(prose)
	assert.InDelta(t, float64(utf8.RuneCountInString(prose))/4, float64(n), float64(n)/4, "prose comes to about four characters a token")
	js := strings.Repeat(`{"a":1,"b":[2,3]},`, 20)
	assert.Greater(t, llmtest.CountTokens(js), utf8.RuneCountInString(js)/3, "JSON comes to more tokens than prose")
}

// FuzzTokenize checks that tokens concatenate to the text and are never
// empty.
func FuzzTokenize(f *testing.F) {
	f.Add("Hello, world\n 1234 — ok  ")
	f.Add("\xff\xfe \t\n")
	f.Fuzz(func(t *testing.T, s string) {
		toks := llmtest.Tokenize(s)
		for _, tok := range toks {
			require.NotEmpty(t, tok)
		}
		require.Equal(t, s, strings.Join(toks, ""))
	})
}

// TestStandinWindow pins Ollama's behaviour: the default window, silent
// front truncation reported only through prompt_eval_count, and a 400
// when the request asks not to truncate.
func TestStandinWindow(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}}, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	long := strings.Repeat("the workspace holds many files ", 600) // about 5,400 tokens

	status, reply := post(t, url+"/api/chat", chat("short", nil, nil))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, true, reply["done"])
	short := reply["prompt_eval_count"].(float64)

	status, reply = post(t, url+"/api/chat", chat(long, nil, nil))
	require.Equal(t, http.StatusOK, status, "a prompt over the default window still gets 200")
	assert.Equal(t, float64(llmtest.DefaultServerContext), reply["prompt_eval_count"], "only the window was kept")
	calls := s.Calls()
	require.Len(t, calls, 2)
	assert.False(t, calls[0].Cut)
	assert.Equal(t, int(short), calls[0].Kept)
	assert.True(t, calls[1].Cut)
	assert.Greater(t, calls[1].Sent, 4096)
	assert.NotContains(t, calls[1].Prompt, "You are Cedar", "the oldest tokens went first")

	status, reply = post(t, url+"/api/chat", chat(long, map[string]any{"num_ctx": 8192}, nil))
	require.Equal(t, http.StatusOK, status)
	assert.Less(t, reply["prompt_eval_count"].(float64), 8192.0, "a big enough window keeps it whole")

	no := false
	status, reply = post(t, url+"/api/chat", chat(long, nil, &no))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, fmt.Sprintf(llmtest.ContextSizeMessage, s.Calls()[2].Sent, 4096), reply["error"], "the current wording, with the numbers")

	st := s.Stats()
	assert.Equal(t, 1, st.Cut)
	assert.Equal(t, 1, st.Refused)
	assert.Equal(t, []int{4096, 8192, 4096}, st.Windows, "every change of num_ctx reloads the model")
	assert.Equal(t, 3, st.Reloads)
}

func TestStandinMaxContextAndLegacy(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true})
	url := s.Start()
	t.Cleanup(s.Close)
	no := false
	status, reply := post(t, url+"/api/chat", chat(strings.Repeat("word ", 3000), map[string]any{"num_ctx": 16384}, &no))
	require.Equal(t, http.StatusOK, status, "a server before the truncate field cuts anyway")
	assert.Equal(t, 2048.0, reply["prompt_eval_count"], "whatever num_ctx says, 2048 are granted")
	assert.Equal(t, llmtest.LegacyVersion, version(t, url), "a server before the truncate field says so")
}

// version returns what /api/version says.
func version(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/api/version")
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct{ Version string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v.Version
}

// TestStandinRefusals: the wording of a refusal, and the modes that refuse
// or cut whatever the request says.
func TestStandinRefusals(t *testing.T) {
	long := strings.Repeat("word ", 3000)
	no := false
	for _, tc := range []struct {
		name     string
		cfg      llmtest.ServerConfig
		truncate *bool
		status   int
		message  string
		version  string
	}{
		{"current", llmtest.ServerConfig{MaxContext: 2048}, &no, 400, "request (3054 tokens) exceeds the available context size (2048 tokens), try increasing it", llmtest.DefaultVersion},
		{"legacy wording", llmtest.ServerConfig{MaxContext: 2048, LegacyRefusal: true}, &no, 400, llmtest.InputTooLongMessage, llmtest.DefaultVersion},
		{"refuses without truncate false", llmtest.ServerConfig{MaxContext: 2048, RefuseOverflow: true, Version: "0.30.1"}, nil, 400, "request (3054 tokens) exceeds the available context size (2048 tokens), try increasing it", "0.30.1"},
		{"cuts without truncate false", llmtest.ServerConfig{MaxContext: 2048}, nil, 200, "", llmtest.DefaultVersion},
		{"cuts whatever it says", llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true, RefuseOverflow: true}, &no, 200, "", llmtest.LegacyVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(tc.cfg)
			url := s.Start()
			t.Cleanup(s.Close)
			status, reply := post(t, url+"/api/chat", chat(long, nil, tc.truncate))
			require.Equal(t, tc.status, status, "%v", reply)
			if tc.message != "" {
				assert.Equal(t, tc.message, reply["error"])
			} else {
				assert.Equal(t, 2048.0, reply["prompt_eval_count"])
			}
			assert.Equal(t, tc.version, version(t, url))
		})
	}
}

// TestStandinKVCache: with a KV cache, a prompt sharing a prefix with the
// last one is counted from where they part, as Ollama's and llama.cpp's
// runners count; the OpenAI flavors report the whole prompt with
// cached_tokens, except Ollama's /v1, which passes its count on.
func TestStandinKVCache(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 1, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	doc := strings.Repeat("the survey lists every room ", 200)
	turn1 := chat(doc, nil, nil)
	status, reply := post(t, url+"/api/chat", turn1)
	require.Equal(t, http.StatusOK, status)
	first := reply["prompt_eval_count"].(float64)
	answer := reply["message"].(map[string]any)["content"].(string)
	assert.Equal(t, float64(s.Calls()[0].Kept), first, "nothing cached yet: the whole prompt")

	turn2 := chat(doc, nil, nil)
	turn2["messages"] = append(turn2["messages"].([]any),
		map[string]any{"role": "assistant", "content": answer},
		map[string]any{"role": "user", "content": "and the next part"})
	status, reply = post(t, url+"/api/chat", turn2)
	require.Equal(t, http.StatusOK, status)
	second := reply["prompt_eval_count"].(float64)
	c := s.Calls()[1]
	assert.Less(t, second, 50.0, "only the tokens after the cached prompt and reply (and the template's turn markers)")
	assert.Equal(t, c.Kept-c.Cached, int(second))
	assert.Greater(t, c.Kept, int(first), "although the prompt grew")

	status, reply = post(t, url+"/api/chat", turn1)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, 1.0, reply["prompt_eval_count"], "a repeated prompt still evaluates its last token")

	status, reply = post(t, url+"/api/chat", chat("something else entirely", nil, nil))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, float64(s.Calls()[3].Kept-s.Calls()[3].Cached), reply["prompt_eval_count"])
	assert.Less(t, s.Calls()[3].Cached, 40, "only the system block is shared")

	st := s.Stats()
	assert.Equal(t, st.PromptTokens, st.CachedTokens+st.EvaluatedTokens)
	assert.InDelta(t, float64(st.CachedTokens)/float64(st.PromptTokens), st.CachedShare(), 1e-9)
	assert.Greater(t, st.CachedShare(), 0.4)

	for _, tc := range []struct {
		flavor string
		whole  bool
	}{{"llamacpp", true}, {"openai", true}, {"ollama", false}} {
		t.Run(tc.flavor, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 2, OpenAIFlavor: tc.flavor, Record: true})
			url := s.Start()
			t.Cleanup(s.Close)
			body := map[string]any{"model": "qwen3.5:9b", "messages": []any{map[string]any{"role": "user", "content": doc}}}
			for i := range 2 {
				status, reply := post(t, url+"/v1/chat/completions", body)
				require.Equal(t, http.StatusOK, status)
				usage := reply["usage"].(map[string]any)
				c := s.Calls()[i]
				if tc.whole {
					assert.Equal(t, float64(c.Kept), usage["prompt_tokens"])
					assert.Equal(t, float64(c.Cached), usage["prompt_tokens_details"].(map[string]any)["cached_tokens"])
				} else {
					assert.Equal(t, float64(c.Evaluated), usage["prompt_tokens"])
					assert.NotContains(t, usage, "prompt_tokens_details")
				}
			}
			assert.Equal(t, s.Calls()[0].Kept-1, s.Calls()[1].Cached)
		})
	}
}

// TestStandinRendersLikeOllama: /api/chat prompts are rendered through
// Ollama's template package, which gathers every system message into one
// block at the top: a second system message after a cycle's exchange
// moves to that block, so the cached cycle serves only the first system
// message, while the same text as a user message continues the exchange.
func TestStandinRendersLikeOllama(t *testing.T) {
	doc := strings.Repeat("the survey lists every room ", 100)
	for _, tc := range []struct {
		role     string
		minShare float64
		maxShare float64
	}{
		{"system", 0, 0.2},
		{"user", 0.9, 1},
	} {
		t.Run(tc.role, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 1, Record: true})
			url := s.Start()
			t.Cleanup(s.Close)
			cycle := chat(doc, nil, nil)
			status, reply := post(t, url+"/api/chat", cycle)
			require.Equal(t, http.StatusOK, status)
			answer := reply["message"].(map[string]any)["content"].(string)
			turn := chat(doc, nil, nil)
			turn["messages"] = append(turn["messages"].([]any),
				map[string]any{"role": "assistant", "content": answer},
				map[string]any{"role": tc.role, "content": "Pursue the goal with tools."},
				map[string]any{"role": "user", "content": "Pursue your goal now: map the rooms"})
			status, _ = post(t, url+"/api/chat", turn)
			require.Equal(t, http.StatusOK, status)
			c := s.Calls()[1]
			share := float64(c.Cached) / float64(c.Kept)
			assert.GreaterOrEqual(t, share, tc.minShare, "cached %d of %d", c.Cached, c.Kept)
			assert.LessOrEqual(t, share, tc.maxShare, "cached %d of %d", c.Cached, c.Kept)
			assert.True(t, strings.HasPrefix(c.Prompt, "<|im_start|>system\nYou are Cedar."), c.Prompt[:40])
			if tc.role == "system" {
				assert.True(t, strings.HasPrefix(c.Prompt, "<|im_start|>system\nYou are Cedar.\n\nPursue the goal with tools.<|im_end|>"), "collated: %.80q", c.Prompt)
			}
		})
	}
}

// TestStandinKVCacheSlots: with several KV-cache entries the stand-in
// picks one as Ollama's runner does: it reuses an entry only when the
// entry's whole content is a prefix of the new prompt, and otherwise
// replaces the least recently used entry after copying the shared
// prefix, so two prompts that part keep an entry each.
func TestStandinKVCacheSlots(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 2, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	docA := strings.Repeat("the survey lists every room ", 100)
	docB := strings.Repeat("a ledger of the harvest ", 100)
	send := func(content string) llmtest.Call {
		t.Helper()
		status, _ := post(t, url+"/api/chat", chat(content, nil, nil))
		require.Equal(t, http.StatusOK, status)
		calls := s.Calls()
		return calls[len(calls)-1]
	}
	first := send(docA)
	assert.Zero(t, first.Cached, "an empty cache")
	b := send(docB)
	assert.Less(t, b.Cached, 40, "only the system block is shared")
	again := send(docA)
	assert.Equal(t, again.Kept-1, again.Cached,
		"B took the least recently used entry, not A's, although A's shared the system prompt with it")

	fork := send(docA + " and then the cellar")
	assert.Greater(t, fork.Cached, first.Kept-30, "the prefix shared with A's entry is copied")
	again = send(docA)
	assert.Equal(t, again.Kept-1, again.Cached,
		"A's entry holds A's prompt and reply, not a prefix of the fork: the fork took another entry")
	b = send(docB)
	assert.Less(t, b.Cached, 40, "B's entry was the least recently used and went to the fork")

	st := s.Stats()
	assert.Equal(t, st.PromptTokens, st.CachedTokens+st.EvaluatedTokens)

	one := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 1, Record: true})
	url = one.Start()
	t.Cleanup(one.Close)
	for _, doc := range []string{docA, docB, docA} {
		status, _ := post(t, url+"/api/chat", chat(doc, nil, nil))
		require.Equal(t, http.StatusOK, status)
	}
	assert.Less(t, one.Calls()[2].Cached, 40, "one entry holds only the last prompt")
}

func TestStandinShow(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 40960}, {Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	status, reply := post(t, url+"/api/show", map[string]any{"model": "qwen3.5:9b"})
	require.Equal(t, http.StatusOK, status)
	info := reply["model_info"].(map[string]any)
	assert.Equal(t, "qwen3", info["general.architecture"])
	assert.Equal(t, 40960.0, info["qwen3.context_length"])
	status, reply = post(t, url+"/api/show", map[string]any{"model": "nomic-embed-text"})
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, 768.0, reply["model_info"].(map[string]any)["nomic-bert.embedding_length"])
	status, reply = post(t, url+"/api/show", map[string]any{"model": "missing"})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, reply["error"], "not found")
}

// TestStandinSlotsAndQueue: Slots requests run, Queue wait, the rest get
// 503 with Ollama's message.
func TestStandinSlotsAndQueue(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	queued := make(chan int, 10)
	s := llmtest.NewServer(llmtest.ServerConfig{Slots: 2, Queue: 1, Latency: time.Nanosecond,
		OnQueue: func(n int) { queued <- n },
		Sleep: func(ctx context.Context, _ time.Duration) error {
			entered <- struct{}{}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
	url := s.Start()
	t.Cleanup(s.Close)

	var wg sync.WaitGroup
	statuses := make(chan int, 3)
	for range 2 {
		wg.Go(func() {
			st, _ := post(t, url+"/api/chat", chat("x", nil, nil))
			statuses <- st
		})
	}
	<-entered
	<-entered // both slots held
	wg.Go(func() {
		st, _ := post(t, url+"/api/chat", chat("x", nil, nil))
		statuses <- st
	})
	assert.Equal(t, 1, <-queued, "the third waits in the queue")
	assert.Equal(t, 1, s.Stats().Waiting)

	status, reply := post(t, url+"/api/chat", chat("x", nil, nil))
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, llmtest.BusyMessage, reply["error"])

	close(release)
	wg.Wait()
	close(statuses)
	for st := range statuses {
		assert.Equal(t, http.StatusOK, st)
	}
	stats := s.Stats()
	assert.Equal(t, 4, stats.Requests)
	assert.Equal(t, 1, stats.Busy)
	assert.Equal(t, 2, stats.MaxInFlight)
}

func TestStandinEmbed(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b"}, {Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	status, reply := post(t, url+"/api/embed", map[string]any{"model": "nomic-embed-text", "input": []string{"read the design notes", "read the design files", "bake bread"}})
	require.Equal(t, http.StatusOK, status)
	vecs := reply["embeddings"].([]any)
	require.Len(t, vecs, 3)
	v := func(i int) []float64 {
		var out []float64
		for _, x := range vecs[i].([]any) {
			out = append(out, x.(float64))
		}
		return out
	}
	dot := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	assert.Len(t, v(0), 768)
	assert.InDelta(t, 1, dot(v(0), v(0)), 1e-5, "unit vectors")
	assert.Greater(t, dot(v(0), v(1)), 0.5, "shared words: similar")
	assert.Less(t, math.Abs(dot(v(0), v(2))), 0.3, "no shared word: unrelated")
	assert.Positive(t, reply["prompt_eval_count"])

	status, reply = post(t, url+"/api/embed", map[string]any{"model": "qwen3.5:9b", "input": "x"})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, reply["error"], "does not support embeddings")

	status, reply = post(t, url+"/v1/embeddings", map[string]any{"model": "nomic-embed-text", "input": "read the design notes"})
	require.Equal(t, http.StatusOK, status)
	data := reply["data"].([]any)
	require.Len(t, data, 1)
	first := data[0].(map[string]any)["embedding"].([]any)
	assert.InDelta(t, v(0)[5], first[5].(float64), 1e-6, "both APIs give the same vector")
}

func TestEmbeddingDeterministic(t *testing.T) {
	a := llmtest.Embedding("Read the design notes.", 64)
	b := llmtest.Embedding("read THE design notes", 64)
	assert.Equal(t, a, b, "case and punctuation do not matter")
	assert.Len(t, llmtest.Embedding("", 8), 8)
	assert.Nil(t, llmtest.Embedding("x", 0))
}

// TestStandinOpenAIFlavors pins each server's answer to a prompt over the
// window.
func TestStandinOpenAIFlavors(t *testing.T) {
	long := strings.Repeat("the workspace holds many files ", 1200)
	body := map[string]any{"model": "qwen3.5:9b", "messages": []any{map[string]any{"role": "user", "content": long}}, "max_tokens": 100}
	tests := []struct {
		flavor string
		status int
		want   string
	}{
		{"openai", 400, `"code":"context_length_exceeded"`},
		{"vllm", 400, "This model's maximum context length is 4096 tokens. However, you requested"},
		{"llamacpp", 400, `exceeds the available context size (4096 tokens)`},
		{"ollama", 200, `"prompt_tokens":4096`},
	}
	for _, tc := range tests {
		t.Run(tc.flavor, func(t *testing.T) {
			s := llmtest.NewServer(llmtest.ServerConfig{OpenAIFlavor: tc.flavor})
			url := s.Start()
			t.Cleanup(s.Close)
			b, _ := json.Marshal(body)
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(b))
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Contains(t, string(raw), tc.want)
		})
	}
}

// TestStandinKVCacheLongest: under CacheLongest, as in Ollama's runner by
// default, a prompt takes the free entry sharing the longest prefix: B's
// prompt, sharing the system block with A's cached one, evicts it while
// the other entry stays empty, and A's next prompt evicts B's in turn.
func TestStandinKVCacheLongest(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{CacheSlots: 2, CacheLongest: true, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	docA := strings.Repeat("the survey lists every room ", 100)
	docB := strings.Repeat("a ledger of the harvest ", 100)
	send := func(content string) llmtest.Call {
		t.Helper()
		status, _ := post(t, url+"/api/chat", chat(content, nil, nil))
		require.Equal(t, http.StatusOK, status)
		calls := s.Calls()
		return calls[len(calls)-1]
	}
	first := send(docA)
	assert.Zero(t, first.Cached, "an empty cache")
	b := send(docB)
	assert.Positive(t, b.Cached, "the system block, shared with A's entry")
	assert.Less(t, b.Cached, 40)
	again := send(docA)
	assert.Less(t, again.Cached, 40, "B took A's entry: the shared system block beat the empty entry")
	st := s.Stats()
	assert.Equal(t, st.PromptTokens, st.CachedTokens+st.EvaluatedTokens)
}
