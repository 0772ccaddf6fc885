package cli

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
)

// TestTrioTokenBudget runs the trio with -token-budget 4000/1m against the
// stand-in server (one slot, 2 s a call) for several virtual minutes (a
// synctest bubble: the run takes seconds). By the server's own counts, as
// each reply reports them, no agent uses more than its budget plus one
// call in any minute; budget_exhausted events appear; and the agents keep
// running past them to their last cycle.
func TestTrioTokenBudget(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		t.Chdir(dir)
		start := time.Now()
		out, _, srv := runStandinTrio(t, "-llm-url", "standin:?slots=1&latency=2s", "-heartbeat", "6s", "-json",
			"-token-budget", "4000/1m", "-cycles", "4")
		took := time.Since(start)
		evs := events(t, out)

		calls := map[string][]event.Event{}
		var reported int64
		for _, e := range evs {
			if e.Kind == event.ModelCall {
				require.False(t, e.Call.PromptEstimated || e.Call.OutputEstimated, "the stand-in reports its counts")
				calls[e.AgentID] = append(calls[e.AgentID], e)
				reported += int64(e.Call.PromptTokens + e.Call.OutputTokens)
			}
		}
		st := srv.Stats()
		assert.Equal(t, int64(st.PromptTokens+st.OutputTokens), reported, "every call counted, as the server counted it")
		require.Len(t, calls, 3)
		for id, cs := range calls {
			largest := 0
			for _, c := range cs {
				largest = max(largest, c.Call.PromptTokens+c.Call.OutputTokens)
			}
			for i, c := range cs {
				sum := 0
				for _, d := range cs[i:] {
					if d.Time.Sub(c.Time) < time.Minute {
						sum += d.Call.PromptTokens + d.Call.OutputTokens
					}
				}
				assert.LessOrEqual(t, sum, 4000+largest, "%s: the minute from %s holds the budget and at most one call", id, c.Time.Sub(start))
			}
		}
		var exhausted []event.Event
		cycles := map[string]int{}
		var lastExhausted, lastCycle time.Time
		for _, e := range evs {
			switch e.Kind {
			case event.BudgetExhausted:
				exhausted = append(exhausted, e)
				lastExhausted = e.Time
				assert.Equal(t, "agent", e.Budget.Scope)
				assert.Equal(t, 4000, e.Budget.Tokens)
				assert.True(t, e.Budget.RefillsAt.After(e.Time), "it says when it refills")
			case event.Cycle:
				cycles[e.AgentID]++
				lastCycle = e.Time
			}
		}
		require.NotEmpty(t, exhausted, "the budget was spent")
		for _, id := range []string{"scout", "analyst", "builder"} {
			assert.Equal(t, 4, cycles[id], "%s ran all its cycles", id)
		}
		assert.True(t, lastCycle.After(exhausted[0].Time), "the trio kept running after the budget was spent")
		ids := map[string]bool{}
		for _, e := range exhausted {
			ids[e.AgentID] = true
		}
		t.Logf("%d calls, %d tokens by the server's count, %d budget_exhausted events (agents %v, the last at %s), last cycle at %s; %s of virtual time",
			len(slices.Concat(calls["scout"], calls["analyst"], calls["builder"])), reported, len(exhausted), ids, lastExhausted.Sub(start), lastCycle.Sub(start), took)
	})
}
