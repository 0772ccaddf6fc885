package identity_test

import (
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/storetest"
	"github.com/existence-loop/sdk/memory"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) identity.Store { return identity.NewMemoryStore() })
}

func BenchmarkMemoryInsert(b *testing.B) {
	storetest.BenchmarkMemoryInsert(b, func(*testing.B) memory.Store { return identity.NewMemoryStore() })
}
