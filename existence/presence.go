package existence

import (
	"time"

	"github.com/existence-loop/sdk/identity"
)

// notePresence records that a person was present at t (a host message or
// an assigned task arrived): the state's LastPresence becomes the later of
// the two. The prompt's situation section says "A person was recently
// present in this system." for 12 hours after it (prompt.PresenceLine,
// spec §2 "Presence"). A zero t is ignored.
func notePresence(st *identity.AgentState, t time.Time) {
	if t.After(st.LastPresence) {
		st.LastPresence = t
	}
}
