package existence

import (
	"cmp"
	"slices"
	"sync"

	"github.com/existence-loop/sdk/existence/event"
)

// Usage is the tokens model calls and embeddings used: totals since
// [New], in tokens as the server counted them, or as estimated where it
// gave no count (middleware.UsageOf). It counts what the token budget counts
// ([Config].Calls.Budget): prompts, replies and the embeddings the agent caused.
type Usage struct {
	// Calls counts the model attempts, failed ones included (a failed
	// attempt with no reply used no tokens).
	Calls int64 `json:"calls"`
	// InputTokens and OutputTokens are the prompts' and the replies'
	// tokens.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// EstimatedTokens is how many of InputTokens + OutputTokens are
	// estimates (the server reported no count for them); 0 when every
	// count is the server's.
	EstimatedTokens int64 `json:"estimated_tokens,omitempty"`
	// EmbedTokens are the input tokens of the embedding requests the agent
	// caused (its prompt's recalls, its executor's recalls and
	// remembers), as the embedding server counted them
	// (middleware.WithEmbedUsage); the memory's background backfill is no
	// agent's and is not counted. They are not in Calls.
	EmbedTokens int64 `json:"embed_tokens,omitempty"`
}

// Total returns InputTokens + OutputTokens + EmbedTokens: the tokens the
// token budget counts.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens + u.EmbedTokens }

// add counts one attempt.
func (u *Usage) add(c *event.ModelCallInfo) {
	u.Calls++
	u.InputTokens += int64(c.PromptTokens)
	u.OutputTokens += int64(c.OutputTokens)
	if c.PromptEstimated {
		u.EstimatedTokens += int64(c.PromptTokens)
	}
	if c.OutputEstimated {
		u.EstimatedTokens += int64(c.OutputTokens)
	}
}

// ModelUsage is the [Usage] of one model, in [Status].UsageByModel.
type ModelUsage struct {
	// Model is the model's name as the calls reported it
	// ([event.ModelCallInfo].Model); for embeddings, the name of the agent's
	// memory's embedder (llm.Embedder.Model), or "embeddings" when it
	// gives none.
	Model string `json:"model"`
	Usage
}

// usageBook counts an agent's usage, in all and per model.
type usageBook struct {
	mu      sync.Mutex
	total   Usage
	byModel map[string]*Usage
}

// add counts one attempt.
func (b *usageBook) add(c *event.ModelCallInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total.add(c)
	if b.byModel == nil {
		b.byModel = map[string]*Usage{}
	}
	u := b.byModel[c.Model]
	if u == nil {
		u = &Usage{}
		b.byModel[c.Model] = u
	}
	u.add(c)
}

// addEmbed counts tokens of embedding requests of model.
func (b *usageBook) addEmbed(model string, tokens int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total.EmbedTokens += tokens
	if b.byModel == nil {
		b.byModel = map[string]*Usage{}
	}
	u := b.byModel[model]
	if u == nil {
		u = &Usage{}
		b.byModel[model] = u
	}
	u.EmbedTokens += tokens
}

// snapshot returns the totals and the per-model usage, most tokens first.
func (b *usageBook) snapshot() (Usage, []ModelUsage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var per []ModelUsage
	for m, u := range b.byModel {
		per = append(per, ModelUsage{Model: m, Usage: *u})
	}
	slices.SortFunc(per, func(x, y ModelUsage) int {
		return cmp.Or(cmp.Compare(y.Total(), x.Total()), cmp.Compare(x.Model, y.Model))
	})
	return b.total, per
}
