package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// surveyor scripts the stand-in model for the trio: a cycle chooses a goal;
// a goal's tool loop reads the workspace's big files, one a turn, then
// answers; a summarising call summarises.
func surveyor(files int) func(c *llmtest.Call) llmtest.Answer {
	var mu sync.Mutex
	read := map[string]int{} // per agent
	return func(c *llmtest.Call) llmtest.Answer {
		first := c.Messages[0].Content
		switch {
		case len(c.Tools) == 0 && strings.Contains(first, "work log"):
			return llmtest.Answer{Text: "Read the survey files; each lists rooms and what they hold."}
		case len(c.Tools) == 0:
			return llmtest.Answer{Text: `{"action":"goal","content":"survey the workspace files and write what they hold","reasoning":"I want to know what is here"}`}
		}
		name := agentName(first)
		mu.Lock()
		defer mu.Unlock()
		if read[name] >= files {
			read[name] = 0
			return llmtest.Answer{Text: "Surveyed every file."}
		}
		read[name]++
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("survey/part-%d.md", read[name])})
		return llmtest.Answer{Text: "Reading the next part.", ToolCalls: []llm.ToolCall{{Name: "read_file", Arguments: args}}}
	}
}

// survey writes files of about 6,000 stand-in tokens into the workspace.
func survey(t *testing.T, dir string, n int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "survey"), 0o700))
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("Part %d begins.\n", i) + strings.Repeat("The survey lists every room and what it holds. ", 700)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "survey", fmt.Sprintf("part-%d.md", i)), []byte(text), 0o600))
	}
}

func contextEvents(evs []existence.Event, kind existence.EventKind) []existence.Event {
	var out []existence.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestTrioContextWindow: against a stand-in Ollama with a 4096-token
// default and an 8192-token model, the trio's tool loops read files of
// about 6,000 tokens each for many turns. No request is cut, none asks for
// more than 8192 tokens, and compaction happens and is reported.
func TestTrioContextWindow(t *testing.T) {
	t.Chdir(t.TempDir())
	survey(t, "trio-workspace", 5)
	s := llmtest.NewServer(llmtest.ServerConfig{
		Models: []llmtest.ModelSpec{{Name: defaultOllamaModel, ContextLength: 8192}},
		Reply:  surveyor(5), Record: true,
	})
	url := s.Start()
	t.Cleanup(s.Close)

	out, stderr, err := runTrioTest(t, trioArgs(t, url, "-cycles", "2")...)
	require.NoError(t, err, stderr)
	evs := events(t, out)

	st := s.Stats()
	assert.Zero(t, st.Cut, "no request was cut")
	assert.Zero(t, st.Refused, "no request was refused")
	assert.LessOrEqual(t, st.MaxSent, 8192, "no prompt was over the model's window")
	for _, c := range s.Calls() {
		assert.LessOrEqual(t, c.NumCtx, 8192)
	}
	compacted := contextEvents(evs, existence.EventContextCompacted)
	require.NotEmpty(t, compacted, "the tool loops' histories were compacted, and it was reported")
	for _, e := range compacted {
		assert.Less(t, e.Context.After, e.Context.Before)
	}
	assert.Empty(t, contextEvents(evs, existence.EventContextOverflow), "nothing overflowed")
	var reads int
	for _, e := range evs {
		if e.Kind == existence.EventToolCall && e.Tool.Name == "read_file" && !e.Tool.Failed {
			reads++
		}
	}
	assert.GreaterOrEqual(t, reads, 15, "many turns of 6,000-token files")
}

// TestTrioNarrowServer: a server that grants only 2048 tokens whatever
// num_ctx says, and cuts silently. Every cut request is reported, and
// after the first few the agents fit their prompts to 2048.
func TestTrioNarrowServer(t *testing.T) {
	t.Chdir(t.TempDir())
	survey(t, "trio-workspace", 3)
	s := llmtest.NewServer(llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true, Reply: surveyor(3), Record: true})
	url := s.Start()
	t.Cleanup(s.Close)

	out, stderr, err := runTrioTest(t, trioArgs(t, url, "-cycles", "3")...)
	require.NoError(t, err, stderr)
	evs := events(t, out)

	overflows := contextEvents(evs, existence.EventContextOverflow)
	cutReported := 0
	for _, e := range overflows {
		if e.Context.Kept > 0 {
			cutReported++
		}
	}
	st := s.Stats()
	require.Positive(t, st.Cut, "the server cut prompts")
	assert.Equal(t, st.Cut, cutReported, "every cut request is reported")
	calls := s.Calls()
	require.Greater(t, len(calls), 8)
	for _, c := range calls[len(calls)-4:] {
		assert.False(t, c.Cut, "after the first few, prompts fit the 2048 tokens granted")
		assert.LessOrEqual(t, c.Sent, 2048)
	}
}

// TestParseStandinWindow: the stand-in spec's settings for windows, the
// KV cache and refusals.
func TestParseStandinWindow(t *testing.T) {
	cfg, err := parseStandin("standin:?context=4096&model-context=8192&max-context=2048&cache=4&overflow=refuse&wording=legacy&version=0.30.1&openai=llamacpp")
	require.NoError(t, err)
	assert.Equal(t, 4096, cfg.DefaultContext)
	assert.Equal(t, 8192, cfg.Models[0].ContextLength)
	assert.Equal(t, 2048, cfg.MaxContext)
	assert.Equal(t, 4, cfg.CacheSlots)
	assert.True(t, cfg.RefuseOverflow)
	assert.True(t, cfg.LegacyRefusal)
	assert.Equal(t, "0.30.1", cfg.Version)
	assert.Equal(t, "llamacpp", cfg.OpenAIFlavor)

	cfg, err = parseStandin("standin:?overflow=cut&cache=0")
	require.NoError(t, err)
	assert.True(t, cfg.IgnoreTruncate)
	assert.Zero(t, cfg.CacheSlots)

	for _, bad := range []string{"standin:?overflow=drop", "standin:?wording=old", "standin:?openai=tgi", "standin:?cache=-1", "standin:?max-context=x"} {
		_, err := parseStandin(bad)
		assert.Error(t, err, bad)
	}
}
