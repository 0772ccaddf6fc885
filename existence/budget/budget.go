package budget

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Budget is a token budget over a sliding window: at most Tokens tokens
// (prompt and reply, as existence.Usage counts them) in any Window. The zero value
// is no budget.
//
// A call starts only while the tokens used in the last Window are under
// Tokens (Tokens + Reserve for the priority lane), and its tokens are known
// only when it ends, so a budget is kept to within one call: over any
// Window an agent uses at most Tokens plus its last call (plus Reserve for
// the cycles answering a host message, an assigned task or a crisis, and
// their goals).
type Budget struct {
	// Tokens is the budget per Window, in tokens; 0 means none.
	Tokens int `json:"tokens"`
	// Window is the sliding window, e.g. time.Hour; required with Tokens.
	Window time.Duration `json:"window_ns"`
	// Reserve is extra tokens the priority lane (host messages, assigned
	// tasks, crisis) may spend beyond Tokens; 0 means none: a spent
	// budget holds every cycle. Negative means the priority lane is never
	// held.
	Reserve int `json:"reserve,omitempty"`
}

// ErrInvalid matches the errors of [Parse] and of an invalid
// [Budget] given to existence.New or the runner.
var ErrInvalid = errors.New("budget: invalid token budget")

// Validate returns an error matching [ErrInvalid] when b has Tokens or a
// Window below zero, or Tokens without a Window.
func (b Budget) Validate() error {
	switch {
	case b.Tokens < 0 || b.Window < 0:
		return fmt.Errorf("%w: tokens and window must not be negative (%d/%v)", ErrInvalid, b.Tokens, b.Window)
	case b.Tokens > 0 && b.Window == 0:
		return fmt.Errorf("%w: %d tokens over no window", ErrInvalid, b.Tokens)
	}
	return nil
}

// String formats b as [Parse] reads it: "4000/1m0s", "" for none.
func (b Budget) String() string {
	if b.Tokens == 0 {
		return ""
	}
	s := strconv.Itoa(b.Tokens) + "/" + b.Window.String()
	if b.Reserve != 0 {
		s += "+" + strconv.Itoa(b.Reserve)
	}
	return s
}

// Parse reads "TOKENS/DURATION", optionally followed by
// "+RESERVE": "4000/1m" is 4,000 tokens a minute, "50000/1h+5000" 50,000
// an hour with 5,000 more for the priority lane. DURATION is a Go
// duration (time.ParseDuration). An empty string is no budget. Errors
// match [ErrInvalid].
func Parse(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Budget{}, nil
	}
	tokens, rest, ok := strings.Cut(s, "/")
	if !ok {
		return Budget{}, fmt.Errorf("%w: %q: want TOKENS/DURATION, e.g. 4000/1m", ErrInvalid, s)
	}
	var b Budget
	var err error
	if b.Tokens, err = strconv.Atoi(strings.TrimSpace(tokens)); err != nil || b.Tokens <= 0 {
		return Budget{}, fmt.Errorf("%w: %q: the tokens must be a positive whole number", ErrInvalid, s)
	}
	window, reserve, hasReserve := strings.Cut(rest, "+")
	if b.Window, err = time.ParseDuration(strings.TrimSpace(window)); err != nil || b.Window <= 0 {
		return Budget{}, fmt.Errorf("%w: %q: the window must be a positive duration such as 1m or 1h", ErrInvalid, s)
	}
	if hasReserve {
		if b.Reserve, err = strconv.Atoi(strings.TrimSpace(reserve)); err != nil || b.Reserve < 0 {
			return Budget{}, fmt.Errorf("%w: %q: the reserve must be a whole number of tokens", ErrInvalid, s)
		}
	}
	return b, nil
}

// Status is a budget's state, in existence.Status.Budget (an agent's own)
// and the runner's stats (the runner-wide one), and on
// the budget_exhausted event.
type Status struct {
	// Scope is "agent" (an agent's own existence.Config.Calls.Budget) or "runner" (the
	// runner's the runner's SharedBudget).
	Scope string `json:"scope"`
	Budget
	// Used is the tokens used within the window now.
	Used int64 `json:"used"`
	// Exhausted reports that Used is at or over Tokens: autonomy waits.
	Exhausted bool `json:"exhausted"`
	// RefillsAt is when Used falls back under Tokens, with no further
	// spending; zero when not exhausted.
	RefillsAt time.Time `json:"refills_at,omitzero"`
}

// Values of [Status].Scope.
const (
	ScopeAgent  = "agent"
	ScopeRunner = "runner"
)

// describe says what an exhausted budget holds and until when.
func (st *Status) Summary() string {
	who := "this agent's"
	if st.Scope == ScopeRunner {
		who = "the runner's"
	}
	s := fmt.Sprintf("%s token budget is spent: %d of %d tokens in %v", who, st.Used, st.Tokens, st.Window)
	if !st.RefillsAt.IsZero() {
		s += "; autonomy waits until " + st.RefillsAt.Format("15:04:05")
	}
	return s
}
