package existence

import (
	"context"

	"github.com/existence-loop/sdk/existence/internal/wire"
)

// laneKey carries the lane of the cycle that chose a goal into its
// executor's context: its calls are that lane's (ModelCall.Lane), and a
// priority goal may draw on the budget's Reserve.
type laneKey struct{}

// callLane returns the lane a call in ctx is made for: the dispatched
// cycle's, else the lane of the cycle that chose the goal; ok is false
// outside the scheduler.
func callLane(ctx context.Context) (wire.Lane, bool) {
	if d := wire.DispatchFrom(ctx); d != nil {
		return d.Lane, true
	}
	l, ok := ctx.Value(laneKey{}).(wire.Lane)
	return l, ok
}
