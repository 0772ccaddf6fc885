package cli

import (
	"encoding/json"
	"net/http"
	neturl "net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/monitor"
	"github.com/existence-loop/sdk/store/filestore"
)

// embedServer starts a stand-in Ollama serving nomic-embed-text.
func embedServer(t *testing.T) string {
	t.Helper()
	s := llmtest.NewServer(llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: "nomic-embed-text", Embedding: true}}})
	url := s.Start()
	t.Cleanup(s.Close)
	return url
}

// importedStore imports the real sample into a new directory store.
func importedStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	code, _, errOut := runCLI(t, "import", "-hollow", hollowSample(t), "-store", dir)
	require.Equal(t, 0, code, errOut)
	return dir
}

func TestMemoryStatsRecallReembedForget(t *testing.T) {
	dir := importedStore(t)
	url := embedServer(t)

	code, out, errOut := runCLI(t, "memory", "stats", "-store", dir, "-agent", "scout", "-json")
	require.Equal(t, 0, code, errOut)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, map[string]any{"memories": 1967.0, "embedded": 68.0, "pending": 1899.0, "model": "nomic-embed-text", "dim": 768.0}, st,
		"exactly the keys memories, embedded, pending, model, dim")

	code, out, errOut = runCLI(t, "memory", "reembed", "-store", dir, "-agent", "scout", "-embed-url", url)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "scout: 1967 memories embedded with nomic-embed-text (768 dimensions)\n", out)
	code, out, _ = runCLI(t, "memory", "stats", "-store", dir, "-agent", "scout")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "scout: 1967 memories: 1967 embedded, 0 pending; nomic-embed-text (768 dimensions)")

	// The stand-in embeds by shared words: a query with a memory's words
	// finds it first.
	code, out, errOut = runCLI(t, "memory", "recall", "-store", dir, "-agent", "scout", "-embed-url", url, "-k", "3", "-relevance-only", "-json",
		"synthesize_capability dynamic_resource_optimizer submitted_to_quorum")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got)
	require.LessOrEqual(t, len(got), 3)
	for _, k := range []string{"id", "text", "score", "relevance", "recency", "importance"} {
		assert.Contains(t, got[0], k)
	}
	assert.Len(t, got[0], 6, "exactly id, text, score, relevance, recency, importance")
	assert.Contains(t, got[0]["text"], "dynamic_resource_optimizer")
	assert.Equal(t, got[0]["score"], got[0]["relevance"], "relevance only: the score is the cosine")
	id := got[0]["id"].(string)

	// Nothing near enough: the count says how many were compared.
	code, out, errOut = runCLI(t, "memory", "recall", "-store", dir, "-agent", "scout", "-embed-url", url, "-min-score", "0.999", "zzzq unrelated words")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "no memory of scout matches: compared with 1967 memories, none reached relevance 0.999 (-min-score)\n", out)

	code, out, errOut = runCLI(t, "memory", "forget", "-store", dir, "-agent", "scout", id, "mem-000000000000")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "scout: forgot 1 of 2 memories\n", out)
	code, out, _ = runCLI(t, "memory", "stats", "-store", dir, "-agent", "scout", "-json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"memories":1966`)
}

func TestMemoryRecallWithoutEmbedder(t *testing.T) {
	dir := importedStore(t)
	code, out, errOut := runCLI(t, "memory", "recall", "-store", dir, "-agent", "scout", "-embed-url", "http://127.0.0.1:1", "-k", "2", "what happened")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "ranked by its words, recency and importance")
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 2)
	code, _, errOut = runCLI(t, "memory", "recall", "-store", dir, "-agent", "scout", "-embed-url", "http://127.0.0.1:1", "-relevance-only", "what happened")
	assert.Equal(t, ExitError, code, "relevance only needs the embedder")
	assert.Contains(t, errOut, "cannot reach")
}

func TestMemoryRunningAgent(t *testing.T) {
	dir := importedStore(t)
	s, err := filestore.Open(dir, filestore.Options{})
	require.NoError(t, err)
	unlock, err := s.Lock("scout") // the agent runs in another process
	require.NoError(t, err)
	defer unlock()
	code, _, errOut := runCLI(t, "memory", "forget", "-store", dir, "-agent", "scout", "mem-x")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "already running")
	code, _, errOut = runCLI(t, "memory", "recall", "-store", dir, "-agent", "scout", "-embed-url", embedServer(t), "anything")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "scout is running; the recall only reads")
}

func TestMemoryUsageErrors(t *testing.T) {
	dir := importedStore(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memory"}, "which operation?"},
		{[]string{"memory", "dream", "-agent", "scout"}, `unknown operation "dream"`},
		{[]string{"memory", "stats", "-store", dir}, "-agent ID is required"},
		{[]string{"memory", "stats", "-store", dir, "-agent", "../x"}, "-agent"},
		{[]string{"memory", "stats", "-store", dir, "-agent", "scout", "-k", "3"}, "stats does not take -k"},
		{[]string{"memory", "recall", "-store", dir, "-agent", "scout"}, "recall needs a QUERY"},
		{[]string{"memory", "recall", "-store", dir, "-agent", "scout", "-k", "0", "q"}, "-k 0"},
		{[]string{"memory", "recall", "-store", dir, "-agent", "scout", "-min-score", "2", "q"}, "-min-score 2"},
		{[]string{"memory", "forget", "-store", dir, "-agent", "scout"}, "forget needs the ids"},
		{[]string{"memory", "stats", "-store", dir, "-agent", "scout", "extra"}, "takes no arguments"},
		{[]string{"memory", "recall", "-store", dir, "-agent", "scout", "-embed-provider", "carrier", "q"}, "-embed-provider"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		assert.Equal(t, ExitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	code, _, errOut := runCLI(t, "memory", "stats", "-store", filepath.Join(t.TempDir(), "none"), "-agent", "scout")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "no store at")
}

// TestServeMemories: serve over a store with imported memories shows
// each agent's counts and recalls with the stand-in embedder.
func TestServeMemories(t *testing.T) {
	dir := importedStore(t)
	url := embedServer(t)
	code, _, errOut := runCLI(t, "memory", "reembed", "-store", dir, "-agent", "scout", "-embed-url", url)
	require.Equal(t, 0, code, errOut)
	base, _ := startServe(t, "-store", dir, "-embed-url", url)

	resp, err := http.Get(base + "/api/agents/scout/memories?k=3&q=" + neturl.QueryEscape("synthesize_capability dynamic_resource_optimizer"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var page monitor.MemoriesPage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	require.NotEmpty(t, page.Memories)
	assert.Contains(t, page.Memories[0].Text, "synthesize_capability", "ranked by the recall (the stand-in embeds by shared words)")
	require.NotNil(t, page.Memories[0].Relevance)
	assert.Equal(t, 1967, page.Stats.Memories)

	resp, err = http.Get(base + "/api/agents")
	require.NoError(t, err)
	defer resp.Body.Close()
	var agents monitor.AgentsPage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&agents))
	require.Len(t, agents.Agents, 1)
	assert.Equal(t, &monitor.MemoryCounts{Memories: 1967, Embedded: 1967}, agents.Agents[0].Memories)
}
