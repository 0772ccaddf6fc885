package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestCrashGroupCommit kills a child process saving six agents under
// group commit with SIGKILL at random, 200 times (storetest.Crash): the
// database opens after each kill, and every agent's state is whole and at
// least the last version whose Save returned.
func TestCrashGroupCommit(t *testing.T) {
	t.Parallel()
	storetest.Crash(t, storetest.CrashConfig{
		Open: func(ctx context.Context, dir string) (identity.Store, error) {
			return sqlitestore.Open(ctx, filepath.Join(dir, "state.db"), sqlitestore.Options{})
		},
		Agents: []string{"a0", "a1", "a2", "a3", "a4", "a5"},
		Seed:   20261123,
	})
}
