package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/existencetest"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/mcpserver"
	"github.com/existence-loop/sdk/store/memstore"
)

// TestSlotTools: post_slot on an agent's board and on the shared board,
// checked as strictly as the monitor's API; list_slots reads them back.
func TestSlotTools(t *testing.T) {
	ctx := context.Background()
	rn, err := runner.New(runner.Config{Store: memstore.New(), Clock: existencetest.NewClock(t0), Logger: quiet,
		SharedSlots: identity.NewSharedBoard(identity.NewMemoryDocument("slots"), identity.BoardOptions{})})
	require.NoError(t, err)
	defer rn.Close()
	_, err = rn.Add(ctx, existence.Config{ID: "scout", Name: "Cedar", Model: goalModel()})
	require.NoError(t, err)
	s, err := mcpserver.New(mcpserver.Config{Agents: rn, Logger: quiet})
	require.NoError(t, err)
	cs := client(t, s)

	out := call(t, cs, "post_slot", map[string]any{"agent_id": "scout", "slot_id": "weather", "title": "Weather", "status": "completed",
		"summary": "storm at 15:00", "importance": 0.8, "next_run": 600}, false)
	assert.Equal(t, "posted slot weather on scout's board", out)
	out = call(t, cs, "post_slot", map[string]any{"slot_id": "news", "status": "pending", "notify_user": true}, false)
	assert.Equal(t, "posted slot news on the shared board", out)

	own := decode[[]existence.SlotStatus](t, call(t, cs, "list_slots", map[string]any{"agent_id": "scout"}, false))
	require.Len(t, own, 1)
	assert.Equal(t, "storm at 15:00", own[0].Summary)
	shared := decode[[]existence.SlotStatus](t, call(t, cs, "list_slots", map[string]any{}, false))
	require.Len(t, shared, 1)
	assert.Equal(t, "news", shared[0].Title)
	assert.True(t, shared[0].NotifyUser)

	for _, bad := range []map[string]any{
		{"slot_id": "x", "status": "idle", "summary": "ok\x1b[2J"},
		{"slot_id": "x", "status": "idle", "importance": 3},
		{"slot_id": "a b", "status": "idle"},
		{"slot_id": "x", "status": ""},
	} {
		out := call(t, cs, "post_slot", bad, true)
		assert.Contains(t, out, "invalid arguments", "%v", bad)
		assert.Contains(t, out, "slot: invalid slot")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "post_slot", Arguments: json.RawMessage(`{"slot_id":"x","status":"idle","summary":"a","summary":"b"}`)})
	require.NoError(t, err)
	require.True(t, res.IsError, "a key named twice")
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "duplicate key")
	out = call(t, cs, "post_slot", map[string]any{"slot_id": "x"}, true)
	assert.Contains(t, out, `missing properties: ["status"]`, "the schema says what is required")
	out = call(t, cs, "post_slot", map[string]any{"agent_id": "nobody", "slot_id": "x", "status": "idle"}, true)
	assert.Contains(t, out, "no such agent")

	single, err := mcpserver.New(mcpserver.Config{Agents: mcpserver.SingleAgent(rn.Agent("scout")), Logger: quiet})
	require.NoError(t, err)
	out = call(t, client(t, single), "post_slot", map[string]any{"slot_id": "x", "status": "idle"}, true)
	assert.Contains(t, out, "the agents share no board")
}
