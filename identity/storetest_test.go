package identity_test

import (
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) identity.Store { return identity.NewMemoryStore() })
}
