package existence

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/existence-loop/sdk/identity"
)

// Repeat detection: a new goal that nearly repeats a recent one
// is the agent going round in circles, which the assessment must see even
// when each round ends DONE.
const (
	// RepeatWindow is how many earlier goals a new goal is compared with.
	RepeatWindow = 10
	// RepeatSimilarity is the token-set similarity at or above which a
	// goal repeats an earlier one.
	RepeatSimilarity = 0.9
)

// Tokens returns the normalised token set of a goal's objective: the text
// lower-cased, every character that is not a letter or a digit (punctuation,
// symbols, white space) taken as a separator, each remaining word counted
// once. "Write the README!" and "write  the readme" give the same set.
func Tokens(objective string) map[string]struct{} {
	words := strings.FieldsFunc(strings.ToLower(objective), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	set := make(map[string]struct{}, len(words))
	for _, w := range words {
		set[w] = struct{}{}
	}
	return set
}

// Similarity is the token-set similarity of two objectives: the Jaccard
// index |A∩B| / |A∪B| of their [Tokens], from 0 (no word in common) to 1
// (the same words, whatever their case, order, repetition, spacing and
// punctuation). Two objectives without any word are similar (1).
//
// At [RepeatSimilarity] (0.9), two goals must share at least 9 of every 10
// distinct words: a 10-word goal with one word changed (9/11 ≈ 0.82) is
// not a repeat, one with a word added (10/11 ≈ 0.91) is.
func Similarity(a, b string) float64 {
	return jaccardSorted(tokenHashes(a), tokenHashes(b))
}

// tokenHashes returns the 64-bit FNV-1a hashes of objective's [Tokens],
// sorted and without duplicates: the same set (up to a hash collision,
// about 2⁻⁶⁴ for a pair of words), without a string or a map per goal.
// Repeat detection runs on every heartbeat over the last goals, so this is
// on the cycle's path, whose cost counts in a process that runs thousands
// of agents. FuzzTokenHashes checks it against Tokens.
func tokenHashes(objective string) []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	out := make([]uint64, 0, 16)
	h, in := uint64(offset), false
	var enc [utf8.UTFMax]byte
	for _, r := range objective { // invalid UTF-8 gives RuneError: a separator, as in Tokens
		var word bool
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			word = 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
			if word {
				h = (h ^ uint64(r)) * prime
			}
		} else {
			r = unicode.ToLower(r)
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
			if word {
				for _, c := range enc[:utf8.EncodeRune(enc[:], r)] {
					h = (h ^ uint64(c)) * prime
				}
			}
		}
		switch {
		case word:
			in = true
		case in:
			out = append(out, h)
			h, in = offset, false
		}
	}
	if in {
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccardSorted is the Jaccard index of two sorted sets without
// duplicates; two empty sets are similar (1).
func jaccardSorted(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// chosen reports whether the agent chose g itself: neither the spec §6
// fallback goal (the model failed, the agent chose nothing) nor an assigned
// task (someone else chose it). Only chosen goals take part in repeat
// detection.
func chosen(g identity.Goal) bool { return !g.Fallback && g.TaskID == "" }

// Repeats reports whether goal i of the history nearly repeats one of the
// [RepeatWindow] goals the agent chose before it: its [Similarity] with one
// of them is at least [RepeatSimilarity]. It returns the earlier goal's
// objective. Fallback goals and assigned tasks are neither repeats nor
// repeated. The rule is a function of the stored goal history, so repeats
// survive restarts and are recorded with the goals themselves.
func Repeats(id *identity.Identity, i int) (earlier string, ok bool) {
	return repeats(id, i, nil)
}

// repeats is [Repeats] with a cache of token sets by goal index (nil: no
// cache), so that countRepeats tokenizes each goal of its window once
// instead of once per comparison.
func repeats(id *identity.Identity, i int, cache map[int][]uint64) (earlier string, ok bool) {
	if i < 0 || i >= len(id.Goals) || !chosen(id.Goals[i]) {
		return "", false
	}
	tokens := func(j int) []uint64 {
		if t, ok := cache[j]; ok {
			return t
		}
		t := tokenHashes(id.Goals[j].Objective)
		if cache != nil {
			cache[j] = t
		}
		return t
	}
	mine := tokens(i)
	seen := 0
	for j := i - 1; j >= 0 && seen < RepeatWindow; j-- {
		g := id.Goals[j]
		if !chosen(g) {
			continue
		}
		seen++
		if jaccardSorted(mine, tokens(j)) >= RepeatSimilarity {
			return g.Objective, true
		}
	}
	return "", false
}

// noteRepeatLocked reports an [EventGoalRepeat] when the goal just started
// (the last of the history) repeats a recent one. Call it with a.mu held.
func (a *Agent) noteRepeatLocked() {
	id := &a.state.Identity
	if earlier, ok := Repeats(id, len(id.Goals)-1); ok {
		g := id.Goals[len(id.Goals)-1]
		a.queue(Event{Kind: EventGoalRepeat, Goal: g.Objective, Text: earlier})
	}
}

// countRepeats adjusts an observation made over the last [assessWindow]
// ended goals (the goals [GoalEvidence] counts): a goal that repeats a recent
// one (see [Repeats]) and ended DONE counts as failed, not completed, so
// that going round in circles raises repeated_failure (spec §4) even when
// every round claims success. A repeat that failed is already counted as
// failed.
func countRepeats(id *identity.Identity, completed, failed *int) {
	cache := make(map[int][]uint64, assessWindow+RepeatWindow)
	n := 0
	for i := len(id.Goals) - 1; i >= 0 && n < assessWindow; i-- {
		g := id.Goals[i]
		if !g.Status.Ended() || g.Outcome == InterruptedByHost {
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
