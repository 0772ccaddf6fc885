package event

import (
	"fmt"

	"github.com/existence-loop/sdk/memory"
)

// describeMemory is the thoughts-log text of a memory event.
func (e Event) describeMemory() (string, bool) {
	m := e.Memory
	if m == nil {
		return "", false
	}
	var s string
	switch m.Kind {
	case memory.EventStored:
		s = "remembered: " + m.Text
		if m.Cause == "duplicate" {
			s = "remembered again: " + m.Text
		}
	case memory.EventPending:
		s = fmt.Sprintf("remembered as text, to embed later (%s): %s", m.Cause, m.Text)
	case memory.EventEmbedded:
		s = fmt.Sprintf("embedded %d pending memories with %s", m.Count, m.Space)
	case memory.EventBackfillFailed:
		s = fmt.Sprintf("embedding pending memories failed (%s); again in %v", m.Cause, m.Retry)
	case memory.EventMerged:
		s = fmt.Sprintf("superseded a near-duplicate (%s): %s", m.Cause, m.Text)
	case memory.EventSuperseded:
		s = fmt.Sprintf("superseded %d older values (%s) by: %s", m.Count, m.Cause, m.Text)
	case memory.EventEvicted:
		s = fmt.Sprintf("evicted %d memories over the cap", m.Count)
	case memory.EventRecalled:
		s = fmt.Sprintf("recalled %d memories for: %s", m.Count, m.Text)
	case memory.EventRecallFallback:
		s = fmt.Sprintf("recalled without the query's vector (%s): %s", m.Cause, m.Text)
	case memory.EventForgotten:
		s = fmt.Sprintf("forgot %d memories", m.Count)
	case memory.EventReembedded:
		s = fmt.Sprintf("moved %d memories to %s", m.Count, m.Space)
	default:
		return "", false
	}
	if m.Error != "" && m.Kind != memory.EventPending {
		s += ": " + m.Error
	}
	return s, true
}
