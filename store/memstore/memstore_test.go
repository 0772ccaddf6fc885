package memstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/memstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestConformance: the in-memory store keeps the identity.Store and
// memory.Store promises (round trip, copies, list, hostile ids, invalid
// states, cancellation, concurrency), as the durable backends do.
func TestConformance(t *testing.T) {
	docs := map[identity.Store]map[string]identity.Document{}
	var mu sync.Mutex
	storetest.RunHarness(t, storetest.Harness{
		New: func(t *testing.T) identity.Store { return memstore.New() },
		// A Store keeps no documents: the application keeps a
		// memory document next to it, one per name.
		Document: func(t *testing.T, s identity.Store, name string) identity.Document {
			mu.Lock()
			defer mu.Unlock()
			if docs[s] == nil {
				docs[s] = map[string]identity.Document{}
			}
			if docs[s][name] == nil {
				docs[s][name] = identity.NewMemoryDocument(name)
			}
			return docs[s][name]
		},
	})
}

func TestZeroValue(t *testing.T) {
	var m memstore.Store
	ctx := context.Background()
	_, err := m.Load(ctx, "scout")
	if !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("Load of nothing = %v, want ErrNotFound", err)
	}
	if err := m.Save(ctx, storetest.FullState("scout")); err != nil {
		t.Fatal(err)
	}
	ids, err := m.List(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "scout" {
		t.Fatalf("List = %v, %v; want [scout]", ids, err)
	}
}

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(*testing.B) memory.Store { return memstore.New() })
}
