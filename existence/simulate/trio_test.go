package simulate_test

import (
	"testing"

	"github.com/existence-loop/sdk/existence/simulate"
	"github.com/existence-loop/sdk/existence/trio"
	"github.com/stretchr/testify/assert"
)

// TestTrioIsRoster pins that the simulator's trio is the one roster of
// package trio (ids, names, roles, traits, domains), and that Agents
// repeats its roles beyond the third agent.
func TestTrioIsRoster(t *testing.T) {
	roster := trio.Members()
	agents := simulate.Agents(5)
	for i, m := range roster {
		assert.Equal(t, simulate.AgentSpec{ID: m.ID, Name: m.Name, Role: m.Role, Traits: m.Traits, Domains: m.Domains}, agents[i])
	}
	assert.Equal(t, simulate.Trio(), agents[:3])
	assert.Equal(t, "agent-0004", agents[3].ID)
	assert.Equal(t, trio.Scout, agents[3].Role)
	assert.Equal(t, roster[1].Traits, agents[4].Traits)
}
