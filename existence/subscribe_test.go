package existence_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/store/memstore"
)

// kinds collects the kinds of the events it observes.
type kinds struct {
	mu sync.Mutex
	k  []existence.EventKind
}

func (k *kinds) observe(e existence.Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.k = append(k.k, e.Kind)
}

func (k *kinds) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.k)
}

// TestAgentSubscribe: an observer added after New sees the events the
// configured Observer sees, in the same order, until it cancels; a second
// cancel is harmless.
func TestAgentSubscribe(t *testing.T) {
	f := newFixture(goalReply(t, "map the workspace"), goalReply(t, "write notes"))
	a := f.agent(t, existence.Config{})
	var late kinds
	cancel := a.Subscribe(late.observe)
	tick(t, a)
	n := late.len()
	require.Positive(t, n, "the subscriber saw the cycle")
	var configured []existence.EventKind
	for _, e := range f.rec.Events() {
		configured = append(configured, e.Kind)
	}
	assert.Equal(t, configured, late.k, "the same events as Config.Observer, in order")
	cancel()
	cancel()
	tick(t, a)
	assert.Equal(t, n, late.len(), "nothing after cancel")
	assert.Greater(t, len(f.rec.Events()), n, "Config.Observer still observes")
}

// TestRunnerSubscribe: a runner's subscriber sees the events of agents
// added before and after it subscribed, and may cancel from inside its own
// call.
func TestRunnerSubscribe(t *testing.T) {
	ctx := context.Background()
	clock := existencetest.NewClock(t0)
	r, err := existence.NewRunner(existence.RunnerConfig{Store: memstore.New(), Clock: clock, Logger: discardLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	model := func() llm.Model {
		m := llmtest.NewFake(goalReply(t, "look around"))
		m.Repeat = true
		return m
	}
	cedar, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model(), Retry: llm.RetryPolicy{Attempts: 1}})
	require.NoError(t, err)
	var mu sync.Mutex
	agents := map[string]int{}
	r.Subscribe(func(e existence.Event) {
		mu.Lock()
		defer mu.Unlock()
		agents[e.AgentID]++
	})
	var once kinds
	var cancelOnce func()
	cancelOnce = r.Subscribe(func(e existence.Event) {
		once.observe(e)
		cancelOnce() // from inside its own call
	})
	vault, err := r.Add(ctx, existence.Config{ID: "builder", Name: "Vault", Model: model(), Retry: llm.RetryPolicy{Attempts: 1}})
	require.NoError(t, err)
	tick(t, cedar)
	tick(t, vault)
	mu.Lock()
	defer mu.Unlock()
	assert.Positive(t, agents["scout"], "an agent added before Subscribe")
	assert.Positive(t, agents["builder"], "an agent added after Subscribe")
	assert.Equal(t, 1, once.len(), "a subscriber that cancels in its call sees one event")
}
