package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/llm/middleware"
)

// TestAdaptiveWorkersFollowTheLimit: under AdaptiveWorkers the lanes
// share the meter's limit, and move with it: the priority lane's reserve
// is a quarter of it (at least PriorityWorkers), the autonomy lane has
// the rest, and the priority lane may grow to the whole limit.
func TestAdaptiveWorkersFollowTheLimit(t *testing.T) {
	r, err := newRunner(Config{AutonomyWorkers: AdaptiveWorkers, PriorityWorkers: 1,
		Adaptive: middleware.AdaptiveConfig{Initial: 8}})
	require.NoError(t, err)
	st := r.Stats()
	assert.Equal(t, [2]int{6, 8}, st.Workers)
	assert.True(t, st.Concurrency.Adaptive)
	assert.Equal(t, 8, st.Concurrency.Limit)

	n := r.meter.Begin()
	r.meter.Record(st0, middleware.Sample{RTT: time.Millisecond, InFlight: n, Overload: true})
	st = r.Stats()
	assert.Equal(t, [2]int{4, 6}, st.Workers, "a 503 cuts the limit by a quarter")
	assert.Equal(t, 6, st.Concurrency.Limit)
	assert.Equal(t, int64(1), st.Concurrency.Overloads)
	assert.Equal(t, int64(1), st.Concurrency.Cuts)

	fixed, err := newRunner(Config{AutonomyWorkers: 3})
	require.NoError(t, err)
	n = fixed.meter.Begin()
	fixed.meter.Record(st0, middleware.Sample{RTT: time.Millisecond, InFlight: n, Overload: true})
	st = fixed.Stats()
	assert.False(t, st.Concurrency.Adaptive)
	assert.Equal(t, 3, st.Concurrency.Limit, "a fixed lane is measured, not resized")
	assert.Equal(t, int64(1), st.Concurrency.Overloads)
}
