package existence

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// DefaultWorkingMemoryBytes is the default cap of a working memory, in
// bytes of compact JSON: agent_ecology's max_size_bytes default (Plan
// #59).
const DefaultWorkingMemoryBytes = 2000

// WorkingMemory configures an agent's working memory (agent_ecology's
// Plan #59): a JSON object the agent writes for itself — its current
// goal, progress, next steps, lessons — kept in its state
// ([identity.AgentState].WorkingMemory), shown in its own prompt section
// ([prompt.WorkingMemorySection]) and replaced by a reply that carries a
// "working_memory" object. It is apart from the identity: the
// original's identity fields and their caps are unchanged.
type WorkingMemory struct {
	// Enabled turns it on; off by default, and then a reply's
	// working_memory is ignored and the prompt is unchanged.
	Enabled bool
	// MaxBytes caps the memory, in bytes of compact JSON; 0 means
	// [DefaultWorkingMemoryBytes]. A larger one is refused whole (the
	// previous one is kept), with an [event.WorkingMemory] and a note the
	// agent reads in its next cycle.
	MaxBytes int
}

// applyWorkingMemory applies a reply's working memory to st under the
// cap: stored compact, or refused with a note for the next cycle. A
// cycle whose reply the model produced has shown the last note, so the
// note is cleared first.
func applyWorkingMemory(st *identity.AgentState, r *prompt.Response, max int) []event.Event {
	st.WorkingMemoryNote = ""
	if r == nil || len(r.WorkingMemory) == 0 {
		return nil
	}
	raw := bytes.TrimSpace(r.WorkingMemory)
	if len(raw) == 0 || raw[0] != '{' {
		st.WorkingMemoryNote = "working_memory must be a JSON object ({…}); it was not, so the previous one is kept"
		return []event.Event{{Kind: event.WorkingMemory, Reason: "not_object", Text: st.WorkingMemoryNote}}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		st.WorkingMemoryNote = "working_memory is not valid JSON; the previous one is kept"
		return []event.Event{{Kind: event.WorkingMemory, Reason: "not_object", Text: st.WorkingMemoryNote}}
	}
	if buf.Len() > max {
		st.WorkingMemoryNote = fmt.Sprintf("it was %d bytes, over your cap of %d bytes; the previous one is kept. Write a shorter one.", buf.Len(), max)
		return []event.Event{{Kind: event.WorkingMemory, Reason: "too_large", Text: st.WorkingMemoryNote}}
	}
	st.WorkingMemory = bytes.Clone(buf.Bytes())
	return []event.Event{{Kind: event.WorkingMemory, Reason: "stored", Text: buf.String()}}
}

// ensureSection adds s to asm next to the section named at (before it,
// or after it when after is set), unless asm already has a section of
// s's name; when asm has no section at, s goes first.
func ensureSection(asm *prompt.Assembler, s prompt.Section, at string, after bool) error {
	if _, ok := asm.Section(s.Name()); ok {
		return nil
	}
	if _, ok := asm.Section(at); !ok {
		names := asm.Names()
		if len(names) == 0 {
			return fmt.Errorf("the prompt has no section to place %s by", s.Name())
		}
		return asm.InsertBefore(names[0], s)
	}
	if after {
		return asm.InsertAfter(at, s)
	}
	return asm.InsertBefore(at, s)
}
