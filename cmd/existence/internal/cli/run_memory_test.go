package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/filestore"
)

// noteTaker scripts the stand-in model: each cycle chooses a goal about
// the rate limiter; each goal writes a note on its first turn and answers
// on its second.
func noteTaker() func(c *llmtest.Call) llmtest.Answer {
	var mu sync.Mutex
	goals := map[string]int{}
	return func(c *llmtest.Call) llmtest.Answer {
		first := c.Messages[0].Content
		if len(c.Tools) == 0 {
			name := agentName(first)
			mu.Lock()
			goals[name]++
			n := goals[name]
			mu.Unlock()
			if n == 1 {
				return llmtest.Answer{Text: `{"action":"goal","content":"write notes on the rate limiter","reasoning":"it drops requests"}`}
			}
			return llmtest.Answer{Text: `{"action":"goal","content":"fix the rate limiter that drops requests","reasoning":"the notes say where"}`}
		}
		if len(c.Messages) == 2 {
			args, _ := json.Marshal(map[string]string{"path": strings.ToLower(agentName(first)) + "-rate-limiter.md", "content": "The rate limiter drops requests at night."})
			return llmtest.Answer{ToolCalls: []llm.ToolCall{{Name: "write_file", Arguments: args}}}
		}
		return llmtest.Answer{Text: "wrote notes on the rate limiter"}
	}
}

// TestTrioWithMemory: a trio run with -memory, against a stand-in Ollama
// serving the chat model and nomic-embed-text, stores each goal's outcomes
// in the store, and the later goal's planning request (its tool loop's
// first turn) carries the recalled block.
func TestTrioWithMemory(t *testing.T) {
	t.Chdir(t.TempDir())
	s := llmtest.NewServer(llmtest.ServerConfig{
		Models: []llmtest.ModelSpec{{Name: defaultOllamaModel}, {Name: "nomic-embed-text", Embedding: true}},
		Reply:  noteTaker(), Record: true,
	})
	url := s.Start()
	t.Cleanup(s.Close)

	out, stderr, err := runTrioTest(t, trioArgs(t, url, "-cycles", "2", "-memory", "-embed-url", url)...)
	require.NoError(t, err, stderr)
	evs := events(t, out)
	assert.NotEmpty(t, memoryEvents(evs, memory.EventStored), "memory events reach the thoughts log")
	assert.Empty(t, memoryEvents(evs, memory.EventPending), "every memory was embedded at once")

	store, err := filestore.Open("trio-state", filestore.Options{})
	require.NoError(t, err)
	recs, err := store.Memories(context.Background(), "scout")
	require.NoError(t, err)
	var outcome, summary bool
	for _, r := range recs {
		outcome = outcome || (r.Kind == memory.KindOutcome && strings.HasPrefix(r.Text, "Goal 'write notes on the rate limiter' step write_file: "))
		summary = summary || (r.Kind == memory.KindReflection && strings.HasPrefix(r.Text, "Goal completed: 'write notes on the rate limiter'."))
		assert.False(t, r.Pending(), "embedded with the stand-in's nomic-embed-text")
	}
	assert.True(t, outcome, "the step's outcome is stored")
	assert.True(t, summary, "the goal's summary is stored")

	var planned []string // the first turn of each of Cedar's goals
	for _, c := range s.Calls() {
		if len(c.Tools) > 0 && len(c.Messages) == 2 && agentName(c.Messages[0].Content) == "Cedar" {
			planned = append(planned, c.Messages[1].Content)
		}
	}
	require.Len(t, planned, 2)
	assert.NotContains(t, planned[0], prompt.MemoriesHeader)
	assert.Contains(t, planned[1], "Pursue your goal now: fix the rate limiter that drops requests\n\n"+prompt.MemoriesHeader+"\n- ",
		"the later goal's planning request carries the recalled block")
	assert.Contains(t, planned[1], "rate limiter")
}

// TestTrioMemoryDryRun: -memory changes nothing in a dry run's prompts
// while there are no memories.
func TestTrioMemoryDryRun(t *testing.T) {
	t.Chdir(t.TempDir())
	plain, _, err := runTrioTest(t, "-dry-run", "-now", "2026-04-13T12:00:00Z")
	require.NoError(t, err)
	with, _, err := runTrioTest(t, "-dry-run", "-now", "2026-04-13T12:00:00Z", "-memory", "-embed-url", "http://127.0.0.1:1")
	require.NoError(t, err)
	assert.Equal(t, plain, with)
}
