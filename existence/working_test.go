package existence_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/prompt"
)

// lastPrompt returns the text of the model's last request.
func lastPrompt(t *testing.T, f *fixture) string {
	t.Helper()
	reqs := f.model.Requests()
	require.NotEmpty(t, reqs)
	var b strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		b.WriteString(m.Content)
	}
	return b.String()
}

// TestWorkingMemory: with working memory on, a reply's working_memory is
// stored compact and shown in the next prompt's own section; one over the
// cap is refused whole (the previous kept), an event says so and the next
// prompt tells the agent why, once; the identity's fields are untouched.
func TestWorkingMemory(t *testing.T) {
	big := strings.Repeat("x", 120)
	f := newFixture(
		reply(t, map[string]any{"content": "plan", "reasoning": "r", "working_memory": map[string]any{"current_goal": "map the workspace", "progress": map[string]any{"stage": "start"}}}),
		reply(t, map[string]any{"content": "more", "reasoning": "r", "working_memory": map[string]any{"current_goal": big}}),
		reply(t, map[string]any{"content": "again", "reasoning": "r", "working_memory": "not an object"}),
		goalReply(t, "last"),
		goalReply(t, "after"),
	)
	a := f.agent(t, existence.Config{Memory: existence.MemoryConfig{Working: existence.WorkingMemory{Enabled: true, MaxBytes: 100}}})

	tick(t, a)
	assert.Contains(t, lastPrompt(t, f), prompt.WorkingMemoryHeader+"\n(empty)", "the section shows from the first cycle")
	st := a.State()
	assert.Equal(t, `{"current_goal":"map the workspace","progress":{"stage":"start"}}`, string(st.WorkingMemory))
	assert.Empty(t, st.Identity.Worldview, "the identity is untouched")

	tick(t, a) // the model reads the memory, then sends one over the cap
	p := lastPrompt(t, f)
	assert.Contains(t, p, `"current_goal": "map the workspace"`)
	assert.Contains(t, p, "at most 100 bytes")
	st = a.State()
	assert.Equal(t, `{"current_goal":"map the workspace","progress":{"stage":"start"}}`, string(st.WorkingMemory), "the previous one is kept")
	assert.Contains(t, st.WorkingMemoryNote, "over your cap of 100 bytes")
	var refused []event.Event
	for _, e := range f.rec.Events() {
		if e.Kind == event.WorkingMemory && e.Reason != "stored" {
			refused = append(refused, e)
		}
	}
	require.Len(t, refused, 1)
	assert.Equal(t, "too_large", refused[0].Reason)

	tick(t, a) // told why; then sends a string
	assert.Contains(t, lastPrompt(t, f), "YOUR LAST WORKING MEMORY WAS REFUSED: it was 139 bytes, over your cap of 100 bytes")
	assert.Contains(t, a.State().WorkingMemoryNote, "must be a JSON object")

	tick(t, a) // told again, for the string; its reply has none: kept, note cleared
	assert.Contains(t, lastPrompt(t, f), "must be a JSON object")
	tick(t, a)
	assert.NotContains(t, lastPrompt(t, f), "REFUSED", "a note is shown once")
	assert.Equal(t, `{"current_goal":"map the workspace","progress":{"stage":"start"}}`, string(a.State().WorkingMemory))
}

// TestWorkingMemoryOffByDefault: without it, the prompt has no such
// section and a reply's working_memory is ignored.
func TestWorkingMemoryOffByDefault(t *testing.T) {
	f := newFixture(
		reply(t, map[string]any{"content": "plan", "reasoning": "r", "working_memory": map[string]any{"current_goal": "x"}}),
		goalReply(t, "next"),
	)
	a := f.agent(t, existence.Config{})
	tick(t, a)
	tick(t, a)
	assert.NotContains(t, lastPrompt(t, f), "WORKING MEMORY")
	assert.Empty(t, a.State().WorkingMemory)
	_ = context.Background()
}
