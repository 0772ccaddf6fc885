package existence

import (
	"context"
	"time"

	"github.com/existence-loop/sdk/llm"
	"github.com/existence-loop/sdk/llm/middleware"
)

// laneKey carries the lane of the cycle that chose a goal into its
// executor's context: its calls are that lane's (ModelCall.Lane), and a
// priority goal may draw on the budget's Reserve.
type laneKey struct{}

// callLane returns the lane a call in ctx is made for: the dispatched
// cycle's, else the lane of the cycle that chose the goal; ok is false
// outside the scheduler.
func callLane(ctx context.Context) (Lane, bool) {
	if d := dispatchFrom(ctx); d != nil {
		return d.lane, true
	}
	l, ok := ctx.Value(laneKey{}).(Lane)
	return l, ok
}

// observeModel reports every attempt of its model to the agent: an
// [EventModelCall] with the attempt's tokens (middleware.UsageOf: the server's
// counts, else estimates), which the agent counts in its usage and against
// its budgets.
type observeModel struct {
	a       *Agent
	next    llm.Model
	purpose string
}

var _ llm.Model = (*observeModel)(nil)

// Unwrap returns the wrapped model (llm.Unwrapper).
func (o *observeModel) Unwrap() llm.Model { return o.next }

func (o *observeModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := o.next.Generate(ctx, req)
	c := &ModelCall{Duration: time.Since(start), Outcome: middleware.Classify(err), Purpose: o.purpose}
	u := middleware.UsageOf(ctx, o.next, req, resp, err)
	c.PromptTokens, c.OutputTokens = u.InputTokens, u.OutputTokens
	c.PromptEstimated, c.OutputEstimated = u.InputEstimated, u.OutputEstimated
	if req != nil {
		c.Model = req.Model
	}
	if r := middleware.RepliedTo(resp, err); c.Model == "" && r != nil {
		c.Model = r.Model
	}
	if c.Model == "" {
		c.Model = modelName(o.next)
	}
	if l, ok := callLane(ctx); ok {
		c.Lane = l.String()
	}
	o.a.onAttempt(c, err)
	return resp, err
}

// modelName returns the name of the first model in the chain that has one.
func modelName(m llm.Model) string {
	for range 32 {
		if n, ok := m.(interface{ Name() string }); ok {
			if s := n.Name(); s != "" {
				return s
			}
		}
		u, ok := m.(llm.Unwrapper)
		if !ok {
			return ""
		}
		m = u.Unwrap()
	}
	return ""
}
