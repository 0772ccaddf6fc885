package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/storetest"
)

func TestConformance(t *testing.T) {
	open := func(t *testing.T, dir string) *filestore.Store {
		s, err := filestore.Open(dir, filestore.Options{})
		require.NoError(t, err)
		return s
	}
	storetest.RunHarness(t, storetest.Harness{
		New: func(t *testing.T) identity.Store { return open(t, t.TempDir()) },
		Corrupt: func(t *testing.T, s identity.Store, id string) {
			require.NoError(t, os.WriteFile(s.(*filestore.Store).Path(id), []byte(`{"schema_version": 1, "state": {`), 0o600))
		},
		FutureVersion: func(t *testing.T, s identity.Store, id string) error {
			require.NoError(t, os.WriteFile(s.(*filestore.Store).Path(id), []byte(`{"schema_version": 99, "state": {}}`), 0o600))
			_, err := s.Load(t.Context(), id)
			return err
		},
		Reopen: func(t *testing.T, s identity.Store) identity.Store {
			return open(t, filepath.Clean(s.(*filestore.Store).Dir()))
		},
		Document: func(t *testing.T, s identity.Store, name string) identity.Document {
			return s.(*filestore.Store).Document(name)
		},
	})
}
