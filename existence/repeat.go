package existence

import (
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/repeat"
)

// chosen reports whether the agent chose g itself: neither the spec §6
// fallback goal (the model failed, the agent chose nothing) nor an assigned
// task (someone else chose it). Only chosen goals take part in repeat
// detection.
func chosen(g identity.Goal) bool { return !g.Fallback && g.TaskID == "" }

// repeats reports whether goal i of the history nearly repeats one of the
// repeat.Window (10) goals the agent chose before it: its repeat.Similarity
// with one of them is at least repeat.Threshold (0.9). It returns the
// earlier goal's objective. Fallback goals and assigned tasks are neither
// repeats nor repeated. The rule is a function of the stored goal history,
// so repeats survive restarts and are recorded with the goals themselves.
// cache holds token sets by goal index (nil: no cache), so that
// countRepeats tokenizes each goal of its window once instead of once per
// comparison.
func repeats(id *identity.Identity, i int, cache map[int][]uint64) (earlier string, ok bool) {
	if i < 0 || i >= len(id.Goals) || !chosen(id.Goals[i]) {
		return "", false
	}
	tokens := func(j int) []uint64 {
		if t, ok := cache[j]; ok {
			return t
		}
		t := repeat.Hashes(id.Goals[j].Objective)
		if cache != nil {
			cache[j] = t
		}
		return t
	}
	mine := tokens(i)
	seen := 0
	for j := i - 1; j >= 0 && seen < repeat.Window; j-- {
		g := id.Goals[j]
		if !chosen(g) {
			continue
		}
		seen++
		if repeat.Jaccard(mine, tokens(j)) >= repeat.Threshold {
			return g.Objective, true
		}
	}
	return "", false
}

// noteRepeatLocked reports an [event.GoalRepeat] when the goal just started
// (the last of the history) repeats a recent one. Call it with a.mu held.
func (a *Agent) noteRepeatLocked() {
	id := &a.state.Identity
	if earlier, ok := repeats(id, len(id.Goals)-1, nil); ok {
		g := id.Goals[len(id.Goals)-1]
		a.queue(event.Event{Kind: event.GoalRepeat, Goal: g.Objective, Text: earlier})
	}
}

// countRepeats adjusts an observation made over the last [assessWindow]
// ended goals (the goals goalEvidence counts): a goal that repeats a recent
// one (see repeats) and ended DONE counts as failed, not completed, so
// that going round in circles raises repeated_failure (spec §4) even when
// every round claims success. A repeat that failed is already counted as
// failed.
func countRepeats(id *identity.Identity, completed, failed *int) {
	cache := make(map[int][]uint64, assessWindow+repeat.Window)
	n := 0
	for i := len(id.Goals) - 1; i >= 0 && n < assessWindow; i-- {
		g := id.Goals[i]
		if !g.Status.Ended() || g.Outcome == interruptedByHost {
			continue
		}
		n++
		if g.Status != identity.Done {
			continue
		}
		if _, ok := repeats(id, i, cache); ok {
			*completed--
			*failed++
		}
	}
}
