package runner_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/llm/middleware"
	"github.com/existence-loop/sdk/slot"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestNotificationFloodKeepsItsRate: 50 notifying slots a second for 20 s
// at a 60 s heartbeat cause at most 8 cycles of the agent (the default
// trigger gap, a quarter of the heartbeat, makes it 2); with a 1 s gap
// the same flood makes about 20. Virtual driver, manual clock.
func TestNotificationFloodKeepsItsRate(t *testing.T) {
	assert.Equal(t, 15*time.Second, runner.DefaultTriggerGap(time.Minute))
	flood := func(gap time.Duration) int {
		ctx := context.Background()
		clock := existencetest.NewClock(t0)
		m := &recModel{clock: clock}
		r, err := runner.New(runner.Config{Store: memstore.New(), Clock: clock, Heartbeat: time.Minute,
			NoStagger: true, TriggerGap: gap, Logger: discardLogger()})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		a, err := r.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: m, Prompt: slotsPrompt(t), Calls: existence.CallConfig{Retry: middleware.RetryPolicy{Attempts: 1}}})
		require.NoError(t, err)
		require.NoError(t, r.RunVirtual(ctx, t0))
		require.Len(t, m.Calls(), 1, "the first heartbeat's cycle")
		base := t0.Add(time.Second)
		for i := range 50 * 20 {
			at := base.Add(time.Duration(i) * 20 * time.Millisecond)
			require.NoError(t, r.RunVirtual(ctx, at))
			require.NoError(t, a.PostSlot(ctx, slot.Slot{ID: "spam", Status: slot.Completed, Summary: fmt.Sprint("post ", i), NotifyUser: true}))
		}
		end := base.Add(20 * time.Second)
		require.NoError(t, r.RunVirtual(ctx, t0.Add(59*time.Second))) // the flood's last wanted cycle, before the next heartbeat
		assert.Equal(t, int64(1000), r.Stats().Triggers)
		n := 0
		for _, c := range m.Calls()[1:] {
			if c.at.Before(end.Add(max(gap, runner.DefaultTriggerGap(time.Minute)))) {
				n++
			}
		}
		return n
	}
	assert.LessOrEqual(t, flood(0), 8, "cycles the flood caused with the default trigger gap")
	assert.Equal(t, 2, flood(0), "at 15 s and 30 s after the heartbeat at 0 s")
	assert.Greater(t, flood(time.Second), 8, "a 1 s gap lets the flood through")
}
