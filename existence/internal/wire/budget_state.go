package wire

import (
	"sync"
	"time"

	"github.com/existence-loop/sdk/existence/budget"
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

// BudgetState is one token budget being spent (budget.Budget over a
// sliding window, in buckets) being spent: an agent's, or a runner's shared
// by its agents.
type BudgetState struct {
	scope string
	b     budget.Budget

	mu        sync.Mutex
	w         tokenWindow
	exhausted bool // an EventBudgetExhausted was emitted for this exhaustion
}

// NewBudgetState returns the state of b, nil for no budget.
func NewBudgetState(scope string, b budget.Budget) *BudgetState {
	if b.Tokens <= 0 {
		return nil
	}
	return &BudgetState{scope: scope, b: b, w: tokenWindow{width: max(b.Window/budgetBuckets, 1)}}
}

// limit is the tokens a cycle of the lane may start under.
func (s *BudgetState) limit(lane Lane) (int64, bool) {
	if lane == LanePriority {
		if s.b.Reserve < 0 {
			return 0, false
		}
		return int64(s.b.Tokens + s.b.Reserve), true
	}
	return int64(s.b.Tokens), true
}

// Hold returns when a call of the lane may start, if not at now; zero
// when it may start now. A nil state never holds.
func (s *BudgetState) Hold(lane Lane, now time.Time) time.Time {
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

// Charge counts n tokens used at now. It returns the status to report
// when this charge exhausted the budget (once per exhaustion), else nil.
func (s *BudgetState) Charge(now time.Time, n int64) *budget.Status {
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

// Status returns the budget's state at now; nil for no budget.
func (s *BudgetState) Status(now time.Time) *budget.Status {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statusLocked(now)
	return &st
}

func (s *BudgetState) statusLocked(now time.Time) budget.Status {
	st := budget.Status{Scope: s.scope, Budget: s.b, Used: s.w.usedAt(now)}
	if st.Used >= int64(s.b.Tokens) {
		st.Exhausted = true
		st.RefillsAt = s.w.refill(now, int64(s.b.Tokens))
	}
	return st
}
