package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/prompt"
)

// TestPeerBookHoldsUpdatesForTheSweep: with a shared rotation, an agent's
// update shows in its peers' prompts only once the sweep moves on, so
// that every agent of a sweep is shown the same narratives; without it,
// at once.
func TestPeerBookHoldsUpdatesForTheSweep(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			var b peerBook
			b.init(3, shared)
			for i := range 10 {
				id := fmt.Sprint("a", i)
				b.set(id, prompt.Peer{ID: id, Name: id, Narrative: "new"})
			}
			narrative := func(self, peer string, round uint64) string {
				peers, _ := b.choose(self, round, shared)
				for _, p := range peers {
					if p.ID == peer {
						return p.Narrative
					}
				}
				return "not shown"
			}
			round := uint64(0) // the shared window starts at a0
			if !shared {
				round = 1 // a5's own window starts after it, moved on once: a9, a0, a1
			}
			b.update("a1", "a1", "mapped the hall", false)
			want := "mapped the hall"
			if shared {
				want = "new" // held until the sweep moves on
			}
			assert.Equal(t, want, narrative("a5", "a1", round))
			if shared {
				// Sweep 3 (rounds 30 to 39) starts the window at a9: a9, a0, a1.
				assert.Equal(t, "mapped the hall", narrative("a5", "a1", 30))
			}
		})
	}
}
