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
	// LayoutCacheAgent is [LayoutCache] with the agent's identity ("You
	// are {name}.") first ([CacheAgentOrder]), for a server that keeps at
	// least one KV-cache slot per agent. Ollama's runner (0.17.4, without
	// OLLAMA_MULTIUSER_CACHE) gives a request the free slot whose cached
	// prompt shares the longest prefix with it, an empty slot sharing
	// none: under [LayoutCache] every agent's prompt shares the text
	// before its name with every other agent's, so an agent takes another
	// agent's slot and evicts its cache while the other slots stay empty.
	// With the name first two agents share only the chat template's first
	// tokens, and each agent's own slot, once agents' requests overlapped
	// and spread over the slots, shares the most with its next prompt. On
	// a server with fewer slots than agents it shares less than
	// [LayoutCache] (interleaved agents share only those first tokens).
	LayoutCacheAgent
)

// Cache reports whether l is a cache layout ([LayoutCache] or
// [LayoutCacheAgent]): its lists move in batches, its prompt has a stable
// prefix ([Prompt].StableEnd), and an agent's cycles offer its tools.
func (l Layout) Cache() bool { return l == LayoutCache || l == LayoutCacheAgent }

// String returns "original", "cache" or "cache-agent".
func (l Layout) String() string {
	switch l {
	case LayoutCache:
		return "cache"
	case LayoutCacheAgent:
		return "cache-agent"
	}
	return "original"
}

// ParseLayout parses "original" (or ""), "cache" and "cache-agent", as
// the existence command's -prompt-layout flag takes them. Error: any other
// name.
func ParseLayout(s string) (Layout, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "original":
		return LayoutOriginal, nil
	case "cache":
		return LayoutCache, nil
	case "cache-agent":
		return LayoutCacheAgent, nil
	}
	return 0, fmt.Errorf("prompt: unknown layout %q (want original, cache or cache-agent)", s)
}

// CacheOrder returns the names of the default sections in [LayoutCache]'s
// order (a new slice on every call), text more agents share first:
//
//   - the same for every agent: [SectionWorld], [SectionSituation] (its
//     presence line aside), [SectionDirective], [SectionResponseFormat]
//     (the stable prefix; a server renders the tool definitions after it,
//     so those are shared too);
//   - the peers, [SectionPeers]: the same for agents that are shown the
//     same others (a runner's shared rotation, runner.Config.SharedPeers,
//     shows interleaved agents the same ones);
//   - what the agent has gathered, slowest-changing first and the same
//     for every agent that has gathered none of it yet (their
//     placeholders): [SectionWorldview], [SectionOpinions],
//     [SectionQuestions], [SectionRecentGoals] (these three grow at their
//     end), [SectionHistory], [SectionDiscoveries] (sections inserted after
//     it, such as [SlotsSection], come before the agent's name);
//   - who the agent is (its own): [SectionIdentity];
//   - per cycle: [SectionTime], [SectionInnerState] (the stressors),
//     [SectionLastOutcome] (and [Memories] inserted after it),
//     [SectionPeerMessages], [SectionHostMessage], [SectionTask].
//
// A server with one KV-cache slot for many agents evaluates each prompt
// after what it shares with another agent's, so the agent's name comes
// after everything agents may share.
func CacheOrder() []string {
	return []string{
		SectionWorld, SectionSituation, SectionDirective, SectionResponseFormat,
		SectionPeers,
		SectionWorldview, SectionOpinions, SectionQuestions, SectionRecentGoals,
		SectionHistory, SectionDiscoveries,
		SectionIdentity,
		SectionTime, SectionInnerState, SectionLastOutcome,
		SectionPeerMessages, SectionHostMessage, SectionTask,
	}
}

// CacheAgentOrder returns the names of the default sections in
// [LayoutCacheAgent]'s order (a new slice on every call): [SectionIdentity]
// first, then [CacheOrder]'s sections in its order, [SectionPeers] with
// the narratives after [SectionHistory]. The stable prefix is the identity
// and the four sections every agent shares.
func CacheAgentOrder() []string {
	return []string{
		SectionIdentity,
		SectionWorld, SectionSituation, SectionDirective, SectionResponseFormat,
		SectionWorldview, SectionOpinions, SectionQuestions, SectionRecentGoals,
		SectionHistory, SectionPeers, SectionDiscoveries,
		SectionTime, SectionInnerState, SectionLastOutcome,
		SectionPeerMessages, SectionHostMessage, SectionTask,
	}
}

// cacheSections returns the default sections in order (CacheOrder or
// CacheAgentOrder), their lists batched.
func cacheSections(def []Section, order []string) []Section {
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
	for _, name := range order {
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

// stableSections are the sections of the cache layouts that do not change
// from one cycle to the next (the world, the situation, the directive, the
// response format and who the agent is): a prompt's stable prefix is its
// present sections up to the first one not in this set. What changes
// slowly (the worldview and the rest) is not in it: a model server renders
// tool definitions right after the system message, so a system message
// that changed would make the server evaluate the tools again too.
var stableSections = map[string]bool{
	SectionWorld: true, SectionSituation: true, SectionDirective: true,
	SectionResponseFormat: true, SectionIdentity: true,
}

// stable sets p.StableEnd under a cache layout: the sections are joined by
// exactly one blank line, so the prefix ends after the last stable
// section's text.
func stable(l *layout, p *Prompt) *Prompt {
	if !l.cfg.Layout.Cache() {
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
