package agentdef_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/agentdef"
)

type loaded struct {
	set *agentdef.Set
	err error
}

// next waits for a load with the wanted outcome, for at most 10 s (a
// deadline, not a sleep): loads of partial writes may come first.
func next(t *testing.T, ch <-chan loaded, ok func(loaded) bool) loaded {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-ch:
			if ok(l) {
				return l
			}
		case <-deadline:
			t.Fatal("no reload within 10 s")
		}
	}
}

// TestWatchReloads: a changed definition is loaded again; one that no
// longer parses is reported with its file and line; a new agent's folder
// is watched too.
func TestWatchReloads(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "agent.yaml"), "id: a\nmax_tokens: 100\n")
	ch := make(chan loaded, 64)
	stop, err := agentdef.Watch(context.Background(), dir, agentdef.Options{}, func(s *agentdef.Set, err error) { ch <- loaded{s, err} })
	require.NoError(t, err)
	defer stop()

	write(t, filepath.Join(dir, "a", "agent.yaml"), "id: a\nmax_tokens: 200\n")
	l := next(t, ch, func(l loaded) bool { return l.err == nil && l.set.Agents[0].MaxTokens == 200 })
	assert.Equal(t, "a", l.set.Agents[0].ID)

	write(t, filepath.Join(dir, "a", "agent.yaml"), "id: a\nmax_tokens: lots\n")
	l = next(t, ch, func(l loaded) bool { return errors.Is(l.err, agentdef.ErrType) })
	assert.Contains(t, l.err.Error(), filepath.Join(dir, "a", "agent.yaml")+":2:")

	require.NoError(t, os.Mkdir(filepath.Join(dir, "b"), 0o755))
	write(t, filepath.Join(dir, "a", "agent.yaml"), "id: a\n")
	write(t, filepath.Join(dir, "b", "agent.yaml"), "id: b\n")
	next(t, ch, func(l loaded) bool { return l.err == nil && len(l.set.Agents) == 2 })
	write(t, filepath.Join(dir, "b", "agent.yaml"), "id: b\nname: Bee\n")
	next(t, ch, func(l loaded) bool { return l.err == nil && len(l.set.Agents) == 2 && l.set.Agents[1].Name == "Bee" })
}
