package llmtest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// volatile are the reply keys whose values change from run to run
// (times, durations, ids); golden comparisons replace them with "…".
var volatile = []string{"created_at", "created", "id", "total_duration", "load_duration",
	"prompt_eval_duration", "eval_duration", "system_fingerprint"}

// scrub replaces the values of volatile keys, at any depth, with "…".
func scrub(v any) any { return scrubKeys(v, volatile) }

// scrubKeys replaces the values of keys, at any depth, with "…".
func scrubKeys(v any, keys []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if slices.Contains(keys, k) {
				x[k] = "…"
			} else {
				x[k] = scrubKeys(val, keys)
			}
		}
	case []any:
		for i := range x {
			x[i] = scrubKeys(x[i], keys)
		}
	}
	return v
}

// exchange posts body to url+path and returns the status and the reply's
// JSON values (one per line for a stream), scrubbed.
func exchange(t *testing.T, url, path string, body any) (int, []any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url+path, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "data: "))
		if line == "" || line == "[DONE]" {
			continue
		}
		var v any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "%s", line)
		out = append(out, scrub(v))
	}
	return resp.StatusCode, out
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.JSONEq(t, string(want), string(b), "the stand-in's wire shape changed; if on purpose, run with -update and review the diff")
}

// The stand-in's replies keep their wire shape, on both APIs, streamed
// or not, with and without a structured-output schema: what the SDK's
// adapters decode. The golden files under testdata/standin pin every key
// and value but times and ids.
func TestStandinRepliesGolden(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b"}, {Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	msgs := []any{
		map[string]any{"role": "system", "content": "You are Cedar."},
		map[string]any{"role": "user", "content": "What do you do next?"},
	}
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"content":{"type":"string"}},"required":["action","content"]}`)
	for _, c := range []struct {
		name, path string
		body       map[string]any
		status     int
	}{
		{"ollama_chat", "/api/chat", map[string]any{"model": "qwen3.5:9b", "stream": false, "messages": msgs}, 200},
		{"ollama_chat_stream", "/api/chat", map[string]any{"model": "qwen3.5:9b", "stream": true, "messages": msgs}, 200},
		{"ollama_chat_format", "/api/chat", map[string]any{"model": "qwen3.5:9b", "stream": false, "messages": msgs, "format": schema}, 200},
		{"ollama_chat_num_predict", "/api/chat", map[string]any{"model": "qwen3.5:9b", "stream": false, "messages": msgs, "options": map[string]any{"num_predict": 1}}, 200},
		{"ollama_missing_model", "/api/chat", map[string]any{"model": "nope:1b", "stream": false, "messages": msgs}, 404},
		{"ollama_embed", "/api/embed", map[string]any{"model": "nomic-embed-text", "input": []string{"a b"}}, 200},
		{"openai_chat", "/v1/chat/completions", map[string]any{"model": "qwen3.5:9b", "messages": msgs}, 200},
		{"openai_chat_stream", "/v1/chat/completions", map[string]any{"model": "qwen3.5:9b", "stream": true, "messages": msgs}, 200},
		{"openai_missing_model", "/v1/chat/completions", map[string]any{"model": "nope:1b", "messages": msgs}, 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, got := exchange(t, url, c.path, c.body)
			assert.Equal(t, c.status, status)
			if c.name == "ollama_embed" { // 768 floats: keep the shape, pin the values below
				m := got[0].(map[string]any)
				vec := m["embeddings"].([]any)[0].([]any)
				assert.Len(t, vec, 768)
				for i, want := range llmtest.Embedding("a b", 768) {
					require.InDelta(t, float64(want), vec[i].(float64), 1e-7)
				}
				m["embeddings"] = "…"
			}
			golden(t, "standin/"+c.name+".json", got)
		})
	}
}

// /api/version answers as Ollama unless the server plays another
// server's OpenAI flavor, which has no such endpoint.
func TestStandinVersionByFlavor(t *testing.T) {
	for _, c := range []struct {
		cfg    llmtest.ServerConfig
		status int
		want   string
	}{
		{llmtest.ServerConfig{}, 200, llmtest.DefaultVersion},
		{llmtest.ServerConfig{OpenAIFlavor: "ollama"}, 200, llmtest.DefaultVersion},
		{llmtest.ServerConfig{IgnoreTruncate: true}, 200, llmtest.LegacyVersion},
		{llmtest.ServerConfig{Version: "0.99.0"}, 200, "0.99.0"},
		{llmtest.ServerConfig{OpenAIFlavor: "openai"}, 404, ""},
		{llmtest.ServerConfig{OpenAIFlavor: "vllm"}, 404, ""},
		{llmtest.ServerConfig{OpenAIFlavor: "llamacpp"}, 404, ""},
	} {
		t.Run(fmt.Sprintf("%+v", c.cfg), func(t *testing.T) {
			s := llmtest.NewServer(c.cfg)
			url := s.Start()
			t.Cleanup(s.Close)
			resp, err := http.Get(url + "/api/version")
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, c.status, resp.StatusCode)
			if c.status == 200 {
				var v struct{ Version string }
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
				assert.Equal(t, c.want, v.Version)
			}
		})
	}
}

// The server counts what a real one would report: a reload per window
// change, the windows asked in order, tokens kept and generated; and
// records each call when asked.
func TestStandinStatsAndCalls(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	for _, numCtx := range []int{0, 0, 8192, 8192, 2048} {
		var opts map[string]any
		if numCtx > 0 {
			opts = map[string]any{"num_ctx": numCtx}
		}
		status, _ := post(t, url+"/api/chat", chat("hello there", opts, nil))
		require.Equal(t, http.StatusOK, status)
	}
	st := s.Stats()
	assert.Equal(t, 5, st.Requests)
	assert.Equal(t, []int{llmtest.DefaultServerContext, 8192, 2048}, st.Windows, "without repeats in a row")
	assert.Equal(t, 3, st.Reloads, "the first load, then each change")
	assert.Zero(t, st.Busy)
	assert.Zero(t, st.Cut)
	calls := s.Calls()
	require.Len(t, calls, 5)
	var kept, out int
	for i, c := range calls {
		assert.Equal(t, "ollama", c.API)
		assert.Equal(t, "qwen3.5:9b", c.Model)
		assert.Len(t, c.Messages, 2)
		assert.Equal(t, c.Sent, c.Kept, "nothing cut")
		assert.Equal(t, c.Kept, c.Cached+c.Evaluated)
		assert.Equal(t, llmtest.CountTokens(c.Prompt), c.Kept, "call %d: the prompt's tokens are what was kept", i)
		kept += c.Kept
		out += llmtest.CountTokens("ok")
	}
	assert.Equal(t, []int{0, 0, 8192, 8192, 2048}, []int{calls[0].NumCtx, calls[1].NumCtx, calls[2].NumCtx, calls[3].NumCtx, calls[4].NumCtx})
	assert.Equal(t, llmtest.DefaultServerContext, calls[0].Window)
	assert.Equal(t, kept, st.PromptTokens)
	assert.Equal(t, out, st.OutputTokens)
	assert.Equal(t, st.PromptTokens, st.CachedTokens+st.EvaluatedTokens)
}

// An embedding model refuses chat, and a chat model refuses to embed.
func TestStandinModelRoles(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b"}, {Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	body := chat("hi", nil, nil)
	body["model"] = "nomic-embed-text"
	status, reply := post(t, url+"/api/chat", body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.NotEmpty(t, reply["error"])
	status, reply = post(t, url+"/api/embed", map[string]any{"model": "qwen3.5:9b", "input": []string{"x"}})
	assert.NotEqual(t, http.StatusOK, status)
	assert.NotEmpty(t, reply["error"])
}

// Tokenize loses nothing (its tokens put together are the text), keeps
// runs of letters to at most four and digits to at most three, and
// CountTokens is its length.
func TestTokenizeProperties(t *testing.T) {
	for _, text := range []string{
		"", "a", "The quick brown fox jumps over the lazy dog.",
		`{"action":"goal","content":"explore the workspace"}`,
		"1234567 apples", "naïve café — déjà vu", "日本語のテキスト", "emoji 🙂🙂 here", "tabs\tand\nnewlines  ",
		"\xff invalid utf-8",
	} {
		toks := llmtest.Tokenize(text)
		assert.Equal(t, text, strings.Join(toks, ""), "%q: the tokens are the text", text)
		assert.Equal(t, len(toks), llmtest.CountTokens(text))
		for _, tok := range toks {
			assert.NotEmpty(t, tok)
			word := strings.TrimLeft(tok, " \t\n")
			if word != "" && utf8.RuneCountInString(word) > 1 {
				letters, digits := true, true
				for _, r := range word {
					letters = letters && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
					digits = digits && r >= '0' && r <= '9'
				}
				if digits {
					assert.LessOrEqual(t, utf8.RuneCountInString(word), 3, "%q in %q", tok, text)
				} else if letters {
					assert.LessOrEqual(t, utf8.RuneCountInString(word), 4, "%q in %q", tok, text)
				}
			}
		}
	}
	prose := strings.Repeat("the agent reads the notes and plans the next step ", 40)
	ratio := float64(len(prose)) / float64(llmtest.CountTokens(prose))
	assert.InDelta(t, 4, ratio, 1.5, "English prose is about four characters a token")
}

// Embedding is a bag of words: unit length, the same on every call,
// indifferent to case and word order, near for shared words, far for
// none; nil below one dimension.
func TestEmbeddingProperties(t *testing.T) {
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for _, dim := range []int{1, 8, 64, 768, 1536} {
		v := llmtest.Embedding("the rate limiter failed at 3AM", dim)
		require.Len(t, v, dim)
		assert.InDelta(t, 1, math.Sqrt(cos(v, v)), 1e-6, "unit length at %d dimensions", dim)
	}
	const dim = 768
	a := llmtest.Embedding("the rate limiter failed at 3AM", dim)
	assert.Equal(t, a, llmtest.Embedding("the rate limiter failed at 3AM", dim), "deterministic")
	assert.InDelta(t, 1, cos(a, llmtest.Embedding("3am AT failed LIMITER rate the", dim)), 1e-6, "case and order do not matter")
	near := cos(a, llmtest.Embedding("the rate limiter broke", dim))
	far := cos(a, llmtest.Embedding("penguins enjoy cold water", dim))
	assert.Greater(t, near, 0.35, "shared words are near: above memory's default threshold")
	assert.Less(t, math.Abs(far), 0.2, "no shared word: near 0")
	assert.Greater(t, near, far)
	punct := llmtest.Embedding("?!…", dim)
	assert.Len(t, punct, dim, "a text without words still gets a vector")
	assert.InDelta(t, 1, math.Sqrt(cos(punct, punct)), 1e-6)
	assert.Nil(t, llmtest.Embedding("x", 0))
	assert.Nil(t, llmtest.Embedding("x", -1))
}

// Two fake embedders of the same model agree on every text: tests on
// different machines and processes see the same vectors.
func TestFakeEmbeddersAgree(t *testing.T) {
	a, b := llmtest.NewFakeEmbedder("m", 32), llmtest.NewFakeEmbedder("m", 32)
	texts := []string{"one", "two words", "ünïcödé", "one"}
	va, err := a.Embed(t.Context(), texts)
	require.NoError(t, err)
	vb, err := b.Embed(t.Context(), texts[:2])
	require.NoError(t, err)
	assert.Equal(t, va[:2], vb)
	assert.Equal(t, va[0], va[3])
	for i, text := range texts {
		assert.Equal(t, llmtest.Embedding(text, 32), va[i])
	}
	var _ llm.Embedder = a
}

// A Flood streams Prefix then Bytes in all; a client that caps what it
// reads stops it early.
func TestFlood(t *testing.T) {
	f := llmtest.NewFlood(`{"embeddings":[[`, 4<<20)
	t.Cleanup(f.Close)
	resp, err := http.Get(f.URL + "/api/embed")
	require.NoError(t, err)
	head := make([]byte, 32)
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(head), `{"embeddings":[[0.125,0.125,`), "%s", head)
	n, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, int64(4<<20), n+32, "every byte, when read to the end")
	assert.Equal(t, int64(4<<20), f.Sent())
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	alloc := llmtest.Allocated(func() { _ = make([]byte, 8<<20) })
	assert.GreaterOrEqual(t, alloc, uint64(8<<20), "Allocated counts what f allocates")
}
