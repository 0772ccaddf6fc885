package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/memory"
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

// trioAgainst runs the trio with args in a new directory whose workspace
// holds files survey files, against a stand-in server of cfg (recording),
// and returns the server and the run's events.
func trioAgainst(t *testing.T, cfg llmtest.ServerConfig, files int, args ...string) (*llmtest.Server, []event.Event) {
	t.Helper()
	t.Chdir(t.TempDir())
	survey(t, "trio-workspace", files)
	cfg.Reply, cfg.Record = surveyor(files), true
	s := llmtest.NewServer(cfg)
	url := s.Start()
	t.Cleanup(s.Close)
	out, stderr, err := runTrioTest(t, trioArgs(t, url, args...)...)
	require.NoError(t, err, stderr)
	return s, events(t, out)
}

// fileReads counts the read_file calls that succeeded.
func fileReads(evs []event.Event) int {
	n := 0
	for _, e := range evs {
		if e.Kind == event.ToolCall && e.Tool.Name == "read_file" && !e.Tool.Failed {
			n++
		}
	}
	return n
}

// memoryEvents returns the event.Memory events of one memory kind.
func memoryEvents(evs []event.Event, kind memory.EventKind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if memoryKind(e) == kind {
			out = append(out, e)
		}
	}
	return out
}

func contextEvents(evs []event.Event, kind event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestTrioContextWindow: against a stand-in Ollama with a 4096-token
// default, an 8192-token model and a KV cache whose counts leave out the
// cached prefix, the trio's tool loops read files of about 6,000 tokens
// each for many turns. No request is cut, none asks for less than the
// server's default or more than the model's length, every request bounds
// its reply, and compaction happens and is reported. The server either
// honours "truncate": false (0.17.4: its replies are trusted) or is one
// before it (0.3.0: its counts are judged, and cache hits are not cuts).
func TestTrioContextWindow(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ignoreTruncate bool
	}{{"current", false}, {"old", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, evs := trioAgainst(t, llmtest.ServerConfig{
				Models:         []llmtest.ModelSpec{{Name: defaultOllamaModel, ContextLength: 8192}},
				CacheSlots:     1,
				IgnoreTruncate: tc.ignoreTruncate,
			}, 5, "-cycles", "2")

			st := s.Stats()
			assert.Zero(t, st.Cut, "no request was cut")
			assert.Zero(t, st.Refused, "no request was refused")
			assert.LessOrEqual(t, st.MaxSent, 8192, "no prompt was over the model's window")
			assert.Positive(t, st.CachedTokens, "the KV cache served prompts, and its counts left them out")
			for _, c := range s.Calls() {
				assert.GreaterOrEqual(t, c.NumCtx, llmtest.DefaultServerContext, "never below the server's default")
				assert.LessOrEqual(t, c.NumCtx, 8192)
				assert.Positive(t, c.MaxTokens, "every request bounds its reply")
			}
			compacted := contextEvents(evs, event.ContextCompacted)
			require.NotEmpty(t, compacted, "the tool loops' histories were compacted, and it was reported")
			for _, e := range compacted {
				assert.Less(t, e.Context.After, e.Context.Before)
			}
			assert.Empty(t, contextEvents(evs, event.ContextOverflow), "nothing overflowed")
			assert.GreaterOrEqual(t, fileReads(evs), 15, "many turns of 6,000-token files")
		})
	}
}

// TestTrioRefusingServer: a current server that grants only 2048 tokens
// whatever num_ctx says and refuses longer prompts with HTTP 400 "request
// (N tokens) exceeds the available context size (2048 tokens)". Every
// refusal is recognised and reported, the agents learn the window from
// the first and fit their prompts to it, and their tool loops go on.
func TestTrioRefusingServer(t *testing.T) {
	s, evs := trioAgainst(t, llmtest.ServerConfig{MaxContext: 2048, CacheSlots: 1}, 3, "-cycles", "3")

	st := s.Stats()
	require.Positive(t, st.Refused, "the server refused prompts")
	assert.LessOrEqual(t, st.Refused, 3, "the agents adapt within a few requests")
	refusals := 0
	for _, e := range contextEvents(evs, event.ContextOverflow) {
		if e.Context.Kept == 0 && e.Context.Window == 2048 {
			refusals++
		}
	}
	assert.GreaterOrEqual(t, refusals, st.Refused, "every refusal is reported, with the window it stated")
	calls := s.Calls()
	require.Greater(t, len(calls), 8)
	for _, c := range calls[len(calls)-4:] {
		assert.LessOrEqual(t, c.Sent, 2048, "later prompts fit the 2048 tokens granted")
	}
	answered, refused := 0, false
	for _, c := range calls {
		switch {
		case c.Sent > c.Window:
			refused = true
		case refused:
			answered++
		}
	}
	assert.GreaterOrEqual(t, answered, 3, "after the first refusal, the agents' prompts fit and were answered")
}

// TestTrioNarrowServer: a server that grants only 2048 tokens whatever
// num_ctx says, and cuts silently (0.12.5, before "truncate"). Every cut
// request is reported, and after the first few the agents fit their
// prompts to 2048.
func TestTrioNarrowServer(t *testing.T) {
	s, evs := trioAgainst(t, llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true}, 3, "-cycles", "3")

	overflows := contextEvents(evs, event.ContextOverflow)
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

// TestReplyFlags: -reply-tokens and -tool-reply-tokens bound every reply
// of the trio's cycles and tool-loop turns.
func TestReplyFlags(t *testing.T) {
	o, err := parseRunFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, existence.DefaultMaxTokens, o.replyTokens)
	assert.Equal(t, toolloop.DefaultMaxTokens, o.toolReplyTokens)
	for _, bad := range [][]string{{"-reply-tokens", "-1"}, {"-tool-reply-tokens", "-1"}} {
		_, err := parseRunFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}

	s, _ := trioAgainst(t, llmtest.ServerConfig{Models: []llmtest.ModelSpec{{Name: defaultOllamaModel, ContextLength: 16384}}}, 1,
		"-cycles", "1", "-reply-tokens", "700", "-tool-reply-tokens", "1500")
	seen := map[int]int{}
	for _, c := range s.Calls() {
		require.Positive(t, c.MaxTokens, "every request bounds its reply")
		seen[c.MaxTokens]++
	}
	assert.Positive(t, seen[700], "the cycles' limit: %v", seen)
	assert.Positive(t, seen[1500], "the tool turns' limit: %v", seen)
}
