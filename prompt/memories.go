package prompt

import "strings"

// SectionMemories is the name of the memories section ([Memories]). It is
// not one of the 18 default sections of spec §2: an application adds it,
// for example after [SectionLastOutcome]:
//
//	err := asm.InsertAfter(prompt.SectionLastOutcome, prompt.Memories())
const SectionMemories = "memories"

// MemoriesHeader is the first line of a block of recalled memories,
// verbatim from the original's autonomy loop, which put the block after
// a goal's objective before planning it.
const MemoriesHeader = "Relevant past experience (use this to avoid repeating mistakes and build on prior work):"

// MemoryChars caps each recalled memory's line, in characters (code
// points), as the original's "- {text[:150]}".
const MemoryChars = 150

// prioMemories is the memories section's trim priority: it shrinks after
// the discoveries and before the history (see [Budget]).
const prioMemories = 15

// Memory is one recalled long-term memory, as the memories section shows
// it (package memory recalls them; the existence loop fills
// [View].Memories).
type Memory struct {
	// Text is the memory's text; the section shows it on one line, cut
	// to [MemoryChars] characters.
	Text string
	// Kind is where it came from ("outcome", "failure", ...); not shown.
	Kind string
	// Score is the recall's score, the ranking; not shown.
	Score float64
}

// WriteMemories appends the block of recalled memories to b: [MemoriesHeader],
// then one "- " line per memory with text, flattened to one line and cut
// to [MemoryChars] characters, in the order given (best first). Blank
// texts are skipped; with none left nothing is written.
func WriteMemories(b *strings.Builder, texts []string) {
	n := 0
	for _, t := range texts {
		if isBlank(t) {
			continue
		}
		if n == 0 {
			b.WriteString(MemoriesHeader)
		}
		b.WriteString("\n- ")
		writeFlat(b, t, MemoryChars)
		n++
	}
}

// MemoryBlock returns the block [WriteMemories] writes, "" for no
// memories. existence/toolloop appends it to a goal before its first
// model turn.
func MemoryBlock(texts []string) string {
	var b strings.Builder
	WriteMemories(&b, texts)
	return b.String()
}

func memoryTexts(e *env) []string {
	out := make([]string, 0, len(e.v.Memories))
	for _, m := range e.v.Memories {
		if !isBlank(m.Text) {
			out = append(out, m.Text)
		}
	}
	return out
}

func memoryLines(e *env) []string {
	texts := memoryTexts(e)
	out := make([]string, len(texts))
	for i, t := range texts {
		var b strings.Builder
		b.WriteString("- ")
		writeFlat(&b, t, MemoryChars)
		out[i] = b.String()
	}
	return out
}

// Memories returns the memories section ([SectionMemories]): absent when
// [View].Memories holds no memory with text, else [MemoriesHeader] and one
// "- " line per memory, best first, each cut to [MemoryChars] characters.
// Under a [Budget] it shrinks early (after the discoveries, before the
// history), keeping the best memories and marking the cut with
// [CutMarker]. It is a built-in section: an assembler that has it still
// assembles under the agent's lock ([Assembler.AssembleBuiltin]), and a
// prompt without memories is byte for byte the prompt without the
// section.
func Memories() Section {
	return &stdSection{name: SectionMemories, priority: prioMemories,
		present: func(e *env) bool { return len(memoryTexts(e)) > 0 },
		write:   func(b *strings.Builder, e *env) { WriteMemories(b, memoryTexts(e)) },
		trim: func(e *env, maxChars int) string {
			return trimLines(MemoriesHeader, memoryLines(e), false, "", maxChars)
		},
	}
}
