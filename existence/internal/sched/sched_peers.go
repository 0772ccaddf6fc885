package sched

import (
	"slices"
	"sync"

	"github.com/existence-loop/sdk/prompt"
)

// peerBook is the runner's snapshot of what agents know of each other
// (spec §2 row 10): each agent's name and narrative, updated after its cycles, the
// agents in crisis, who messaged whom, and who was shown to whom. Choosing
// an agent's peers reads O(MaxPeersShown) entries and locks no agent.
type peerBook struct {
	max int
	// shared: the rotation is shared (Config.SharedPeers), and updates
	// wait in pending until the sweep moves on, so that the agents of
	// one sweep see the same narratives.
	shared bool

	pending map[string]peerUpdate // guarded by mu
	sweep   uint64                // guarded by mu

	mu     sync.RWMutex
	info   map[string]prompt.Peer
	ids    []string // sorted; rebuilt when dirty
	pos    map[string]int
	dirty  bool
	crisis []string            // sorted
	recent map[string][]string // recipient → senders, newest first, at most max
	shown  map[string][]string // agent → the peers its last prompt showed
}

// peerUpdate is an agent's summary after a cycle.
type peerUpdate struct {
	name, narrative string
	crisis          bool
}

func (b *peerBook) init(max int, shared bool) {
	b.max, b.shared = max, shared
	b.pending = map[string]peerUpdate{}
	b.info = map[string]prompt.Peer{}
	b.pos = map[string]int{}
	b.recent = map[string][]string{}
	b.shown = map[string][]string{}
}

// set records an agent's summary (a new agent).
func (b *peerBook) set(id string, p prompt.Peer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.info[id]; !ok {
		b.dirty = true
	}
	delete(b.pending, id) // a summary held from before a removal is stale
	b.info[id] = p
}

// update records an agent's name, narrative and crisis after a cycle
// (shared: when the sweep moves on); it takes the write lock only when
// something changed.
func (b *peerBook) update(id, name, narrative string, crisis bool) {
	b.mu.RLock()
	p, ok := b.info[id]
	_, inCrisis := slices.BinarySearch(b.crisis, id)
	_, waiting := b.pending[id]
	b.mu.RUnlock()
	if ok && !waiting && p.Name == name && p.Narrative == narrative && inCrisis == crisis {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.info[id]; !ok {
		return // removed meanwhile
	}
	if b.shared {
		b.pending[id] = peerUpdate{name: name, narrative: narrative, crisis: crisis}
		return
	}
	b.applyLocked(id, peerUpdate{name: name, narrative: narrative, crisis: crisis})
}

// applyLocked records u for agent id; b.mu is held.
func (b *peerBook) applyLocked(id string, u peerUpdate) {
	name, narrative, crisis := u.name, u.narrative, u.crisis
	if _, ok := b.info[id]; !ok {
		return // removed meanwhile
	}
	b.info[id] = prompt.Peer{ID: id, Name: name, Narrative: narrative}
	i, found := slices.BinarySearch(b.crisis, id)
	switch {
	case crisis && !found:
		b.crisis = slices.Insert(b.crisis, i, id)
	case !crisis && found:
		b.crisis = slices.Delete(b.crisis, i, i+1)
	}
}

// remove forgets an agent.
func (b *peerBook) remove(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.info, id)
	delete(b.pending, id)
	delete(b.recent, id)
	delete(b.shown, id)
	if i, found := slices.BinarySearch(b.crisis, id); found {
		b.crisis = slices.Delete(b.crisis, i, i+1)
	}
	b.dirty = true
}

// messaged records that from sent a message to to.
func (b *peerBook) messaged(to, from string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.recent[to]
	if i := slices.Index(r, from); i >= 0 {
		r = slices.Delete(r, i, i+1)
	}
	r = slices.Insert(r, 0, from)
	if len(r) > b.max {
		r = r[:b.max]
	}
	b.recent[to] = r
}

// shownTo returns the peers agent id's last prompt showed; every other
// agent when they all fit in MaxPeersShown.
func (b *peerBook) shownTo(id string) []string {
	b.mu.RLock()
	if len(b.info)-1 > b.max {
		defer b.mu.RUnlock()
		if s, ok := b.shown[id]; ok {
			return slices.Clone(s)
		}
		return nil
	}
	b.mu.RUnlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sortLocked()
	out := make([]string, 0, len(b.ids))
	for _, p := range b.ids {
		if p != id {
			out = append(out, p)
		}
	}
	return out
}

func (b *peerBook) sortLocked() {
	if !b.dirty {
		return
	}
	b.ids = b.ids[:0]
	for id := range b.info {
		b.ids = append(b.ids, id)
	}
	slices.Sort(b.ids)
	clear(b.pos)
	for i, id := range b.ids {
		b.pos[id] = i
	}
	b.dirty = false
}

// choose returns the peers agent self is shown at its round-th cycle and
// how many others are not shown (see [Runner]). With shared, round counts
// every agent's cycles, and the crisis and rotation windows start where
// the sweep (round / the agent count) puts them, the same for every agent.
func (b *peerBook) choose(self string, round uint64, shared bool) ([]prompt.Peer, int) {
	if shared {
		b.mu.RLock()
		moved := round/uint64(max(len(b.info), 1)) != b.sweep
		b.mu.RUnlock()
		if moved { // the held updates show from the new sweep on
			b.mu.Lock()
			b.sweep = round / uint64(max(len(b.info), 1))
			for id, u := range b.pending {
				b.applyLocked(id, u)
			}
			clear(b.pending)
			b.mu.Unlock()
		}
	}
	b.mu.RLock()
	if b.dirty {
		b.mu.RUnlock()
		b.mu.Lock()
		b.sortLocked()
		b.mu.Unlock()
		b.mu.RLock()
	}
	defer b.mu.RUnlock()
	n := len(b.ids)
	others := n
	if _, ok := b.info[self]; ok {
		others--
	}
	if others <= b.max {
		out := make([]prompt.Peer, 0, others)
		for _, id := range b.ids {
			if id != self {
				out = append(out, b.info[id])
			}
		}
		return out, 0
	}
	chosen := make([]string, 0, b.max)
	take := func(id string) bool {
		if id == self || slices.Contains(chosen, id) {
			return len(chosen) < b.max
		}
		if _, ok := b.info[id]; !ok {
			return len(chosen) < b.max
		}
		chosen = append(chosen, id)
		return len(chosen) < b.max
	}
	more := true
	for _, id := range b.recent[self] {
		if more = take(id); !more {
			break
		}
	}
	if more && len(b.crisis) > 0 {
		start := int((hashID(self) + round) % uint64(len(b.crisis)))
		if shared {
			start = int(b.sweep % uint64(len(b.crisis)))
		}
		for i := range len(b.crisis) {
			if more = take(b.crisis[(start+i)%len(b.crisis)]); !more {
				break
			}
		}
	}
	if more {
		start := b.pos[self] + 1 + int(round%uint64(n))*b.max
		if shared {
			start = int(b.sweep%uint64(n)) * b.max
		}
		for i := range n {
			if more = take(b.ids[(start+i)%n]); !more {
				break
			}
		}
	}
	out := make([]prompt.Peer, len(chosen))
	for i, id := range chosen {
		out[i] = b.info[id]
	}
	b.mu.RUnlock()
	b.mu.Lock()
	b.shown[self] = chosen
	b.mu.Unlock()
	b.mu.RLock()
	return out, others - len(chosen)
}

// hashID is FNV-1a of an id.
func hashID(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}
