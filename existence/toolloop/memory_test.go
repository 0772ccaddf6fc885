package toolloop_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
)

// recorder is an executor model that writes a note on its first turn and
// answers on its second, keeping every request.
type recorder struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

func (r *recorder) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if len(req.Messages) == 2 {
		return &llm.Response{ToolCalls: []llm.ToolCall{call("", "note", `{"path":"report.md","content":"the rate limiter drops requests at night"}`)}}, nil
	}
	return &llm.Response{Text: "wrote report.md about the rate limiter"}, nil
}

// firstTurns returns the user message of each goal's first turn.
func (r *recorder) firstTurns() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, req := range r.reqs {
		if len(req.Messages) == 2 {
			out = append(out, req.Messages[1].Content)
		}
	}
	return out
}

// TestAgentLearnsAcrossGoals is the loop with memory on: the first goal's
// step outcome and summary are stored, and a later goal's planning
// request (its first turn) carries them in the original's block.
func TestAgentLearnsAcrossGoals(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	mem, err := memory.New(memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("nomic-embed-text", 768), NoBackfill: true})
	require.NoError(t, err)
	defer mem.Close()
	exec := &recorder{}
	k := &kit{}
	e, err := toolloop.New(toolloop.Config{Tools: k.tools()})
	require.NoError(t, err)
	clock := existencetest.NewClock(time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC))
	rec := &existencetest.Recorder{}
	a, err := existence.New(ctx, existence.Config{
		ID: "scout", Name: "Cedar", Store: store, Memory: existence.MemoryConfig{LongTerm: mem}, Executor: e, Timing: existence.TimingConfig{Clock: clock},
		Model: llmtest.NewFake(
			llmtest.Reply{Text: `{"action":"goal","content":"write a report on the rate limiter","reasoning":"r"}`},
			llmtest.Reply{Text: `{"action":"goal","content":"fix the rate limiter that drops requests","reasoning":"r"}`},
		),
		Calls: existence.CallConfig{ExecutorModel: exec, Retry: middleware.RetryPolicy{Attempts: 1}}, Observer: rec.Observe, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	defer a.Close()

	require.NoError(t, a.Tick(ctx))
	require.NoError(t, a.WaitGoal(ctx))
	recs, err := store.Memories(ctx, "scout")
	require.NoError(t, err)
	var texts []string
	for _, r := range recs {
		texts = append(texts, string(r.Kind)+": "+r.Text)
	}
	assert.Equal(t, []string{
		"outcome: Goal 'write a report on the rate limiter' step note: wrote report.md",
		"reflection: Goal completed: 'write a report on the rate limiter'. Tool sequence: note. Result: wrote report.md about the rate limiter. Steps: 2.",
	}, texts, "the step's outcome and the goal's summary are stored")
	assert.NotEmpty(t, rec.Memory(memory.EventStored), "memory events reach the agent's observer")

	clock.Advance(6 * time.Second)
	require.NoError(t, a.Tick(ctx))
	require.NoError(t, a.WaitGoal(ctx))
	turns := exec.firstTurns()
	require.Len(t, turns, 2)
	assert.NotContains(t, turns[0], prompt.MemoriesHeader, "nothing to recall before the first goal")
	assert.Equal(t, "Pursue your goal now: fix the rate limiter that drops requests\n\n"+prompt.MemoriesHeader+
		"\n- Goal completed: 'write a report on the rate limiter'. Tool sequence: note. Result: wrote report.md about the rate limiter. Steps: 2."+
		"\n- Goal 'write a report on the rate limiter' step note: wrote report.md",
		turns[1], "the later goal's planning request carries the recalled block, verbatim (the step's outcome, below the 0.35 cosine threshold, is found by its words)")
	assert.NotEmpty(t, rec.Memory(memory.EventRecalled))
}

func memExecutor(t *testing.T, m llm.Model, mod func(*toolloop.Config)) (*toolloop.Executor, *memory.Memory, *memstore.Store) {
	t.Helper()
	store := memstore.New()
	mem, err := memory.New(memory.Config{Store: store, Embedder: llmtest.NewFakeEmbedder("", 0), NoBackfill: true})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close() })
	return newExecutor(t, m, &kit{}, func(c *toolloop.Config) {
		c.Memory = mem
		if mod != nil {
			mod(c)
		}
	}), mem, store
}

func TestFailedGoalIsRemembered(t *testing.T) {
	fail := call("", "fail", `{"text":"x"}`)
	e, _, store := memExecutor(t, llmtest.NewFake(tools(fail), tools(fail), tools(fail), tools(fail)), nil)
	out, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	require.Equal(t, identity.Abandoned, out.Status)
	recs, err := store.Memories(context.Background(), "cedar-1")
	require.NoError(t, err)
	require.Len(t, recs, 1, "failed steps are not outcomes; the abandoned goal is one failure")
	assert.Equal(t, memory.KindFailure, recs[0].Kind)
	assert.Equal(t, "FAILED: Goal 'write a field report' abandoned: "+out.Summary, recs[0].Text)
	assert.Equal(t, memory.DefaultImportance(memory.KindFailure), recs[0].Importance)
}

func TestInterruptedGoalTeachesNothing(t *testing.T) {
	e, _, store := memExecutor(t, llmtest.NewFake(tools(call("", "block", `{"text":"x"}`))), nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(0, cancel)
	out, err := e.Execute(ctx, assignment(nil))
	require.NoError(t, err)
	require.Equal(t, identity.Abandoned, out.Status)
	recs, err := store.Memories(context.Background(), "cedar-1")
	require.NoError(t, err)
	assert.Empty(t, recs, "an interrupted goal is not a failure")
}

func TestMemoryTools(t *testing.T) {
	model := llmtest.NewFake(
		tools(call("", "remember", `{"text":"the api key lives in config/secrets.env","important":true}`)),
		tools(call("", "recall", `{"query":"where is the api key","k":2}`)),
		final("found it"),
	)
	ev := &events{}
	e, mem, _ := memExecutor(t, model, nil)
	out, err := e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status)
	reqs := model.Requests()
	var names []string
	for _, d := range reqs[0].Tools {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"echo", "note", "fail", "block", "remember", "recall"}, names, "the memory tools are offered after the application's")
	assert.Contains(t, reqs[0].Messages[0].Content, "remember, recall")
	calls := ev.tools()
	require.Len(t, calls, 2)
	assert.Regexp(t, `^Remembered \(mem-[0-9a-f]{12}\)\.$`, calls[0].Result)
	assert.Equal(t, "- the api key lives in config/secrets.env", calls[1].Result)
	st, err := mem.Stats(context.Background(), "cedar-1")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Important)
	assert.Equal(t, 2, st.Memories, "the note and the goal's summary; memory tools are not stored as outcomes")
}

func TestNoMemory(t *testing.T) {
	model := llmtest.NewFake(tools(call("", "echo", `{"text":"x"}`)), final("done"))
	e, _, store := memExecutor(t, model, func(c *toolloop.Config) { c.NoMemory = true })
	_, err := e.Execute(context.Background(), assignment(nil))
	require.NoError(t, err)
	for _, d := range model.Requests()[0].Tools {
		assert.NotContains(t, []string{"remember", "recall"}, d.Name)
	}
	recs, err := store.Memories(context.Background(), "cedar-1")
	require.NoError(t, err)
	assert.Empty(t, recs)
}

// TestRecallBlockStaysWithTheGoal: on a stand-in Ollama serving a chat
// model and nomic-embed-text, a goal whose history is compacted keeps the
// recalled block at the top of every request, with the goal.
func TestRecallBlockStaysWithTheGoal(t *testing.T) {
	e, s := standinExecutor(t, llmtest.ServerConfig{
		Models: []llmtest.ModelSpec{{Name: "qwen3.5:9b", ContextLength: 8192}, {Name: "nomic-embed-text", Embedding: true}},
		Reply:  reader(6, llmtest.Answer{Text: "Read the files: each lists rooms and their contents."}),
	}, nil)
	emb, err := ollama.NewEmbedder(ollama.EmbedConfig{URL: s.Start()}) // the same stand-in
	require.NoError(t, err)
	mem, err := memory.New(memory.Config{Store: memstore.New(), Embedder: emb, NoBackfill: true})
	require.NoError(t, err)
	defer mem.Close()
	for _, text := range []string{"FAILED: Goal 'write a field report' abandoned: the survey files are too long to read whole", "a field report needs every room of the survey"} {
		_, err := mem.Remember(context.Background(), "cedar-1", memory.Note{Text: text})
		require.NoError(t, err)
	}
	ev := &events{}
	a := assignment(ev)
	a.Memory = mem
	out, err := e.Execute(context.Background(), a)
	require.NoError(t, err)
	assert.Equal(t, identity.Done, out.Status, out.Summary)
	require.NotEmpty(t, compactions(ev), "the history was compacted")
	n := 0
	for _, c := range s.Calls() {
		if c.API != "ollama" || c.Messages[0].Content == toolloop.SummaryPrompt {
			continue
		}
		n++
		assert.Contains(t, c.Prompt, prompt.MemoriesHeader+"\n- ", "request %d keeps the recalled block", n)
		assert.Contains(t, c.Prompt, "Pursue your goal now: write a field report")
	}
	assert.Greater(t, n, 2)
}

func TestOutcomeMemory(t *testing.T) {
	long := strings.Repeat("x", 300)
	assert.Equal(t, "Goal 'map it' step list_files: a b "+strings.Repeat("x", 196), toolloop.OutcomeMemory("map it", "list_files", "a\n b  "+long))
	assert.Equal(t, fmt.Sprintf("Goal '%s' step t: ok", "g"), toolloop.OutcomeMemory("g", "t", "ok"))
}

// TestRecalledMemoriesCarryNoInvisibleCharacters: a memory holding a tag
// character (U+E0041), a zero-width space and a right-to-left mark — an
// imported one, stored as it came — reaches the model through the recall
// tool and the goal's recalled block without them.
func TestRecalledMemoriesCarryNoInvisibleCharacters(t *testing.T) {
	invisible := []string{"\U000E0041", "\u200B", "\u200F"}
	model := llmtest.NewFake(
		tools(call("", "recall", `{"query":"the api key","k":2}`)),
		final("found it"),
	)
	e, mem, _ := memExecutor(t, model, nil)
	_, err := mem.Remember(context.Background(), "cedar-1", memory.Note{
		Text: "the api key" + strings.Join(invisible, "") + "\U000E0069\U000E0067 lives in config/secrets.env", Kind: memory.KindObservation,
	})
	require.NoError(t, err)
	ev := &events{}
	_, err = e.Execute(context.Background(), assignment(ev))
	require.NoError(t, err)
	calls := ev.tools()
	require.Len(t, calls, 1)
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	shown := 0
	for _, req := range reqs {
		for _, m := range req.Messages {
			for _, c := range invisible {
				assert.NotContains(t, m.Content, c, "%s message", m.Role)
			}
			if strings.Contains(m.Content, "the api key lives in config/secrets.env") {
				shown++
			}
		}
	}
	assert.GreaterOrEqual(t, shown, 1, "the recalled memory reaches the model, cleaned")
}
