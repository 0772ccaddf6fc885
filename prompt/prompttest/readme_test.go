package prompttest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// Notes and TestToolNotes are the README's "Unit-test a custom prompt"
// example, kept here so that it compiles and passes.
var Notes = prompt.NewKey[string]("tool_notes")

func TestToolNotes(t *testing.T) {
	asm := prompt.Solo(prompt.Config{World: "You live inside a Go service. You have no tools yet."}) // as in "Embed one agent"
	err := asm.InsertAfter(prompt.SectionDiscoveries, prompt.SectionFunc{
		ID:   "tool_notes",
		When: func(v *prompt.View) bool { _, ok := Notes.Get(v); return ok },
		Text: func(v *prompt.View) string { n, _ := Notes.Get(v); return "TOOL NOTES:\n" + n },
	})
	require.NoError(t, err)

	st := prompttest.NewState("Cedar").Opinions(20).Stressor("repeated_failure", 0.6, "nothing works", "complete a goal").
		Discovery(`design/index.md: "# Index"`, "design/index.md") // Solo shows discoveries once there are some
	Notes.Set(st.Values(), "read_file is slow on large files")
	p := prompttest.Assemble(t, asm, st.View())

	prompttest.SectionOrder(t, p, prompt.SectionDiscoveries, "tool_notes", prompt.SectionTime)
	assert.Equal(t, 6, prompttest.ShownOpinions(t, p)) // 6 of 20 shown
	prompttest.Golden(t, "tool_notes", p.Text)         // testdata/tool_notes.golden
}
