package existence_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/llmtest"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestAgentSubscribe: an observer added after New sees the events the
// configured Observer sees, in the same order, until it cancels; a second
// cancel is harmless.
func TestAgentSubscribe(t *testing.T) {
	f := newFixture(goalReply(t, "map the workspace"), goalReply(t, "write notes"))
	a := f.agent(t, existence.Config{})
	var late existencetest.Recorder
	cancel := a.Subscribe(late.Observe)
	tick(t, a)
	n := len(late.Events())
	require.Positive(t, n, "the subscriber saw the cycle")
	assert.Equal(t, f.rec.Events(), late.Events(), "the same events as Config.Observer, in order")
	cancel()
	cancel()
	tick(t, a)
	assert.Len(t, late.Events(), n, "nothing after cancel")
	assert.Greater(t, len(f.rec.Events()), n, "Config.Observer still observes")
}

// TestRunnerSubscribe: a runner's subscriber sees the events of agents
// added before and after it subscribed, and may cancel from inside its own
// call.
func TestRunnerSubscribe(t *testing.T) {
	ctx := context.Background()
	clock := existencetest.NewClock(t0)
	r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Logger: discardLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	model := func() llm.Model {
		m := llmtest.NewFake(goalReply(t, "look around"))
		m.Repeat = true
		return m
	}
	cedar, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: model(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	var mu sync.Mutex
	agents := map[string]int{}
	r.Subscribe(func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		agents[e.AgentID]++
	})
	var once existencetest.Recorder
	var cancelOnce func()
	cancelOnce = r.Subscribe(func(e event.Event) {
		once.Observe(e)
		cancelOnce() // from inside its own call
	})
	vault, err := r.Add(ctx, existence.Config{ID: "builder", Name: "Vault", Model: model(), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
	require.NoError(t, err)
	tick(t, cedar)
	tick(t, vault)
	mu.Lock()
	defer mu.Unlock()
	assert.Positive(t, agents["scout"], "an agent added before Subscribe")
	assert.Positive(t, agents["builder"], "an agent added after Subscribe")
	assert.Len(t, once.Events(), 1, "a subscriber that cancels in its call sees one event")
}
