package identity_test

import (
	"sync"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	docs := map[identity.Store]map[string]identity.Document{}
	var mu sync.Mutex
	storetest.RunHarness(t, storetest.Harness{
		New: func(t *testing.T) identity.Store { return identity.NewMemoryStore() },
		// A MemoryStore keeps no documents: the application keeps a
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

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(*testing.B) memory.Store { return identity.NewMemoryStore() })
}
