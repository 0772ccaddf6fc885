package existence

import (
	"bytes"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// StatusOf returns the part of a [Status] that a stored state holds: ID
// and Name (the identity's AgentID and Name), Goal, GoalStarted, GoalTask
// and GoalFallback (the active goal, the last entry of the goal history
// while it is active), LastOutcome ("{STATUS}: {outcome}" of the newest
// ended goal), Load (0–1, as of the state's last escalation) and Level
// (spec §4), Stressors (most severe first), Worldview, WorkingMemory,
// Commissioned, and Inbox and
// HostMessages (unread peer and host messages), and Slots (the agent's
// own board, most important first, stale as of the wall clock). The
// fields only a running
// agent knows (Cycles, LastCycleAt, LastCycle, the fallback counters,
// Lease and Stopped) are left zero. Stressors is never nil. A nil st gives
// the zero Status.
//
// [Agent.Status] builds on it; a program that watches agents running in
// other processes calls it on each state it loads from their store.
func StatusOf(st *identity.AgentState) Status { return statusOf(st, time.Now()) }

// statusOf is [StatusOf] with stale slots as of now.
func statusOf(st *identity.AgentState, now time.Time) Status {
	if st == nil {
		return Status{Stressors: []StressorStatus{}}
	}
	s := Status{
		ID:        st.Identity.AgentID,
		Name:      st.Identity.Name,
		Load:      st.Suffering.Load(),
		Worldview: st.Identity.Worldview,

		WorkingMemory: bytes.Clone(st.WorkingMemory),
		Commissioned:  st.Commissioned,
		Inbox:         len(st.Inbox),
		HostMessages:  len(st.Host),
		Stressors:     []StressorStatus{},
	}
	s.Level = suffering.LevelOf(s.Load).String()
	for _, x := range st.Suffering.BySeverity() {
		s.Stressors = append(s.Stressors, StressorStatus{Type: x.Type, Description: x.Description, Severity: x.Severity, Onset: x.Onset})
	}
	if g := st.Identity.ActiveGoal(); g != nil {
		s.Goal, s.GoalStarted, s.GoalTask, s.GoalFallback = g.Objective, g.Started, g.TaskID, g.Fallback
	}
	if g := st.Identity.LastEnded(); g != nil {
		s.LastOutcome = string(g.Status) + ": " + g.Outcome
	}
	s.Slots = SlotStatuses(st.Slots, now)
	return s
}
