package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/llm/middleware"
)

// TestSwarmCountsCallsCutAtStop: a call that ends in a timeout or a
// cancellation once the run's duration is up was cut by the stop: it is
// counted as "stopped", not as a timeout; before the stop a timeout is one.
func TestSwarmCountsCallsCutAtStop(t *testing.T) {
	c := &swarmCollector{cycled: map[string]bool{}, said: map[string]time.Time{}, calls: map[string]int64{}}
	call := func(outcome string) event.Event {
		return event.Event{Kind: event.ModelCall, Call: &event.ModelCallInfo{Purpose: "cycle", Outcome: outcome}}
	}
	c.observe(call(middleware.OutcomeTimeout))
	c.stopped.Store(true)
	c.observe(call(middleware.OutcomeTimeout))
	c.observe(call(middleware.OutcomeCanceled))
	c.observe(call(""))
	assert.Equal(t, map[string]int64{"cycle/timeout": 1, "cycle/stopped": 2, "cycle/ok": 1}, c.calls)
}
