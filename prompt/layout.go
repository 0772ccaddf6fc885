package prompt

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// Layout is an order of the default sections, chosen with [Config].Layout.
type Layout uint8

const (
	// LayoutOriginal is spec §2's order ([DefaultOrder]): the original's
	// prompt, which the fidelity tests hold byte for byte. It starts with
	// "You are {name}." and shows the time, the inner state and the
	// sliding lists early, so that no two agents share a prefix and an
	// agent's own prompts differ from about a third of the way in.
	LayoutOriginal Layout = iota
	// LayoutCache orders the same sections for a model server's KV cache
	// (Ollama's and llama.cpp's slots, vLLM's prefix caching), which
	// evaluates only the tokens after the first difference from a prompt
	// it holds: text that is the same for every agent first, then what is
	// stable for this agent, then what changes slowly, then what changes
	// every cycle ([CacheOrder]). Its lists of recent items (opinions,
	// questions, discoveries, recent goals) move their first shown item
	// in batches rather than one item per new item (see [BatchStart]), so
	// that a new item changes only the list's end. Every section's text is
	// the original's; only the order and those windows differ (spec §2,
	// "cache layout").
	LayoutCache
)

// String returns "original" or "cache".
func (l Layout) String() string {
	if l == LayoutCache {
		return "cache"
	}
	return "original"
}

// ParseLayout parses "original" (or "") and "cache", as the existence
// command's -prompt-layout flag takes them. Error: any other name.
func ParseLayout(s string) (Layout, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "original":
		return LayoutOriginal, nil
	case "cache":
		return LayoutCache, nil
	}
	return 0, fmt.Errorf("prompt: unknown layout %q (want original or cache)", s)
}

// CacheOrder returns the names of the default sections in [LayoutCache]'s
// order (a new slice on every call):
//
//   - the same for every agent: [SectionWorld], [SectionSituation] (its
//     presence line aside), [SectionDirective], [SectionResponseFormat];
//   - stable for this agent: [SectionIdentity];
//   - slow-changing, what changes least often first: [SectionWorldview],
//     [SectionOpinions], [SectionQuestions], [SectionRecentGoals] (these
//     three grow at their end), [SectionHistory] and [SectionPeers] (the
//     narratives, which change where they are cut when an entry is added),
//     [SectionDiscoveries] (last, so that sections inserted after it, such
//     as [SlotsSection], start the per-cycle part);
//   - per cycle: [SectionTime], [SectionInnerState] (the stressors),
//     [SectionLastOutcome] (and [Memories] inserted after it),
//     [SectionPeerMessages], [SectionHostMessage], [SectionTask].
func CacheOrder() []string {
	return []string{
		SectionWorld, SectionSituation, SectionDirective, SectionResponseFormat,
		SectionIdentity,
		SectionWorldview, SectionOpinions, SectionQuestions, SectionRecentGoals,
		SectionHistory, SectionPeers, SectionDiscoveries,
		SectionTime, SectionInnerState, SectionLastOutcome,
		SectionPeerMessages, SectionHostMessage, SectionTask,
	}
}

// cacheSections returns the default sections in CacheOrder, their lists
// batched.
func cacheSections(def []Section) []Section {
	by := make(map[string]Section, len(def))
	for _, s := range def {
		if std, ok := s.(*stdSection); ok {
			c := *std
			c.batch = true
			s = &c
		}
		by[s.Name()] = s
	}
	out := make([]Section, 0, len(def))
	for _, name := range CacheOrder() {
		out = append(out, by[name])
	}
	return out
}

// BatchStart returns the index of the first of the last n of length items
// that a [LayoutCache] list shows: the first item at or after length−n,
// among the first batch of them (⌈n/2⌉ items), whose key hashes to a
// batch boundary (FNV-1a of key(i) modulo ⌈n/2⌉ is 0); else length−n. So
// the first item shown stays the same while items are added at the end,
// until it falls out of the last n: a new item changes only the list's
// end, and the list shows from ⌊n/2⌋+1 to n items. Content, not position,
// decides, so that a list capped at its head (the oldest item dropped for
// each new one) moves in batches too.
func BatchStart(length, n int, key func(i int) string) int {
	start := max(0, length-n)
	b := (n + 1) / 2
	if b <= 1 || length <= n {
		return start
	}
	for i := start; i < min(start+b, length); i++ {
		h := fnv.New32a()
		_, _ = h.Write([]byte(key(i)))
		if h.Sum32()%uint32(b) == 0 {
			return i
		}
	}
	return start
}

// stableSections are the sections of [CacheOrder] that do not change
// from one cycle to the next (the world, the situation, the directive, the
// response format and who the agent is): a prompt's stable prefix is its
// present sections up to the first one not in this set. What changes
// slowly (from the worldview on) is not in it: a model server renders tool
// definitions right after the system message, so a system message that
// changed would make the server evaluate the tools again too.
var stableSections = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range CacheOrder() {
		if n == SectionWorldview {
			break
		}
		m[n] = true
	}
	return m
}()

// stable sets p.StableEnd under LayoutCache: the sections are joined by
// exactly one blank line, so the prefix ends after the last stable
// section's text.
func stable(l *layout, p *Prompt) *Prompt {
	if l.cfg.Layout != LayoutCache {
		return p
	}
	end := 0
	for i, s := range p.Sections {
		if !stableSections[s.Name] {
			break
		}
		if i > 0 {
			end += 2
		}
		end += len(s.Text)
	}
	p.StableEnd = min(end, len(p.Text))
	return p
}
