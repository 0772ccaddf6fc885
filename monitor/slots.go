package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// SlotSource is implemented by a [Source] that can post slots (slot.Slot,
// GLaDOS) for the agents: [RunnerSource] does for the agents of this
// process. Without it, the slot endpoints answer 501.
type SlotSource interface {
	// PostSlot puts s on agent id's own board (existence.Agent.PostSlot:
	// with NotifyUser, the agent runs a cycle at once). Errors:
	// [ErrNoAgent]; slot.ErrInvalid; [ErrUnsupported] when the source
	// cannot reach the agent; the error saving it.
	PostSlot(ctx context.Context, id string, s slot.Slot) error
	// PostSharedSlot puts s on the board the agents share
	// (existence.Runner.PostSharedSlot). Errors: [ErrUnsupported] when
	// there is no shared board; slot.ErrInvalid; the board's.
	PostSharedSlot(ctx context.Context, s slot.Slot) error
	// SharedSlots returns the shared board's slots. Errors:
	// [ErrUnsupported] when there is no shared board; the board's.
	SharedSlots(ctx context.Context) ([]slot.Slot, error)
}

// SlotRequest is the body of POST /api/agents/{id}/slots and POST
// /api/slots: one slot with GLaDOS's field names. slot_id and status are
// required; importance and confidence are 0–1, next_run in seconds; text
// with control or bidirectional-control characters, or over its cap
// (title 80, summary 500 characters), is refused (slot.Slot.Validate).
type SlotRequest struct {
	ID         string  `json:"slot_id"`
	Title      string  `json:"title,omitempty"`
	Status     string  `json:"status"`
	Summary    string  `json:"summary,omitempty"`
	Importance float64 `json:"importance,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	NextRun    float64 `json:"next_run,omitempty"`
	NotifyUser bool    `json:"notify_user,omitempty"`
}

// SlotReply is the body of a 202 answer to a slot post.
type SlotReply struct {
	// Status is "posted".
	Status string `json:"status"`
	// Agent is the agent's id; empty for the shared board.
	Agent string `json:"agent,omitempty"`
	// Slot is the slot as posted: cleaned, its title set, stamped with
	// the monitor's clock.
	Slot slot.Slot `json:"slot"`
}

// slotOf checks a request's slot strictly and returns it ready to post.
func (m *Monitor) slotOf(w http.ResponseWriter, r *http.Request) (slot.Slot, bool) {
	var req SlotRequest
	if !m.decode(w, r, &req) {
		return slot.Slot{}, false
	}
	s := slot.Slot{ID: req.ID, Title: req.Title, Status: slot.Status(req.Status), Summary: req.Summary,
		Importance: req.Importance, Confidence: req.Confidence, NextRun: req.NextRun, NotifyUser: req.NotifyUser}
	if err := s.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return slot.Slot{}, false
	}
	s = s.Clean()
	s.UpdatedAt = m.clock.Now().UTC()
	return s, true
}

// slotSource returns the source's SlotSource, or answers 501.
func (m *Monitor) slotSource(w http.ResponseWriter) (SlotSource, bool) {
	ss, ok := m.src.(SlotSource)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this monitor's agents take no slots")
	}
	return ss, ok
}

// handlePostSlot serves POST /api/agents/{id}/slots.
func (m *Monitor) handlePostSlot(w http.ResponseWriter, r *http.Request) {
	ss, ok := m.slotSource(w)
	if !ok {
		return
	}
	id := r.PathValue("id")
	s, ok := m.slotOf(w, r)
	if !ok {
		return
	}
	if err := ss.PostSlot(r.Context(), id, s); err != nil {
		m.slotError(w, r, "the slot was posted but could not be saved, so a restart may lose it", err)
		return
	}
	writeJSON(w, http.StatusAccepted, SlotReply{Status: "posted", Agent: id, Slot: s})
}

// handlePostSharedSlot serves POST /api/slots.
func (m *Monitor) handlePostSharedSlot(w http.ResponseWriter, r *http.Request) {
	ss, ok := m.slotSource(w)
	if !ok {
		return
	}
	s, ok := m.slotOf(w, r)
	if !ok {
		return
	}
	if err := ss.PostSharedSlot(r.Context(), s); err != nil {
		m.slotError(w, r, "posting to the shared board failed", err)
		return
	}
	writeJSON(w, http.StatusAccepted, SlotReply{Status: "posted", Slot: s})
}

// SharedSlotsPage is the body of GET /api/slots: the shared board, most
// important first, each marked when stale.
type SharedSlotsPage struct {
	Slots []existence.SlotStatus `json:"slots"`
}

// handleSharedSlots serves GET /api/slots.
func (m *Monitor) handleSharedSlots(w http.ResponseWriter, r *http.Request) {
	ss, ok := m.slotSource(w)
	if !ok {
		return
	}
	slots, err := ss.SharedSlots(r.Context())
	if err != nil {
		m.slotError(w, r, "reading the shared board failed", err)
		return
	}
	page := SharedSlotsPage{Slots: existence.SlotStatuses(slots, m.clock.Now())}
	if page.Slots == nil {
		page.Slots = []existence.SlotStatus{}
	}
	writeJSON(w, http.StatusOK, page)
}

// slotError writes a slot operation's error: 400 for an invalid slot, 404
// and 501 as [Monitor.sourceError], else 500 with msg.
func (m *Monitor) slotError(w http.ResponseWriter, r *http.Request, msg string, err error) {
	if errors.Is(err, slot.ErrInvalid) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	m.sourceError(w, r, msg, err)
}

// sharedRunner is what a Runner offers for the shared board:
// *existence.Runner has it.
type sharedRunner interface {
	PostSharedSlot(ctx context.Context, s slot.Slot) error
	SharedSlots() *identity.SharedBoard
}

var _ sharedRunner = (*existence.Runner)(nil)

// errNoSharedBoard is the [ErrUnsupported] error of a source whose agents
// share no board.
var errNoSharedBoard = fmt.Errorf("%w: the agents share no board of slots (existence.RunnerConfig.SharedSlots)", ErrUnsupported)

func (s runnerSource) PostSlot(ctx context.Context, id string, sl slot.Slot) error {
	a := s.r.Agent(id)
	if a == nil {
		return NoAgentError(id)
	}
	return a.PostSlot(ctx, sl)
}

func (s runnerSource) PostSharedSlot(ctx context.Context, sl slot.Slot) error {
	sr, ok := s.r.(sharedRunner)
	if !ok || sr.SharedSlots() == nil {
		return errNoSharedBoard
	}
	return sr.PostSharedSlot(ctx, sl)
}

func (s runnerSource) SharedSlots(ctx context.Context) ([]slot.Slot, error) {
	sr, ok := s.r.(sharedRunner)
	if !ok || sr.SharedSlots() == nil {
		return nil, errNoSharedBoard
	}
	return sr.SharedSlots().List(ctx)
}
