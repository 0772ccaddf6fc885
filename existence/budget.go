package existence

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/internal/wire"
)

// budgetHold returns when a cycle or call of the agent in lane may start
// by its own budget and the runner's, if not at now (zero: now).
func (a *Agent) budgetHold(lane wire.Lane, now time.Time) time.Time {
	at := a.budget.Hold(lane, now)
	if h := a.wire.Shared.Hold(lane, now); h.After(at) {
		at = h
	}
	return at
}

// chargeBudget counts a model attempt's tokens against the agent's budget
// and the runner's, reporting each exhaustion.
func (a *Agent) chargeBudget(c *event.ModelCallInfo) {
	a.chargeTokens(int64(c.PromptTokens + c.OutputTokens))
}

// chargeEmbed counts the embedding tokens the agent caused, as the
// server reported them (its prompt's recall, and its executor's recalls
// and remembers, made with a context of [middleware.WithEmbedUsage]), against its
// budget and the runner's, and in its usage ([Usage].EmbedTokens, under
// the embedder's model in [Status].UsageByModel). The memory's background
// backfill embeds for no agent in particular and is not charged.
func (a *Agent) chargeEmbed(tokens int) {
	if tokens <= 0 {
		return
	}
	model := ""
	if m := a.cfg.Memory.LongTerm; m != nil && m.Embedder() != nil {
		model = m.Embedder().Model()
	}
	if model == "" {
		model = "embeddings"
	}
	a.usage.addEmbed(model, int64(tokens))
	a.chargeTokens(int64(tokens))
}

// chargeTokens counts n tokens against the agent's budget and the
// runner's, reporting each exhaustion.
func (a *Agent) chargeTokens(n int64) {
	if n <= 0 || (a.budget == nil && a.wire.Shared == nil) {
		return
	}
	now := a.cfg.Timing.Clock.Now()
	for _, st := range []*budget.Status{a.budget.Charge(now, n), a.wire.Shared.Charge(now, n)} {
		if st != nil {
			a.emit(event.Event{Kind: event.BudgetExhausted, Budget: st, Text: st.Summary()})
		}
	}
}

// priorityKey marks the context of a goal chosen by a priority cycle: its
// executor's calls may draw on the budget's Reserve.
type priorityKey struct{}

// waitBudget blocks until a call in ctx may start by the budgets, or ctx
// ends (its error is returned). The time it waits does not count toward
// the goal-span stall rule.
func (a *Agent) waitBudget(ctx context.Context) error {
	lane := wire.LaneAutonomy
	if ctx.Value(priorityKey{}) != nil {
		lane = wire.LanePriority
	}
	for {
		now := a.cfg.Timing.Clock.Now()
		until := a.budgetHold(lane, now)
		if until.IsZero() || !until.After(now) {
			return nil
		}
		a.budgetWaits.Add(1)
		err := sleepClock(ctx, a.cfg.Timing.Clock, until.Sub(now))
		a.budgetWaited.Add(int64(a.cfg.Timing.Clock.Now().Sub(now)))
		a.budgetWaits.Add(-1)
		if err != nil {
			return err
		}
	}
}

// budgetWaited returns how long r's executor waited for a budget, by the
// agent's clock.
func (r *run) budgetWaited(a *Agent) time.Duration {
	return time.Duration(a.budgetWaited.Load() - r.waited0)
}

// sleepClock waits d on c (its AfterFunc) or
// until ctx ends.
func sleepClock(ctx context.Context, c clock.Clock, d time.Duration) error {
	done := make(chan struct{})
	stop := c.AfterFunc(d, func() { close(done) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
