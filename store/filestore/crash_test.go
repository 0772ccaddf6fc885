package filestore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/store/storetest"
)

// TestCrashAtomicity kills a child process saving three agents with
// SIGKILL at random, 200 times (storetest.Crash): every state loads whole,
// at least the last version whose Save returned. Two journal records per
// document, so that kills land in appends and in compactions alike. The
// temp files the kills left are never listed as agents.
func TestCrashAtomicity(t *testing.T) {
	t.Parallel()
	agents := []string{"analyst", "builder", "scout"}
	dir := storetest.Crash(t, storetest.CrashConfig{
		Open: func(_ context.Context, dir string) (identity.Store, error) {
			return Open(dir, Options{Now: fixedNow, JournalRecords: 2})
		},
		Agents: agents,
		Seed:   20261121,
	})
	store := openStore(t, dir)
	ids, err := store.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, agents, ids, "temp files left by the kills are not listed")
}
