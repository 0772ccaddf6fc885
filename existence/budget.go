package existence

import (
	"context"
	"sync"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/existence/budget"
	"github.com/existence-loop/sdk/existence/event"
)

// budgetBuckets is how many buckets a window is kept in: tokens are known
// to 1/60 of the window. A bucket stays counted for one bucket more than
// the window, so that tokens expire at most 1/60 of the window late,
// never early.
const budgetBuckets = 60

// tokenWindow sums tokens over a sliding window, in buckets.
type tokenWindow struct {
	width   time.Duration
	buckets [budgetBuckets + 1]int64
	head    int64 // index of the newest bucket (time / width)
	used    int64 // sum of the buckets
	started bool
}

const ringSize = budgetBuckets + 1

func (w *tokenWindow) index(t time.Time) int64 { return t.UnixNano() / int64(w.width) }

// roll moves the newest bucket up to idx, dropping the buckets that left
// the window.
func (w *tokenWindow) roll(idx int64) {
	if !w.started {
		w.head, w.started = idx, true
		return
	}
	if idx <= w.head {
		return
	}
	if idx-w.head >= ringSize {
		w.buckets = [ringSize]int64{}
		w.used = 0
	} else {
		for i := w.head + 1; i <= idx; i++ {
			b := &w.buckets[i%ringSize]
			w.used -= *b
			*b = 0
		}
	}
	w.head = idx
}

// add counts n tokens at t (a time before the oldest bucket counts in the
// oldest bucket).
func (w *tokenWindow) add(t time.Time, n int64) {
	idx := w.index(t)
	w.roll(idx)
	idx = max(idx, w.head-ringSize+1)
	w.buckets[idx%ringSize] += n
	w.used += n
}

// usedAt returns the tokens in the window at t.
func (w *tokenWindow) usedAt(t time.Time) int64 {
	w.roll(w.index(t))
	return w.used
}

// refill returns when the tokens in the window fall under limit with no
// more spending, at or after t (zero when they are under it at t): when
// the bucket whose expiry brings them under leaves the window.
func (w *tokenWindow) refill(t time.Time, limit int64) time.Time {
	used := w.usedAt(t)
	if used < limit {
		return time.Time{}
	}
	i := w.head - ringSize + 1
	for ; i < w.head; i++ {
		used -= w.buckets[i%ringSize]
		if used < limit {
			break
		}
	}
	return time.Unix(0, (i+ringSize)*int64(w.width)).In(t.Location())
}

// budgetState is one budget being spent: an agent's, or a runner's shared
// by its agents.
type budgetState struct {
	scope string
	b     budget.Budget

	mu        sync.Mutex
	w         tokenWindow
	exhausted bool // an EventBudgetExhausted was emitted for this exhaustion
}

// newBudgetState returns the state of b, nil for no budget.
func newBudgetState(scope string, b budget.Budget) *budgetState {
	if b.Tokens <= 0 {
		return nil
	}
	return &budgetState{scope: scope, b: b, w: tokenWindow{width: max(b.Window/budgetBuckets, 1)}}
}

// limit is the tokens a cycle of the lane may start under.
func (s *budgetState) limit(lane Lane) (int64, bool) {
	if lane == LanePriority {
		if s.b.Reserve < 0 {
			return 0, false
		}
		return int64(s.b.Tokens + s.b.Reserve), true
	}
	return int64(s.b.Tokens), true
}

// hold returns when a call of the lane may start, if not at now; zero
// when it may start now. A nil state never holds.
func (s *budgetState) hold(lane Lane, now time.Time) time.Time {
	if s == nil {
		return time.Time{}
	}
	lim, ok := s.limit(lane)
	if !ok {
		return time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.w.refill(now, lim)
	if at.IsZero() && s.w.usedAt(now) < int64(s.b.Tokens) {
		s.exhausted = false // refilled: the next exhaustion is reported
	}
	return at
}

// charge counts n tokens used at now. It returns the status to report
// when this charge exhausted the budget (once per exhaustion), else nil.
func (s *budgetState) charge(now time.Time, n int64) *budget.Status {
	if s == nil || n <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.usedAt(now) < int64(s.b.Tokens) {
		s.exhausted = false // refilled since the last exhaustion
	}
	s.w.add(now, n)
	if s.w.used < int64(s.b.Tokens) || s.exhausted {
		return nil
	}
	s.exhausted = true
	st := s.statusLocked(now)
	return &st
}

// status returns the budget's state at now; nil for no budget.
func (s *budgetState) status(now time.Time) *budget.Status {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statusLocked(now)
	return &st
}

func (s *budgetState) statusLocked(now time.Time) budget.Status {
	st := budget.Status{Scope: s.scope, Budget: s.b, Used: s.w.usedAt(now)}
	if st.Used >= int64(s.b.Tokens) {
		st.Exhausted = true
		st.RefillsAt = s.w.refill(now, int64(s.b.Tokens))
	}
	return st
}

// budgetHold returns when a cycle or call of the agent in lane may start
// by its own budget and the runner's, if not at now (zero: now).
func (a *Agent) budgetHold(lane Lane, now time.Time) time.Time {
	at := a.budget.hold(lane, now)
	if h := a.wire.shared.hold(lane, now); h.After(at) {
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
	if m := a.cfg.Memory; m != nil && m.Embedder() != nil {
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
	if n <= 0 || (a.budget == nil && a.wire.shared == nil) {
		return
	}
	now := a.cfg.Clock.Now()
	for _, st := range []*budget.Status{a.budget.charge(now, n), a.wire.shared.charge(now, n)} {
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
	lane := LaneAutonomy
	if ctx.Value(priorityKey{}) != nil {
		lane = LanePriority
	}
	for {
		now := a.cfg.Clock.Now()
		until := a.budgetHold(lane, now)
		if until.IsZero() || !until.After(now) {
			return nil
		}
		a.budgetWaits.Add(1)
		err := sleepClock(ctx, a.cfg.Clock, until.Sub(now))
		a.budgetWaited.Add(int64(a.cfg.Clock.Now().Sub(now)))
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
