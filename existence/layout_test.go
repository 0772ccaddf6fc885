package existence_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/prompt"
)

// TestCacheLayoutSplitsTheCyclePrompt: under a cache layout a cycle
// sends its stable prefix as the system message and the rest as the user
// message, and the goal's executor gets that prefix (Assignment.Prefix);
// under the original layout the prompt is one user message and the
// executor gets none.
func TestCacheLayoutSplitsTheCyclePrompt(t *testing.T) {
	for _, l := range []prompt.Layout{prompt.LayoutOriginal, prompt.LayoutCache, prompt.LayoutCacheAgent} {
		t.Run(l.String(), func(t *testing.T) {
			f := newFixture(goalReply(t, "map the workspace"))
			var got existence.Assignment
			exec := existence.ExecutorFunc(func(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
				got = a
				return existence.Outcome{Status: identity.Done, Summary: "mapped"}, nil
			})
			a := f.agent(t, existence.Config{Executor: exec,
				Prompt: prompt.New(prompt.Config{World: "A shared world.", Situation: prompt.DefaultSituation, Layout: l})})
			tick(t, a)
			reqs := f.model.Requests()
			require.Len(t, reqs, 1)
			msgs := reqs[0].Messages
			if l == prompt.LayoutOriginal {
				require.Len(t, msgs, 1)
				assert.Equal(t, llm.RoleUser, msgs[0].Role)
				assert.Empty(t, got.Prefix)
				return
			}
			require.Len(t, msgs, 2)
			assert.Equal(t, llm.RoleSystem, msgs[0].Role)
			if l == prompt.LayoutCache { // the name follows what agents may share
				assert.True(t, strings.HasPrefix(msgs[0].Content, "WORLD CONTEXT"), msgs[0].Content)
				assert.NotContains(t, msgs[0].Content, "You are Cedar.")
				assert.Contains(t, msgs[1].Content, "You are Cedar.")
				assert.True(t, strings.HasPrefix(msgs[1].Content, "YOUR PEERS:"), msgs[1].Content)
			} else { // the name first
				assert.True(t, strings.HasPrefix(msgs[0].Content, "You are Cedar.\n\nWORLD CONTEXT"), msgs[0].Content)
				assert.True(t, strings.HasPrefix(msgs[1].Content, "YOUR WORLDVIEW:"), msgs[1].Content)
			}
			assert.Equal(t, msgs[0].Content, got.Prefix)
		})
	}
}

// offering is an executor that offers tools (existence.ToolOffer).
type offering struct {
	got  *existence.Assignment
	defs []llm.ToolDef
}

func (o offering) Execute(ctx context.Context, a existence.Assignment) (existence.Outcome, error) {
	*o.got = a
	return existence.Outcome{Status: identity.Done, Summary: "mapped"}, nil
}

func (o offering) ToolDefs(existence.Assignment) []llm.ToolDef { return o.defs }

// TestCacheLayoutOffersTheExecutorsTools: under prompt.LayoutCache a cycle
// whose executor offers tools sends them with the cycle request, and the
// executor gets the cycle's messages and reply (Assignment.Exchange) to
// continue; under the original layout neither.
func TestCacheLayoutOffersTheExecutorsTools(t *testing.T) {
	defs := []llm.ToolDef{{Name: "list_files", Description: "Lists files.", Parameters: []byte(`{"type":"object"}`)}}
	for _, l := range []prompt.Layout{prompt.LayoutOriginal, prompt.LayoutCache, prompt.LayoutCacheAgent} {
		t.Run(l.String(), func(t *testing.T) {
			f := newFixture(goalReply(t, "map the workspace"))
			var got existence.Assignment
			a := f.agent(t, existence.Config{Executor: offering{got: &got, defs: defs},
				Prompt: prompt.New(prompt.Config{World: "A shared world.", Situation: prompt.DefaultSituation, Layout: l})})
			tick(t, a)
			reqs := f.model.Requests()
			require.Len(t, reqs, 1)
			if l == prompt.LayoutOriginal {
				assert.Empty(t, reqs[0].Tools)
				assert.Nil(t, got.Exchange)
				return
			}
			assert.Equal(t, defs, reqs[0].Tools)
			require.Len(t, got.Exchange, 3)
			assert.Equal(t, reqs[0].Messages, got.Exchange[:2])
			assert.Equal(t, llm.RoleAssistant, got.Exchange[2].Role)
			assert.Contains(t, got.Exchange[2].Content, "map the workspace")
		})
	}
}

// windowed gives a model a context window (llm.Windowed).
type windowed struct {
	llm.Model
	window int
}

func (w windowed) ContextWindow(context.Context) (int, *llm.TokenEstimator, error) {
	return w.window, llm.NewTokenEstimator(), nil
}

// TestCacheLayoutToolOfferWithinBudget: the tools a cycle offers come out
// of its prompt budget, and are not offered when their definitions would
// take more than half of it: the cycle's own prompt comes first.
func TestCacheLayoutToolOfferWithinBudget(t *testing.T) {
	def := func(descChars int) []llm.ToolDef {
		return []llm.ToolDef{{Name: "list_files", Description: strings.Repeat("Lists files. ", descChars/13), Parameters: []byte(`{"type":"object"}`)}}
	}
	for _, tc := range []struct {
		name    string
		defs    []llm.ToolDef
		offered bool
	}{
		{"small offer", def(400), true},
		{"an offer over half the budget", def(8000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(goalReply(t, "map the workspace"))
			var got existence.Assignment
			a := f.agent(t, existence.Config{Model: windowed{Model: f.model, window: 4096}, Calls: existence.CallConfig{MaxTokens: 1000}, Executor: offering{got: &got, defs: tc.defs},
				Prompt: prompt.New(prompt.Config{World: "A shared world.", Situation: prompt.DefaultSituation, Layout: prompt.LayoutCache})})
			tick(t, a)
			reqs := f.model.Requests()
			require.Len(t, reqs, 1)
			if !tc.offered {
				assert.Empty(t, reqs[0].Tools)
				return
			}
			assert.Equal(t, tc.defs, reqs[0].Tools)
			est := llm.NewTokenEstimator()
			assert.LessOrEqual(t, est.Request(reqs[0])+1000, 4096, "the prompt, the tools and the reply's reserve fit the window")
		})
	}
}
