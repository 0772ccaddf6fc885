package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// get fetches url+path and returns the status and the scrubbed JSON (or
// the text, for a reply that is not JSON).
func get(t *testing.T, url, path string) (int, any) {
	t.Helper()
	resp, err := http.Get(url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return resp.StatusCode, string(raw)
	}
	return resp.StatusCode, scrubKeys(v, []string{"created", "modified_at", "expires_at"}) // ids here are model names: kept
}

// The listing endpoints keep their wire shape (golden files): the models
// served, and after a request with num_ctx, /api/ps shows the window
// asked for, as Ollama does.
func TestStandinListingsGolden(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{
		{Name: "qwen3.5:9b", ContextLength: 40960}, {Name: "nomic-embed-text", Embedding: true},
	}})
	url := s.Start()
	t.Cleanup(s.Close)
	status, _ := post(t, url+"/api/chat", chat("load the model", map[string]any{"num_ctx": 8192}, nil))
	require.Equal(t, http.StatusOK, status)
	for _, c := range []struct{ name, path string }{
		{"api_tags", "/api/tags"},
		{"api_ps", "/api/ps"},
		{"v1_models", "/v1/models"},
		{"root", "/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, got := get(t, url, c.path)
			assert.Equal(t, http.StatusOK, status)
			golden(t, "standin/"+c.name+".json", got)
		})
	}
}

// Fake.Add extends the script; Remaining counts what is left; Repeat
// answers with the last reply once the script is used up.
func TestFakeAddRemainingRepeat(t *testing.T) {
	f := llmtest.NewFake(llmtest.Reply{Text: "one"})
	assert.Equal(t, 1, f.Remaining())
	f.Add(llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"})
	assert.Equal(t, 3, f.Remaining())
	var got []string
	for range 3 {
		r, err := f.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		require.NoError(t, err)
		got = append(got, r.Text)
	}
	assert.Equal(t, []string{"one", "two", "three"}, got, "in order, added ones after")
	assert.Zero(t, f.Remaining())
	_, err := f.Generate(t.Context(), &llm.Request{})
	require.ErrorIs(t, err, llmtest.ErrExhausted)

	f.Repeat = true
	for range 3 {
		r, err := f.Generate(t.Context(), &llm.Request{})
		require.NoError(t, err)
		assert.Equal(t, "three", r.Text, "the last reply, forever")
	}
	assert.Equal(t, 7, f.Calls())
	assert.Len(t, f.Requests(), 7)
}
