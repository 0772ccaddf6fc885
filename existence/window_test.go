package existence_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/ollama"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
	"github.com/existence-loop/sdk/store/storetest"
)

// identityReply answers a cycle as a model would: with a goal when it can
// still read who it is, and with nonsense when the server cut the top of
// the prompt away.
func identityReply(c *llmtest.Call) llmtest.Answer {
	if !strings.Contains(c.Prompt, "You are Cedar.") {
		return llmtest.Answer{Text: `{"action":"goal","content":"I do not know who I am","reasoning":"the prompt starts mid-sentence"}`}
	}
	return llmtest.Answer{Text: `{"action":"goal","content":"map the workspace","reasoning":"it is what I do"}`}
}

// seasoned returns the state of an agent after a long life, every list
// at its cap and every text at its longest: its prompt is about 2,500
// tokens.
func seasoned() *identity.AgentState {
	st := storetest.OverCapState("scout")
	st.Identity.Goals = st.Identity.Goals[:len(st.Identity.Goals)-1] // none active
	line := func(what string, i, n int) string {
		return runes.Head(fmt.Sprintf("%s %d: ", what, i)+strings.Repeat("the workspace keeps its records in plain text and nobody reads them ", 10), n)
	}
	st.Identity.Worldview = line("worldview", 0, 600)
	st.Identity.Narrative = line("narrative", 0, 800)
	for i := range st.Identity.Opinions {
		st.Identity.Opinions[i].Text = line("opinion", i, 200)
	}
	for i := range st.Identity.Questions {
		st.Identity.Questions[i] = line("question", i, 200)
	}
	for i := range st.Identity.Discoveries {
		st.Identity.Discoveries[i].Text = line("discovery", i, 300)
	}
	for i := range st.Identity.Goals {
		st.Identity.Goals[i].Objective = line("goal", i, 120)
		st.Identity.Goals[i].Outcome = line("outcome", i, 400)
	}
	st.Inbox = nil
	for i := range 5 {
		st.Inbox = append(st.Inbox, identity.AgentMessage{From: "Vault", Text: line("message", i, 200), At: t0})
	}
	st.Host = []identity.AgentMessage{{From: "host", Text: line("host", 0, 500), At: t0}}
	return st
}

// TestCycleFitsTheWindow: against a server that grants only 2048 tokens
// whatever num_ctx says and cuts silently, a seasoned agent's prompt is
// caught when it is cut, reported, fitted to 2048 tokens and sent again;
// the next cycles fit from the start.
func TestCycleFitsTheWindow(t *testing.T) {
	s := llmtest.NewServer(llmtest.ServerConfig{MaxContext: 2048, IgnoreTruncate: true, Reply: identityReply, Record: true})
	url := s.Start()
	t.Cleanup(s.Close)
	m, err := ollama.New(ollama.Config{URL: url, Model: "qwen3.5:9b"})
	require.NoError(t, err)

	f := newFixture()
	require.NoError(t, f.store.Save(context.Background(), seasoned()))
	a := f.agent(t, existence.Config{Model: m, Timing: existence.TimingConfig{MaxCycles: 3}, Prompt: prompt.New(prompttest.HollowConfig())})

	tick(t, a)
	overflows := f.rec.Kind(event.ContextOverflow)
	require.Len(t, overflows, 1, "the cut was caught and reported")
	c := overflows[0].Context
	assert.Equal(t, 2048, c.Kept)
	assert.Equal(t, 2048, c.Window)
	assert.Greater(t, c.Estimated, 2048)
	assert.Equal(t, "cycle", c.Purpose)
	require.NotEmpty(t, f.rec.Kind(event.PromptCut), "the refitted prompt was cut visibly, section by section")
	assert.Equal(t, "map the workspace", a.State().Identity.ActiveGoal().Objective, "the reply to the cut prompt was not used")
	assert.Empty(t, f.rec.Kind(event.Fallback))

	calls := s.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[0].Cut)
	assert.False(t, calls[1].Cut)

	for range 2 {
		f.clock.Advance(existence.DefaultHeartbeat)
		require.NoError(t, a.Tick(context.Background())) // ends the goal
		f.clock.Advance(existence.DefaultHeartbeat)
		tick(t, a)
	}
	assert.Len(t, f.rec.Kind(event.ContextOverflow), 1, "later cycles fit from the start")
	for _, c := range s.Calls()[2:] {
		assert.False(t, c.Cut)
		assert.LessOrEqual(t, c.Sent, 2048)
	}
}

func TestContextEventLines(t *testing.T) {
	at := t0
	tests := []struct {
		e    event.Event
		want string
	}{
		{event.Event{Kind: event.ContextOverflow, Time: at, Agent: "Cedar", Context: &event.ContextStats{Purpose: "cycle", Window: 2048, Estimated: 2600, Kept: 2048}},
			"12:00:00 Cedar 🧱 cycle prompt of about 2600 tokens cut to 2048 by the server: its window is 2048 tokens"},
		{event.Event{Kind: event.ContextOverflow, Time: at, Agent: "Cedar", Context: &event.ContextStats{Purpose: "executor", Window: 8192, Estimated: 9000}},
			"12:00:00 Cedar 🧱 executor prompt of about 9000 tokens does not fit the 8192-token window"},
		{event.Event{Kind: event.ContextCompacted, Time: at, Agent: "Cedar", Context: &event.ContextStats{Purpose: "executor", Window: 8192, Before: 7000, After: 3100, Folded: 3, Method: "summary"}},
			"12:00:00 Cedar 🗜️ tool-loop history compacted by summary: 3 turns folded, 7000 → 3100 tokens (window 8192)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.e.String())
	}
}
