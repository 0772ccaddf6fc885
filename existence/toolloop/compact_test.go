package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
)

// bigFile is a file of about 6,000 stand-in tokens, with its name at both
// ends.
func bigFile(name string) string {
	return name + " begins.\n" + strings.Repeat("The survey lists every room and what it holds. ", 700) + "\n" + name + " ends."
}

// reader is a model script for the stand-in: it reads files 1..n, one a
// turn, then answers; a summarising call gets summary.
func reader(n int, summary llmtest.Answer) func(c *llmtest.Call) llmtest.Answer {
	var mu sync.Mutex
	read := 0
	return func(c *llmtest.Call) llmtest.Answer {
		if c.Messages[0].Content == toolloop.SummaryPrompt {
			return summary
		}
		mu.Lock()
		defer mu.Unlock()
		if read >= n {
			return llmtest.Answer{Text: "Read all the files; the survey is complete."}
		}
		read++
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("file-%d.md", read)})
		return llmtest.Answer{Text: "Reading the next file.", ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", read), Name: "read_file", Arguments: args}}}
	}
}

type pathArgs struct {
	Path string `json:"path"`
}

func readTool() toolloop.Tool {
	return toolloop.NewTool("read_file", "reads a file", func(ctx context.Context, a pathArgs) (string, error) {
		return bigFile(a.Path), nil
	})
}

// standinExecutor runs a tool loop on an Ollama adapter against a stand-in
// server.
func standinExecutor(t *testing.T, cfg llmtest.ServerConfig, mod func(*toolloop.Config)) (*toolloop.Executor, *llmtest.Server) {
	t.Helper()
	cfg.Record = true
	s := llmtest.NewServer(cfg)
	url := s.Start()
	t.Cleanup(s.Close)
	m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
	require.NoError(t, err)
	c := toolloop.Config{Model: m, Tools: []toolloop.Tool{readTool()}, MaxSteps: 30, MaxSameCalls: 30}
	if mod != nil {
		mod(&c)
	}
	e, err := toolloop.New(c)
	require.NoError(t, err)
	return e, s
}

func compactions(ev *events) []event.ContextStats {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []event.ContextStats
	for _, e := range ev.all {
		if e.Kind == event.ContextCompacted {
			out = append(out, *e.Context)
		}
	}
	return out
}

// TestCompactionSummary: on a stock Ollama (4096 default) with an
// 8192-token model, a tool loop that reads 6,000-token files for many
// turns is never cut and never asks for more than 8192 tokens: tool
// results are capped in tokens and older turns are summarised.
func TestCompactionSummary(t *testing.T) {
	e, s := standinExecutor(t, llmtest.ServerConfig{
		Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}},
		Reply:  reader(6, llmtest.Answer{Text: "Read file-1.md to file-4.md: each lists rooms and their contents."}),
	}, nil)
	ev := &events{}
	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)

	st := s.Stats()
	assert.Zero(t, st.Cut, "no request was cut")
	assert.Zero(t, st.Refused)
	assert.LessOrEqual(t, st.MaxSent, 8192)
	for _, c := range s.Calls() {
		assert.LessOrEqual(t, c.NumCtx, 8192, "never more than the model's length")
	}
	cs := compactions(ev)
	require.NotEmpty(t, cs, "the history was compacted")
	summaries := 0
	for _, c := range cs {
		assert.Less(t, c.After, c.Before)
		assert.Equal(t, 8192, c.Window)
		if c.Folded == 0 { // only the kept turns' results were cut
			assert.Equal(t, toolloop.MethodElision, c.Method)
			continue
		}
		assert.Equal(t, toolloop.MethodSummary, c.Method, "folded turns are summarised")
		summaries++
	}
	assert.Positive(t, summaries)
	// The goal stays verbatim at the top of every request.
	for _, c := range s.Calls() {
		if c.Messages[0].Content != toolloop.SummaryPrompt {
			assert.Contains(t, c.Prompt, "Your goal: write a field report")
		}
	}
	// Each tool result was capped to a quarter of the window.
	for _, tc := range ev.tools() {
		assert.Contains(t, tc.Result, "file-", "the head is kept")
	}
}

// TestCompactionElision: when the summarising call fails, older turns are
// folded into a deterministic digest.
func TestCompactionElision(t *testing.T) {
	e, s := standinExecutor(t, llmtest.ServerConfig{
		Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}},
		Reply:  reader(5, llmtest.Answer{Status: 500, Error: "llama runner process has terminated"}),
	}, nil)
	ev := &events{}
	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)
	assert.Zero(t, s.Stats().Cut)
	cs := compactions(ev)
	require.NotEmpty(t, cs)
	assert.Equal(t, toolloop.MethodElision, cs[0].Method)
	var digest string
	for _, c := range s.Calls() {
		if strings.Contains(c.Prompt, "folded to fit the context window") {
			digest = c.Prompt
		}
	}
	assert.Contains(t, digest, "called read_file")
	assert.Contains(t, digest, "characters elided]", "long results are cut to head and tail")
	assert.Contains(t, digest, "Your plan: Reading the next file.")
}

// TestCompactionAfterOverflow: a server that grants only 2048 tokens and
// cuts silently. The cut is caught, the history compacted and the turn
// tried again.
func TestCompactionAfterOverflow(t *testing.T) {
	e, s := standinExecutor(t, llmtest.ServerConfig{
		MaxContext: 2048, IgnoreTruncate: true,
		Reply: reader(2, llmtest.Answer{Text: "Read file-1.md."}),
	}, func(c *toolloop.Config) { c.MaxResultTokens = 3000 })
	ev := &events{}
	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)
	assert.Positive(t, s.Stats().Cut, "the first long prompt was cut, and caught")
	require.NotEmpty(t, compactions(ev))
	last := s.Calls()[len(s.Calls())-1]
	assert.False(t, last.Cut, "the prompts after it fit the 2048 tokens granted")
}

func TestCompactAtValidated(t *testing.T) {
	for _, v := range []float64{-0.1, 1.5} {
		_, err := toolloop.New(toolloop.Config{CompactAt: v})
		require.Error(t, err, "%v", v)
	}
}
