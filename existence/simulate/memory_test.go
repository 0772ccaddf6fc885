package simulate_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestToolLoopWithMemory: with Memory on, the simulated agents' tool
// loops store their outcomes (with the fake embedder) and recall them
// before later goals; the run stays deterministic.
func TestToolLoopWithMemory(t *testing.T) {
	for _, driver := range drivers {
		t.Run(driver.String(), func(t *testing.T) {
			cfg := func(store identity.Store, obs event.Observer) simulate.Config {
				return simulate.Config{
					Agents: simulate.Agents(2), Duration: 30 * time.Minute, Seed: 5, Driver: driver,
					Model:    simulate.Stochastic{FailureRate: 0.3, AbandonShare: 0.5},
					Executor: simulate.ToolLoop{}, Workspace: t.TempDir(),
					Memory: true, Store: store, Observer: obs,
				}
			}
			store := memstore.New()
			var mu sync.Mutex
			recalled := 0
			res, traj := run(t, cfg(store, func(e event.Event) {
				if e.Kind == event.Memory && e.Memory != nil && e.Memory.Kind == memory.EventRecalled && e.Memory.Count > 0 {
					mu.Lock()
					recalled++
					mu.Unlock()
				}
			}))
			assert.Positive(t, res.Memory.Stored, "outcomes were stored")
			assert.Positive(t, res.Memory.Recalls)
			assert.Positive(t, recalled, "later goals recalled earlier ones")
			recs, err := store.Memories(context.Background(), "scout")
			require.NoError(t, err)
			require.NotEmpty(t, recs, "kept in the run's store")
			assert.False(t, recs[0].Created.Before(simulate.DefaultStart), "memories carry virtual times")
			var kinds = map[memory.Kind]bool{}
			for _, r := range recs {
				kinds[r.Kind] = true
			}
			assert.True(t, kinds[memory.KindOutcome], "step outcomes")

			_, again := run(t, cfg(memstore.New(), nil))
			assert.True(t, bytes.Equal(traj, again), "the same config gives the same trajectory")
		})
	}
}
