package customprompt_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/examples/customprompt"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/prompt/prompttest"
)

// seedDoc is the working memory of agent_ecology, verbatim.
const seedDoc = `{
  "current_goal": "Build price oracle",
  "started": "2026-01-16T10:30:00Z",
  "progress": {
    "stage": "Implementation",
    "completed": ["interface design"],
    "next_steps": ["core logic", "tests"],
    "actions_in_stage": 3
  },
  "lessons": ["escrow needs ownership transfer first"],
  "strategic_objectives": ["become known for pricing"]
}`

func seedMemory(t *testing.T) customprompt.WorkingMemory {
	t.Helper()
	wm, err := customprompt.Parse([]byte(seedDoc))
	require.NoError(t, err)
	return wm
}

// assembler returns the trio's assembler with the working memory installed.
func assembler(t *testing.T, maxBytes int) *prompt.Assembler {
	t.Helper()
	a := prompt.New(prompttest.HollowConfig())
	require.NoError(t, customprompt.Install(a, maxBytes))
	return a
}

// withMemory returns Cedar's representative state carrying wm.
func withMemory(wm customprompt.WorkingMemory) *prompttest.State {
	st := prompttest.Cedar()
	customprompt.Key.Set(st.Values(), wm)
	return st
}

// TestGoldenPrompt pins the whole prompt with the working memory in place.
// After an intended change, run: go test ./examples/customprompt -update
func TestGoldenPrompt(t *testing.T) {
	p := prompttest.Assemble(t, assembler(t, customprompt.DefaultMaxSizeBytes), withMemory(seedMemory(t)).View())
	prompttest.Golden(t, "prompt", p.Text)
}

func TestSectionText(t *testing.T) {
	p := prompttest.Assemble(t, assembler(t, customprompt.DefaultMaxSizeBytes), withMemory(seedMemory(t)).View())
	assert.Equal(t, `WORKING MEMORY:
{
  "current_goal": "Build price oracle",
  "started": "2026-01-16T10:30:00Z",
  "progress": {
    "stage": "Implementation",
    "completed": [
      "interface design"
    ],
    "next_steps": [
      "core logic",
      "tests"
    ],
    "actions_in_stage": 3
  },
  "lessons": [
    "escrow needs ownership transfer first"
  ],
  "strategic_objectives": [
    "become known for pricing"
  ]
}`, prompttest.SectionWithHeader(t, p, customprompt.SectionName))
}

func TestPlacedAfterWorldview(t *testing.T) {
	p := prompttest.Assemble(t, assembler(t, 0), withMemory(seedMemory(t)).View())
	prompttest.SectionOrder(t, p, prompt.SectionWorldview, customprompt.SectionName, prompt.SectionOpinions)
	names := p.Names()
	for i, n := range names {
		if n == prompt.SectionWorldview {
			assert.Equal(t, customprompt.SectionName, names[i+1], "right after the worldview")
		}
	}
}

func TestAbsentWithoutMemory(t *testing.T) {
	a := assembler(t, 0)
	prompttest.SectionAbsent(t, prompttest.Assemble(t, a, prompttest.Cedar().View()), customprompt.SectionName)
	prompttest.SectionAbsent(t, prompttest.Assemble(t, a, withMemory(customprompt.WorkingMemory{}).View()), customprompt.SectionName)
}

func TestTruncatedToMaxSizeBytes(t *testing.T) {
	wm := seedMemory(t)
	// Multi-byte text so that a byte cut would split characters.
	for k := 0; k < 200; k++ {
		wm.Lessons = append(wm.Lessons, "日本語のレッスン — lesson")
	}
	for _, max := range []int{100, 101, 102, 500, 2000} {
		got := customprompt.Format(wm, max)
		header, body, _ := strings.Cut(got, "\n")
		assert.Equal(t, customprompt.Header, header)
		doc, ok := strings.CutSuffix(body, "\n"+customprompt.TruncationMarker)
		require.True(t, ok, "max %d: the marker ends a cut document", max)
		assert.LessOrEqual(t, len(doc), max, "max %d", max)
		assert.GreaterOrEqual(t, len(doc), max/2-1, "max %d: the cut keeps what fits", max)
		assert.True(t, utf8.ValidString(doc), "max %d: no split character", max)
	}
	// Through the assembler, with the default cap of 2000 bytes.
	p := prompttest.Assemble(t, assembler(t, 0), withMemory(wm).View())
	text := prompttest.SectionWithHeader(t, p, customprompt.SectionName)
	assert.True(t, strings.HasSuffix(text, customprompt.TruncationMarker))
	assert.LessOrEqual(t, len(text), len(customprompt.Header)+1+2000+1+len(customprompt.TruncationMarker))
}

func TestNotTruncatedWhenItFits(t *testing.T) {
	got := customprompt.Format(customprompt.WorkingMemory{CurrentGoal: "x"}, 0)
	assert.Equal(t, "WORKING MEMORY:\n{\n  \"current_goal\": \"x\"\n}", got)
	assert.NotContains(t, customprompt.Format(seedMemory(t), 2000), customprompt.TruncationMarker)
}

func TestShrinksUnderBudget(t *testing.T) {
	a := assembler(t, 0)
	v := withMemory(seedMemory(t)).View()
	full := prompttest.Assemble(t, a, v)
	// Over by more than the discoveries can give: the working memory is
	// next (priority 15), before the history (20).
	d, _ := full.Section(prompt.SectionDiscoveries)
	b := prompt.Budget{MaxChars: full.Chars - d.Chars - 100}
	a.SetBudget(b)
	p := prompttest.Assemble(t, a, v)
	prompttest.FitsBudget(t, p, b)
	prompttest.SectionCut(t, p, prompt.SectionDiscoveries)
	prompttest.SectionCut(t, p, customprompt.SectionName)
	prompttest.SectionIntact(t, p, prompt.SectionHistory)
	assert.True(t, strings.HasPrefix(prompttest.SectionWithHeader(t, p, customprompt.SectionName), "WORKING MEMORY:\n{"))
}

func TestParse(t *testing.T) {
	wm := seedMemory(t)
	assert.Equal(t, "Build price oracle", wm.CurrentGoal)
	assert.Equal(t, time.Date(2026, 1, 16, 10, 30, 0, 0, time.UTC), wm.Started)
	assert.Equal(t, 3, wm.Progress.ActionsInStage)
	assert.Equal(t, []string{"core logic", "tests"}, wm.Progress.NextSteps)

	for name, doc := range map[string]string{
		"not JSON":       "working memory",
		"truncated":      `{"current_goal": "x"`,
		"wrong type":     `{"lessons": "one lesson"}`,
		"trailing data":  `{"current_goal": "x"} {"current_goal": "y"}`,
		"bad time":       `{"started": "yesterday"}`,
		"array":          `[1, 2]`,
		"over 64 KiB":    `{"current_goal": "` + strings.Repeat("x", 70_000) + `"}`,
		"empty document": ``,
	} {
		_, err := customprompt.Parse([]byte(doc))
		assert.ErrorIs(t, err, customprompt.ErrInvalid, name)
	}
}

func TestInstallErrors(t *testing.T) {
	a := prompt.New(prompttest.HollowConfig())
	require.NoError(t, customprompt.Install(a, 0))
	assert.ErrorIs(t, customprompt.Install(a, 0), prompt.ErrDuplicateSection)

	b := prompt.New(prompttest.HollowConfig())
	require.NoError(t, b.Remove(prompt.SectionWorldview))
	assert.ErrorIs(t, customprompt.Install(b, 0), prompt.ErrUnknownSection)
}

// FuzzParse: any document either fails with ErrInvalid or renders within its
// cap as valid UTF-8 when the input was valid UTF-8.
func FuzzParse(f *testing.F) {
	f.Add([]byte(seedDoc), 120)
	f.Add([]byte(`{"lessons": ["日本語", "—"], "progress": {"actions_in_stage": -1}}`), 10)
	f.Add([]byte(`{"current_goal": "\u0000\ud800"}`), 0)
	f.Add([]byte(`{"started": "2026-13-40T99:00:00Z"}`), 2000)
	f.Add([]byte(`null`), 1)
	f.Add([]byte(seedDoc), 1)
	f.Fuzz(func(t *testing.T, doc []byte, max int) {
		wm, err := customprompt.Parse(doc)
		if err != nil {
			if !errors.Is(err, customprompt.ErrInvalid) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		out := customprompt.Format(wm, max)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
		if max <= 0 {
			max = customprompt.DefaultMaxSizeBytes
		}
		if strings.Contains(out, "\n\n") {
			t.Fatalf("a blank line in the section: %q", out)
		}
		_, body, _ := strings.Cut(out, "\n")
		body = strings.TrimSuffix(strings.TrimSuffix(body, customprompt.TruncationMarker), "\n")
		if len(body) > max {
			t.Fatalf("%d bytes over the cap of %d", len(body), max)
		}
	})
}
