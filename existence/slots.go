package existence

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/slot"
)

// PostSlot puts s on the agent's own board (GLaDOS's slots: what a
// mind, an application or a person reports to the agent) and saves the
// state. s is cleaned first (slot.Slot.Clean: control characters removed,
// texts cut to their caps, a blank title set to the id), a zero UpdatedAt
// is stamped with the agent's clock, and then s is checked
// (slot.Slot.Validate). It replaces the slot with its id, or is added;
// beyond Config.Memory.MaxSlots the least important slot is dropped, with an
// [event.SlotDropped]. An [event.Slot] reports the post.
//
// The agent's next existence cycle lists the slot in its prompt where the
// assembler places prompt.SlotsSection. With NotifyUser, PostSlot asks
// for that cycle at once instead of at the next heartbeat (GLaDOS's
// event trigger): through the runner's scheduler, so that a burst of
// notifying slots makes one cycle (coalescing), an autonomy cycle waits
// for the runner's Cooldown, and the priority lane still goes first. A
// goal being pursued is not interrupted (only a person's message does
// that): the cycle runs as soon as its executor returns. Triggered cycles
// keep runner.Config.TriggerGap (a quarter of the heartbeat) after the
// agent's last cycle, so that a burst of notifying slots costs at most two
// cycles, and a flood at most one per gap. An agent driven by
// [Agent.Tick] alone sees the slot at its next tick.
//
// Errors: an error matching slot.ErrInvalid (nothing changed); the save
// error, reported as an [event.Error] too (the slot stays on the board in
// memory and is saved with the next save).
func (a *Agent) PostSlot(ctx context.Context, s slot.Slot) error {
	s = s.Clean()
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = a.cfg.Timing.Clock.Now()
	}
	if err := s.Validate(); err != nil {
		return err
	}
	a.mu.Lock()
	var dropped []slot.Slot
	a.state.Slots, dropped = slot.Put(a.state.Slots, s, a.cfg.Memory.MaxSlots)
	kept := true
	for _, d := range dropped {
		if d.ID == s.ID {
			kept = false
		}
		a.queue(event.Event{Kind: event.SlotDropped, Reason: "board_full", Slot: &d, Text: fmt.Sprintf("the board holds at most %d slots; this was the least important", a.cfg.Memory.MaxSlots)})
	}
	notify := kept && s.NotifyUser
	if kept {
		a.queue(event.Event{Kind: event.Slot, Slot: &s, Text: s.Summary})
	}
	if notify && a.pursuingLocked() {
		// No cycle while the goal is pursued: one as soon as it returns.
		a.notifyAfter, notify = true, false
	}
	err := a.saveLocked(ctx)
	a.unlock()
	if notify {
		a.triggerCycle()
	}
	return err
}

// RemoveSlot removes the slot with id from the agent's own board, saves
// the state and reports whether there was one, with an
// [event.SlotDropped] (Reason "removed"). Errors: the save error.
func (a *Agent) RemoveSlot(ctx context.Context, id string) (bool, error) {
	a.mu.Lock()
	old, _ := slot.Find(a.state.Slots, id)
	var removed bool
	a.state.Slots, removed = slot.Remove(a.state.Slots, id)
	if !removed {
		a.mu.Unlock()
		return false, nil
	}
	a.queue(event.Event{Kind: event.SlotDropped, Reason: "removed", Slot: &old, Text: "removed"})
	err := a.saveLocked(ctx)
	a.unlock()
	return true, err
}

// Slots returns a copy of the agent's own board, most important first
// (slot.Sorted). The shared board's slots are not included (see
// [Config].Memory.SharedSlots).
func (a *Agent) Slots() []slot.Slot {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slot.Sorted(a.state.Slots)
}

// notifyCycle asks for a cycle now for a notifying slot of the shared
// board: as [Agent.PostSlot] does for the agent's own.
func (a *Agent) notifyCycle() {
	a.mu.Lock()
	pursuing := a.pursuingLocked()
	if pursuing {
		a.notifyAfter = true // no cycle while the goal is pursued: one as soon as it returns
	}
	a.mu.Unlock()
	if !pursuing {
		a.triggerCycle()
	}
}

// pursuingLocked reports whether a goal's executor is still running (it
// has not returned). a.mu must be held.
func (a *Agent) pursuingLocked() bool {
	r := a.running.Load()
	if r == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// triggerCycle asks the runner's scheduler for a cycle now (see
// schedCore.trigger); without a runner it does nothing.
func (a *Agent) triggerCycle() {
	if f := a.triggerHook.Load(); f != nil {
		(*f)()
	}
}

// goalReturned runs when a goal's executor has returned: a notifying slot
// that arrived during the goal asks for the cycle it could not have.
func (a *Agent) goalReturned() {
	a.mu.Lock()
	notify := a.notifyAfter
	a.notifyAfter = false
	a.mu.Unlock()
	if notify {
		a.triggerCycle()
	}
}

// trimSlots brings a loaded board within max (the least important
// dropped) and returns what it cut, "" when nothing.
func trimSlots(st *identity.AgentState, max int) string {
	if len(st.Slots) <= max {
		return ""
	}
	// Putting the last slot back drops down to max (slot.Put).
	n := len(st.Slots)
	var d []slot.Slot
	st.Slots, d = slot.Put(st.Slots[:n-1], st.Slots[n-1], max)
	dropped := make([]string, len(d))
	for i, x := range d {
		dropped[i] = x.ID
	}
	return fmt.Sprintf("slots: dropped %d over the cap of %d, the least important: %s", len(dropped), max, strings.Join(dropped, ", "))
}

// refreshShared reads the shared board (cached, see
// identity.SharedBoard.Cached) for the next prompt. A read error is
// reported (when report) once per distinct error as an [event.Error], and
// the slots last read are shown meanwhile.
func (a *Agent) refreshShared(ctx context.Context, report bool) {
	b := a.cfg.Memory.SharedSlots
	if b == nil {
		return
	}
	slots, err := b.Cached(ctx)
	a.mu.Lock()
	a.shared = slots
	report = report && err != nil && err.Error() != a.sharedErr
	if err != nil {
		a.sharedErr = err.Error()
	} else {
		a.sharedErr = ""
	}
	a.mu.Unlock()
	if report && ctx.Err() == nil {
		a.emit(event.Event{Kind: event.Error, Text: "reading the shared board " + b.Name() + " failed; its last slots are shown", Err: err})
	}
}

// slotsLocked returns the slots the prompt shows: the agent's own board
// and the shared board's, the agent's first. a.mu must be held; the
// result may share the state's backing array (copy it for a copied view).
func (a *Agent) slotsLocked() []slot.Slot {
	if len(a.shared) == 0 {
		return a.state.Slots
	}
	return append(slices.Clip(a.state.Slots), a.shared...)
}
