package prompt

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Names of the optional sections of this file.
const (
	// SectionWorkingMemory is the working memory section
	// ([WorkingMemorySection]).
	SectionWorkingMemory = "working_memory"
	// SectionCommissioning is the commissioning section
	// ([CommissioningSection]).
	SectionCommissioning = "commissioning"
)

// WorkingMemoryHeader opens the working memory section.
const WorkingMemoryHeader = "YOUR WORKING MEMORY (notes you keep for yourself across cycles: your current goal, progress, next steps, lessons):"

// WorkingMemorySection returns the working memory section
// ([SectionWorkingMemory]), agent_ecology's working memory (its Plan #59)
// injected into the prompt: absent when [View].WorkingMemoryMax is 0
// (the agent has none), else [WorkingMemoryHeader], the memory as
// indented JSON ("(empty)" when there is none), how to replace it (a
// "working_memory" object in the reply, at most WorkingMemoryMax bytes of
// compact JSON) and, when the last one was refused, why. The existence
// loop places it before the directive when its Config enables working
// memory; without that the prompt is unchanged.
func WorkingMemorySection() Section {
	return SectionFunc{
		ID:   SectionWorkingMemory,
		When: func(v *View) bool { return v.WorkingMemoryMax > 0 },
		Text: func(v *View) string {
			var b strings.Builder
			b.WriteString(WorkingMemoryHeader)
			b.WriteByte('\n')
			var ind bytes.Buffer
			if len(v.WorkingMemory) == 0 || json.Indent(&ind, v.WorkingMemory, "", "  ") != nil {
				b.WriteString("(empty)")
			} else {
				b.WriteString(Clean(ind.String()))
			}
			b.WriteString("\nTo replace it, add \"working_memory\": {…} (a JSON object of at most ")
			b.WriteString(strconv.Itoa(v.WorkingMemoryMax))
			b.WriteString(" bytes) to your JSON reply; leave it out to keep it as it is.")
			if v.WorkingMemoryNote != "" {
				b.WriteString("\nYOUR LAST WORKING MEMORY WAS REFUSED: ")
				b.WriteString(Clean(v.WorkingMemoryNote))
			}
			return b.String()
		},
	}
}

// CommissioningHeader opens the commissioning section.
const CommissioningHeader = "COMMISSIONING — DO THIS BEFORE ANYTHING ELSE. This is your first run: follow these instructions from your human, then call the tool complete_commissioning with the name you take, your personality and what you learned of your human."

// CommissioningSection returns the commissioning section
// ([SectionCommissioning]), GSV's commissioning ceremony: absent when
// [View].Commissioning is "", else [CommissioningHeader] and the
// instructions (the agent's BOOTSTRAP.md). The existence loop places it
// first, with top priority, while the agent is being commissioned.
func CommissioningSection() Section {
	return SectionFunc{
		ID:   SectionCommissioning,
		When: func(v *View) bool { return strings.TrimSpace(v.Commissioning) != "" },
		Text: func(v *View) string {
			return CommissioningHeader + "\n" + Clean(strings.TrimSpace(v.Commissioning))
		},
	}
}
