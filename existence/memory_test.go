package existence_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/store/memstore"
)

// memoryAgent returns an agent with a memory over its store, holding one
// memory, whose prompt has the memories section when section is set.
func memoryAgent(t *testing.T, section bool, model llm.Model) (*existence.Agent, *memory.Memory, *existencetest.Recorder) {
	t.Helper()
	return memoryAgentWith(t, llmtest.NewFakeEmbedder("", 0), section, model, nil)
}

// memoryAgentWith is memoryAgent with emb as the memory's embedder, and
// tweak (when not nil) applied to the agent's Config.
func memoryAgentWith(t *testing.T, emb llm.Embedder, section bool, model llm.Model, tweak func(*existence.Config)) (*existence.Agent, *memory.Memory, *existencetest.Recorder) {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	mem, err := memory.New(memory.Config{Store: store, Embedder: emb, NoBackfill: true})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close() })
	_, err = mem.Remember(ctx, "scout", memory.Note{Text: "FAILED: the rate limiter drops requests at night", Kind: memory.KindFailure})
	require.NoError(t, err)
	asm := prompt.Solo(prompt.Config{World: "A workspace."})
	if section {
		require.NoError(t, asm.InsertAfter(prompt.SectionLastOutcome, prompt.Memories()))
	}
	rec := &existencetest.Recorder{}
	cfg := existence.Config{
		ID: "scout", Name: "Cedar", Model: model, Store: store, Memory: existence.MemoryConfig{LongTerm: mem}, Prompt: asm,
		Timing: existence.TimingConfig{Clock: existencetest.NewClock(time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC))}, Observer: rec.Observe,
		Logger: slog.New(slog.DiscardHandler), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	a, err := existence.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	require.NoError(t, a.SayAsHost(ctx, "what is wrong with the rate limiter?"))
	return a, mem, rec
}

func TestPromptCarriesRecalledMemories(t *testing.T) {
	ctx := context.Background()
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"look at the rate limiter","reasoning":"asked"}`})
	a, mem, rec := memoryAgent(t, true, model)

	p, err := a.Preview(ctx)
	require.NoError(t, err)
	sec, ok := p.Section(prompt.SectionMemories)
	require.True(t, ok, "the preview shows the memories")
	assert.Equal(t, prompt.MemoriesHeader+"\n- FAILED: the rate limiter drops requests at night", sec.Text)
	list, err := mem.List(ctx, "scout")
	require.NoError(t, err)
	assert.Zero(t, list[0].AccessCount, "a preview changes no memory")

	require.NoError(t, a.Tick(ctx))
	reqs := model.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, reqs[0].Messages[0].Content, prompt.MemoriesHeader+"\n- FAILED: the rate limiter drops requests at night",
		"the cycle's prompt carries the memory recalled for the host's question")
	list, err = mem.List(ctx, "scout")
	require.NoError(t, err)
	assert.Equal(t, 1, list[0].AccessCount, "the cycle's recall counts")
	got := rec.Memory(memory.EventRecalled)
	require.Len(t, got, 1)
	assert.Equal(t, "scout", got[0].AgentID)
	require.NotNil(t, got[0].Memory)
	assert.Equal(t, 1, got[0].Memory.Count)
	assert.True(t, strings.HasSuffix(got[0].String(), "📚 recalled 1 memories for: what is wrong with the rate limiter?"), got[0].String())
}

func TestPromptWithoutMemoriesSection(t *testing.T) {
	ctx := context.Background()
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"look at the rate limiter","reasoning":"asked"}`})
	a, _, rec := memoryAgent(t, false, model)
	require.NoError(t, a.Tick(ctx))
	assert.NotContains(t, model.Requests()[0].Messages[0].Content, prompt.MemoriesHeader)
	assert.Empty(t, rec.Memory(memory.EventRecalled), "no section, no recall")
}

func TestMemoryEventsEndWithTheAgent(t *testing.T) {
	ctx := context.Background()
	a, mem, rec := memoryAgent(t, false, llmtest.NewFake())
	_, err := mem.Remember(ctx, "scout", memory.Note{Text: "while running"})
	require.NoError(t, err)
	n := len(rec.Memory(memory.EventStored))
	require.Positive(t, n)
	require.NoError(t, a.Close())
	_, err = mem.Remember(ctx, "scout", memory.Note{Text: "after close"})
	require.NoError(t, err)
	assert.Len(t, rec.Memory(memory.EventStored), n, "a closed agent hears nothing")
}

func TestDefaultMemoryQuery(t *testing.T) {
	id := identity.New("scout", "Cedar", time.Time{})
	assert.Empty(t, existence.DefaultMemoryQuery(&prompt.View{Identity: &id}), "nothing to ask about")
	id.Goals = []identity.Goal{{Objective: "map the workspace", Outcome: "12 directories"}}
	assert.Equal(t, "map the workspace 12 directories", existence.DefaultMemoryQuery(&prompt.View{Identity: &id}))
	v := &prompt.View{Identity: &id, Host: []identity.AgentMessage{{Text: "hello"}}}
	assert.Equal(t, "hello", existence.DefaultMemoryQuery(v), "a host message comes before the last goal")
	v.Task = &prompt.Task{Description: "fix the build"}
	assert.Equal(t, "fix the build", existence.DefaultMemoryQuery(v), "a task comes first")
}
