package prompt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

var t0 = time.Date(2026, 4, 13, 9, 0, 0, 0, time.UTC)

func memoriesAssembler(t *testing.T) *prompt.Assembler {
	t.Helper()
	asm := prompt.New(prompt.Config{World: "A workspace."})
	require.NoError(t, asm.InsertAfter(prompt.SectionLastOutcome, prompt.Memories()))
	return asm
}

func TestMemoriesSectionAbsentWithoutMemories(t *testing.T) {
	id := identity.New("scout", "Cedar", t0)
	v := &prompt.View{Now: t0, Identity: &id}
	plain, err := prompt.New(prompt.Config{World: "A workspace."}).Assemble(v)
	require.NoError(t, err)
	with, err := memoriesAssembler(t).Assemble(v)
	require.NoError(t, err)
	assert.Equal(t, plain.Text, with.Text, "no memories: the prompt is byte for byte the one without the section")
	v.Memories = []prompt.Memory{{Text: "  \n "}}
	with, err = memoriesAssembler(t).Assemble(v)
	require.NoError(t, err)
	assert.Equal(t, plain.Text, with.Text, "blank memories are no memories")
}

func TestMemoriesSection(t *testing.T) {
	id := identity.New("scout", "Cedar", t0)
	long := strings.Repeat("é", 200)
	v := &prompt.View{Now: t0, Identity: &id, Memories: []prompt.Memory{
		{Text: "FAILED: the deploy broke\non a missing env var", Kind: "failure", Score: 2.5},
		{Text: long, Kind: "outcome", Score: 1.2},
	}}
	asm := memoriesAssembler(t)
	p, ok, err := asm.AssembleBuiltin(v)
	require.NoError(t, err)
	require.True(t, ok, "the memories section is built in: assembled under the agent's lock")
	sec, found := p.Section(prompt.SectionMemories)
	require.True(t, found)
	assert.Equal(t, prompt.MemoriesHeader+"\n- FAILED: the deploy broke on a missing env var\n- "+strings.Repeat("é", prompt.MemoryChars), sec.Text,
		"the original's block: one line per memory, cut to 150 characters")
	names := p.Names()
	i := indexOf(names, prompt.SectionMemories)
	assert.Equal(t, prompt.SectionLastOutcome, nameBefore(asm.Names(), prompt.SectionMemories))
	assert.Positive(t, i)
	assert.Equal(t, sec.Text, prompt.MemoryBlock([]string{v.Memories[0].Text, v.Memories[1].Text}))
}

func TestMemoriesSectionShrinksVisibly(t *testing.T) {
	id := identity.New("scout", "Cedar", t0)
	v := &prompt.View{Now: t0, Identity: &id}
	for i := range 10 {
		v.Memories = append(v.Memories, prompt.Memory{Text: strings.Repeat("memory ", 20) + string(rune('a'+i))})
	}
	asm := memoriesAssembler(t)
	full, err := asm.Assemble(v)
	require.NoError(t, err)
	asm.SetBudget(prompt.Budget{MaxChars: full.Chars - 500})
	p, err := asm.Assemble(v)
	require.NoError(t, err)
	require.NotEmpty(t, p.Cuts)
	assert.Equal(t, prompt.SectionMemories, p.Cuts[0].Section, "memories shrink early")
	sec, _ := p.Section(prompt.SectionMemories)
	assert.True(t, sec.Cut)
	assert.Contains(t, sec.Text, prompt.CutMarker, "cut visibly")
	assert.Contains(t, sec.Text, "memory a", "the best memory stays")
	assert.NotContains(t, sec.Text, "memory j")
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

func nameBefore(names []string, name string) string {
	if i := indexOf(names, name); i > 0 {
		return names[i-1]
	}
	return ""
}
