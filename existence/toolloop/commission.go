package toolloop

import (
	"context"
	"errors"

	"github.com/existence-loop/sdk/existence"
)

// CommissioningToolName is the name of [CommissioningTool].
const CommissioningToolName = "complete_commissioning"

// commissionArgs are complete_commissioning's arguments.
type commissionArgs struct {
	Name        string `json:"name" jsonschema:"description=the name you take (letters\\, digits\\, spaces\\, - _ . ')"`
	Personality string `json:"personality" jsonschema:"description=your personality in a few comma-separated words"`
	Human       string `json:"human" jsonschema:"description=what you learned of your human"`
}

// CommissioningTool returns the complete_commissioning tool (GSV's
// commissioning ceremony): the calling agent, found by its id with
// agent, completes its commissioning with the name, personality and
// what it learned of its human ([existence.Agent.CompleteCommissioning],
// which validates them). The result says what was recorded; an agent not
// being commissioned, or already commissioned, gets an error it can read.
func CommissioningTool(agent func(id string) *existence.Agent) Tool {
	return NewTool(CommissioningToolName, "Complete your commissioning ceremony, once: the name you take, your personality and what you learned of your human. Call it when you have followed the commissioning instructions.",
		func(ctx context.Context, args commissionArgs) (string, error) {
			from, ok := Caller(ctx)
			if !ok {
				return "", errors.New("complete_commissioning: no calling agent")
			}
			a := agent(from.AgentID)
			if a == nil {
				return "", errors.New("complete_commissioning: no such agent " + from.AgentID)
			}
			if err := a.CompleteCommissioning(ctx, existence.CommissionReport{Name: args.Name, Personality: args.Personality, Human: args.Human}); err != nil {
				return "", err
			}
			return "commissioned: you are " + a.Name() + " from now on; your instructions are archived", nil
		})
}
