package existence_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
)

// countingEmbedder reports 1,000 tokens per Embed call, as a server
// reporting its counts does (middleware.ReportEmbedUsage).
type countingEmbedder struct {
	llm.Embedder
	calls atomic.Int64
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	middleware.ReportEmbedUsage(ctx, 1000)
	return e.Embedder.Embed(ctx, texts)
}

// TestBudgetCountsEmbeddings: the embedding tokens an agent's recall
// causes count toward its token budget, beside its model calls, and so do
// those of its goal's executor; a preview's do not, nor do those of
// embeddings made outside the agent.
func TestBudgetCountsEmbeddings(t *testing.T) {
	ctx := context.Background()
	emb := &countingEmbedder{Embedder: llmtest.NewFakeEmbedder("", 0)}
	model := llmtest.NewFake(llmtest.Reply{Text: `{"action":"goal","content":"look at the rate limiter","reasoning":"asked"}`})
	ran := make(chan struct{})
	exec := existence.ExecutorFunc(func(ctx context.Context, asg existence.Assignment) (existence.Outcome, error) {
		defer close(ran)
		middleware.ReportEmbedUsage(ctx, 500) // as the executor's recall of asg.Memory would
		return existence.Outcome{Status: identity.Done, Summary: "looked"}, nil
	})
	a, _, _ := memoryAgentWith(t, emb, true, model, func(c *existence.Config) {
		c.Executor, c.Calls.Budget = exec, budget.Budget{Tokens: 1_000_000, Window: time.Hour}
	})
	outside := emb.calls.Load() // the memory stored before the agent: no agent caused it

	_, err := a.Preview(ctx)
	require.NoError(t, err)
	require.Greater(t, emb.calls.Load(), outside, "the preview recalled")
	assert.Zero(t, a.Status().Budget.Used, "a preview's embedding is not the agent's")
	previewed := emb.calls.Load()

	require.NoError(t, a.Tick(ctx))
	embedded := emb.calls.Load() - previewed
	require.Positive(t, embedded, "the cycle's recall embedded its query")
	<-ran
	st := a.Status()
	calls := st.Usage.InputTokens + st.Usage.OutputTokens
	require.Positive(t, calls, "the model call's tokens")
	assert.Equal(t, calls+1000*embedded+500, st.Budget.Used, "model and embedding tokens, the goal's too")
	// The usage reports what the budget counts: the embedding tokens in
	// all and under the embedding model.
	assert.Equal(t, 1000*embedded+500, st.Usage.EmbedTokens)
	assert.Equal(t, st.Budget.Used, st.Usage.Total())
	var byModel int64
	for _, m := range st.UsageByModel {
		byModel += m.Total()
		if m.Model == emb.Model() {
			assert.Equal(t, 1000*embedded+500, m.EmbedTokens)
			assert.Zero(t, m.InputTokens+m.OutputTokens)
		}
	}
	assert.Equal(t, st.Budget.Used, byModel, "usage_by_model adds up to the budget's count")
	assert.Contains(t, modelsOf(st.UsageByModel), emb.Model())
}

func modelsOf(us []existence.ModelUsage) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Model)
	}
	return out
}
