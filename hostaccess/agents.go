package hostaccess

import (
	"context"
	"fmt"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
)

// Agents is what a server (the monitor, the MCP and A2A servers) needs of
// the agents of this process it serves: *runner.Runner satisfies it,
// and [Single] adapts one agent. Implementations are safe for concurrent
// use.
type Agents interface {
	// Agents returns every agent, in a stable order.
	Agents() []*existence.Agent
	// Agent returns the agent with the given id, or nil.
	Agent(id string) *existence.Agent
	// SayAsHost delivers a host message to the given agents, or to all when
	// none is given (see runner.Runner.SayAsHost).
	SayAsHost(ctx context.Context, text string, to ...string) error
}

var _ Agents = (*runner.Runner)(nil)

// Single adapts one agent to [Agents], for an application that embeds a
// single agent. Its SayAsHost returns an error naming an id other than
// the agent's, and delivers nothing then.
func Single(a *existence.Agent) Agents { return single{a} }

type single struct{ a *existence.Agent }

func (s single) Agents() []*existence.Agent { return []*existence.Agent{s.a} }

func (s single) Agent(id string) *existence.Agent {
	if id == s.a.ID() {
		return s.a
	}
	return nil
}

func (s single) SayAsHost(ctx context.Context, text string, to ...string) error {
	for _, id := range to {
		if id != s.a.ID() {
			return fmt.Errorf("no agent %q", id)
		}
	}
	return s.a.SayAsHost(ctx, text)
}
