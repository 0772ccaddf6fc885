package existence

import (
	"fmt"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/suffering"
)

// crisisMessage returns the message an agent sends its peers when it enters
// crisis (spec §4), naming the active stressor types, as the
// original did:
//
//	I am in crisis (suffering 0.93/1.0). Active stressors: futility, invisibility. I am stepping back from goals until my load drops.
//
// Types are listed in order of onset, as the original listed them. The
// runner delivers it under the agent's name.
func crisisMessage(s *suffering.State) string {
	types := make([]string, len(s.Active))
	for i, st := range s.Active {
		types[i] = st.Type
	}
	return fmt.Sprintf("I am in crisis (suffering %.2f/1.0). Active stressors: %s. I am stepping back from goals until my load drops.",
		s.Load(), strings.Join(types, ", "))
}

// crisisLocked runs the crisis rules of one existence cycle (spec §4)
// on st and returns the message to send to the peers, or "":
//
//   - every cycle in crisis is reported as an [event.Crisis];
//   - the crisis message ("I am in crisis (suffering 0.93/1.0). Active stressors: ...") is sent once, on the cycle the agent enters
//     crisis (its crisis counter is 0), not again until it has left crisis
//     (the counter is reset by a cycle out of crisis, or by the force
//     reset), and never on the reset cycle itself;
//   - after 3 consecutive crisis cycles every stressor is force-reset
//     ([event.CrisisReset]).
//
// a.mu must be held.
func (a *Agent) crisisLocked(st *identity.AgentState, now time.Time) string {
	s := &st.Suffering
	load := s.Load()
	inCrisis := suffering.LevelOf(load) == suffering.LevelCrisis
	var msg string
	if inCrisis {
		if s.CrisisCycles == 0 {
			msg = crisisMessage(s)
		}
		a.queue(event.Event{Kind: event.Crisis, Load: load, Text: fmt.Sprintf("crisis: suffering load %.2f/1.0 (cycle %d in a row)", load, s.CrisisCycles+1)})
	}
	if reset := s.NoteCycle(now); len(reset) > 0 {
		a.queue(event.Event{Kind: event.CrisisReset, Text: fmt.Sprintf("force-reset %d stressors after %d consecutive crisis cycles", len(reset), suffering.CrisisResetCycles)})
		return ""
	}
	return msg
}
