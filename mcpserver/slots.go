package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// sharedBoard is what [Agents] offers for the shared board:
// *runner.Runner has it.
type sharedBoard interface {
	PostSharedSlot(ctx context.Context, s slot.Slot) error
	SharedSlots() *identity.SharedBoard
}

var _ sharedBoard = (*runner.Runner)(nil)

// Tool arguments of the slot tools.
type (
	postSlotArgs struct {
		AgentID    string  `json:"agent_id,omitempty" jsonschema:"the agent whose board gets the slot; empty means the board every agent shares"`
		SlotID     string  `json:"slot_id" jsonschema:"the slot's id (no spaces, at most 128 characters); a slot with the same id is replaced"`
		Title      string  `json:"title,omitempty" jsonschema:"a short display name (at most 80 characters); default the slot_id"`
		Status     string  `json:"status" jsonschema:"pending, running, completed, failed, idle, or another lower-case word"`
		Summary    string  `json:"summary,omitempty" jsonschema:"what happened (at most 500 characters)"`
		Importance float64 `json:"importance,omitempty" jsonschema:"how much it matters, 0 to 1; the agents read the most important first"`
		Confidence float64 `json:"confidence,omitempty" jsonschema:"how sure the report is, 0 to 1"`
		NextRun    float64 `json:"next_run,omitempty" jsonschema:"in how many seconds the slot will be updated again, if known"`
		NotifyUser bool    `json:"notify_user,omitempty" jsonschema:"true to make the agents consider it at once instead of at their next heartbeat"`
	}
	listSlotsArgs struct {
		AgentID string `json:"agent_id,omitempty" jsonschema:"the agent whose board to read; empty means the shared board"`
	}
)

// addSlotTools adds post_slot and list_slots.
func (s *Server) addSlotTools() {
	addTool(s.mcp, &mcp.Tool{Name: "post_slot",
		Description: "Report something about the world to the agents as a slot (a background job's result): on one agent's board, or on the board every agent shares. " +
			"Agents list the slots in their prompt, most important first; with notify_user they consider it at once."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in postSlotArgs) (*mcp.CallToolResult, any, error) {
			sl := slot.Slot{ID: in.SlotID, Title: in.Title, Status: slot.Status(in.Status), Summary: in.Summary,
				Importance: in.Importance, Confidence: in.Confidence, NextRun: in.NextRun, NotifyUser: in.NotifyUser}
			if err := sl.Validate(); err != nil {
				return nil, nil, fmt.Errorf("post_slot: %w: %w", ErrInvalid, err)
			}
			sl = sl.Clean()
			sl.UpdatedAt = time.Now().UTC()
			if in.AgentID != "" {
				a, err := s.agent(in.AgentID)
				if err != nil {
					return nil, nil, err
				}
				if err := a.PostSlot(ctx, sl); err != nil {
					return nil, nil, err
				}
				return textResult(fmt.Sprintf("posted slot %s on %s's board", sl.ID, in.AgentID))
			}
			b, ok := s.cfg.Agents.(sharedBoard)
			if !ok || b.SharedSlots() == nil {
				return nil, nil, fmt.Errorf("post_slot: %w: the agents share no board; give an agent_id", ErrNotConfigured)
			}
			if err := b.PostSharedSlot(ctx, sl); err != nil {
				return nil, nil, err
			}
			return textResult("posted slot " + sl.ID + " on the shared board")
		})
	addTool(s.mcp, &mcp.Tool{Name: "list_slots", Annotations: readOnly,
		Description: "Read the slots of one agent's board, or of the board every agent shares, most important first, each marked when stale."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listSlotsArgs) (*mcp.CallToolResult, any, error) {
			now := time.Now()
			if in.AgentID != "" {
				a, err := s.agent(in.AgentID)
				if err != nil {
					return nil, nil, err
				}
				out := existence.SlotStatuses(a.State().Slots, now)
				if out == nil {
					out = []existence.SlotStatus{}
				}
				return jsonResult(out)
			}
			b, ok := s.cfg.Agents.(sharedBoard)
			if !ok || b.SharedSlots() == nil {
				return nil, nil, fmt.Errorf("list_slots: %w: the agents share no board; give an agent_id", ErrNotConfigured)
			}
			slots, err := b.SharedSlots().List(ctx)
			if err != nil {
				return nil, nil, err
			}
			out := existence.SlotStatuses(slots, now)
			if out == nil {
				out = []existence.SlotStatus{}
			}
			return jsonResult(out)
		})
}
