package existence

import (
	"context"
	"strings"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/prompt"
)

// onMemory delivers one of the agent's memory events to its observer, as
// an [event.Memory].
func (a *Agent) onMemory(me memory.Event) {
	c := me
	a.emit(event.Event{Kind: event.Memory, Text: me.Text, Err: me.Err, Memory: &c})
}

// defaultMemoryK is how many memories the prompt's memories section shows
// when [Config].Memory.K is 0: 3, as the original's recall before planning.
const defaultMemoryK = 3

// defaultMemoryQuery is the query of the memories recalled for the
// existence prompt when [Config].Memory.Query is nil: what the agent is
// about to think about. It is the assigned task's description when there
// is one, else the newest host message, else the last goal's objective
// and outcome; "" (no recall) for an agent with none of these.
func defaultMemoryQuery(v *prompt.View) string {
	switch {
	case v == nil:
		return ""
	case v.Task != nil && strings.TrimSpace(v.Task.Description) != "":
		return v.Task.Description
	case len(v.Host) > 0 && strings.TrimSpace(v.Host[len(v.Host)-1].Text) != "":
		return v.Host[len(v.Host)-1].Text
	case v.Identity != nil && len(v.Identity.Goals) > 0:
		g := v.Identity.Goals[len(v.Identity.Goals)-1]
		return strings.TrimSpace(g.Objective + " " + g.Outcome)
	}
	return ""
}

// promptMemories recalls the memories for the next prompt when the agent
// has a memory and its assembler a memories section. It never fails the
// cycle: a recall error is reported as an [event.Memory] (memory.EventError) and the
// prompt goes without memories. peek leaves the memories' access as it is
// (a preview).
func (a *Agent) promptMemories(ctx context.Context, task *prompt.Task, peek bool) []prompt.Memory {
	m := a.cfg.Memory.LongTerm
	if m == nil {
		return nil
	}
	if _, ok := a.cfg.Prompt.Section(prompt.SectionMemories); !ok {
		return nil
	}
	a.mu.Lock()
	v := &prompt.View{Task: task, Identity: &a.state.Identity, Host: a.state.Host}
	query := a.cfg.Memory.Query
	if query == nil {
		query = defaultMemoryQuery
	}
	q := query(v)
	a.mu.Unlock()
	if strings.TrimSpace(q) == "" {
		return nil
	}
	k := a.cfg.Memory.K
	if k <= 0 {
		k = defaultMemoryK
	}
	if !peek { // a preview's embedding is the operator's, not the agent's
		ctx = middleware.WithEmbedUsage(ctx, a.chargeEmbed)
	}
	got, err := m.Recall(ctx, a.cfg.ID, memory.Query{Text: q, K: k, Peek: peek})
	if err != nil {
		if ctx.Err() == nil {
			a.onMemory(memory.Event{Kind: memory.EventError, AgentID: a.cfg.ID, Text: "recalling memories for the prompt", Err: err, Error: err.Error(), Time: a.cfg.Timing.Clock.Now()})
		}
		return nil
	}
	out := make([]prompt.Memory, len(got.Results))
	for i, r := range got.Results {
		out[i] = prompt.Memory{Text: r.Memory.Text, Kind: string(r.Memory.Kind), Score: r.Score}
	}
	return out
}

// subscribeMemory delivers the agent's memory events to its observer
// until the agent releases its store.
func (a *Agent) subscribeMemory() {
	if m := a.cfg.Memory.LongTerm; m != nil {
		cancel := m.Subscribe(a.cfg.ID, a.onMemory)
		a.memoryDone = func() {
			cancel()
			m.Unload(a.cfg.ID) // the next holder of the agent is its writer
		}
	}
}
