package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestConformance runs the Store conformance suite (storetest) against a
// real server, with every hook.
func TestConformance(t *testing.T) {
	urls := map[identity.Store]string{}
	storetest.RunHarness(t, storetest.Harness{
		New: func(t *testing.T) identity.Store {
			url := pgtest.New(t)
			s := open(t, url, "first", 0)
			urls[s] = url
			return s
		},
		Corrupt: func(t *testing.T, s identity.Store, agentID string) {
			_, err := s.(*pgstore.Store).Pool().Exec(context.Background(),
				`UPDATE existence_states SET doc = substr(doc, 1, 30) WHERE agent_id = $1`, agentID)
			require.NoError(t, err)
		},
		FutureVersion: func(t *testing.T, s identity.Store, agentID string) error {
			_, err := s.(*pgstore.Store).Pool().Exec(context.Background(),
				`UPDATE existence_states SET doc_version = doc_version + 1 WHERE agent_id = $1`, agentID)
			require.NoError(t, err)
			_, err = s.Load(context.Background(), agentID)
			return err
		},
		Reopen: func(t *testing.T, s identity.Store) identity.Store {
			return open(t, urls[s], "second", 0)
		},
		Document: func(t *testing.T, s identity.Store, name string) identity.Document {
			return s.(*pgstore.Store).Document(name)
		},
	})
}
