package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/runner"
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
	// (runner.Runner.PostSharedSlot). Errors: [ErrUnsupported] when
	// there is no shared board; slot.ErrInvalid; the board's.
	PostSharedSlot(ctx context.Context, s slot.Slot) error
	// SharedSlots returns the shared board's slots. Errors:
	// [ErrUnsupported] when there is no shared board; the board's.
	SharedSlots(ctx context.Context) ([]slot.Slot, error)
}

// SlotRemover is implemented by a [SlotSource] that can also take slots
// off the boards: [RunnerSource] does. Without it, the DELETE slot
// endpoints answer 501.
type SlotRemover interface {
	// RemoveSlot removes slot slotID from agent id's own board
	// (existence.Agent.RemoveSlot) and reports whether it was there.
	// Errors: [ErrNoAgent]; [ErrUnsupported] when the source cannot reach
	// the agent; the error saving the agent.
	RemoveSlot(ctx context.Context, id, slotID string) (bool, error)
	// RemoveSharedSlot removes slot slotID from the shared board
	// (runner.Runner.RemoveSharedSlot) and reports whether it was
	// there. Errors: [ErrUnsupported] when there is no shared board; the
	// board's.
	RemoveSharedSlot(ctx context.Context, slotID string) (bool, error)
}

// SlotRemoved is the body of a 200 answer to DELETE
// /api/agents/{id}/slots/{slot_id} and DELETE /api/slots/{slot_id}.
type SlotRemoved struct {
	// Status is "removed".
	Status string `json:"status"`
	// Agent is the agent's id; empty for the shared board.
	Agent string `json:"agent,omitempty"`
	// SlotID is the slot removed.
	SlotID string `json:"slot_id"`
}

// slotRemover returns the source's SlotRemover, or answers 501.
func (m *Monitor) slotRemover(w http.ResponseWriter) (SlotRemover, bool) {
	sr, ok := m.src.(SlotRemover)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this monitor's agents cannot have slots removed")
	}
	return sr, ok
}

// handleRemoveSlot serves DELETE /api/agents/{id}/slots/{slot}: 200 with
// a [SlotRemoved], 404 when the agent has no such slot.
func (m *Monitor) handleRemoveSlot(w http.ResponseWriter, r *http.Request) {
	sr, ok := m.slotRemover(w)
	if !ok {
		return
	}
	id, slotID := r.PathValue("id"), r.PathValue("slot")
	removed, err := sr.RemoveSlot(r.Context(), id, slotID)
	if err != nil {
		m.slotError(w, r, "removing the slot failed", err)
		return
	}
	if !removed {
		writeError(w, http.StatusNotFound, fmt.Sprintf("agent %s has no slot %s", quote(id), quote(slotID)))
		return
	}
	writeJSON(w, http.StatusOK, SlotRemoved{Status: "removed", Agent: id, SlotID: slotID})
}

// handleRemoveSharedSlot serves DELETE /api/slots/{slot}: 200 with a
// [SlotRemoved], 404 when the shared board has no such slot.
func (m *Monitor) handleRemoveSharedSlot(w http.ResponseWriter, r *http.Request) {
	sr, ok := m.slotRemover(w)
	if !ok {
		return
	}
	slotID := r.PathValue("slot")
	removed, err := sr.RemoveSharedSlot(r.Context(), slotID)
	if err != nil {
		m.slotError(w, r, "removing the shared slot failed", err)
		return
	}
	if !removed {
		writeError(w, http.StatusNotFound, fmt.Sprintf("the shared board has no slot %s", quote(slotID)))
		return
	}
	writeJSON(w, http.StatusOK, SlotRemoved{Status: "removed", SlotID: slotID})
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
// *runner.Runner has it.
type sharedRunner interface {
	PostSharedSlot(ctx context.Context, s slot.Slot) error
	RemoveSharedSlot(ctx context.Context, id string) (bool, error)
	SharedSlots() *identity.SharedBoard
}

var _ sharedRunner = (*runner.Runner)(nil)

// errNoSharedBoard is the [ErrUnsupported] error of a source whose agents
// share no board.
var errNoSharedBoard = fmt.Errorf("%w: the agents share no board of slots (runner.Config.SharedSlots)", ErrUnsupported)

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

func (s runnerSource) RemoveSlot(ctx context.Context, id, slotID string) (bool, error) {
	a := s.r.Agent(id)
	if a == nil {
		return false, NoAgentError(id)
	}
	return a.RemoveSlot(ctx, slotID)
}

func (s runnerSource) RemoveSharedSlot(ctx context.Context, slotID string) (bool, error) {
	sr, ok := s.r.(sharedRunner)
	if !ok || sr.SharedSlots() == nil {
		return false, errNoSharedBoard
	}
	return sr.RemoveSharedSlot(ctx, slotID)
}

var (
	_ SlotSource  = runnerSource{}
	_ SlotRemover = runnerSource{}
)
