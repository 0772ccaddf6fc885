package customprompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/prompt"
)

// SectionName is the name of the section in the assembler.
const SectionName = "working_memory"

// Header is the section's first line.
const Header = "WORKING MEMORY:"

// DefaultMaxSizeBytes is the default cap on the rendered document, in bytes
// (the original's working_memory.max_size_bytes).
const DefaultMaxSizeBytes = 2000

// TruncationMarker ends a document that was cut to its size cap.
const TruncationMarker = "[… working memory truncated to max_size_bytes]"

// TrimPriority is the section's trim priority under a prompt budget: it
// shrinks after the discoveries (10) and before the history (20).
const TrimPriority = 15

// MaxDocumentBytes is the largest JSON document [Parse] accepts: 64 KiB.
const MaxDocumentBytes = 64 << 10

// ErrInvalid is returned by [Parse] for a document that is not a working
// memory: malformed JSON, a wrong type, trailing data, or too large.
var ErrInvalid = errors.New("customprompt: invalid working memory document")

// WorkingMemory is the agent's structured note about what it is doing
// (current goal, progress, lessons, strategic objectives).
type WorkingMemory struct {
	CurrentGoal         string    `json:"current_goal,omitempty"`
	Started             time.Time `json:"started,omitzero"`
	Progress            Progress  `json:"progress,omitzero"`
	Lessons             []string  `json:"lessons,omitempty"`
	StrategicObjectives []string  `json:"strategic_objectives,omitempty"`
}

// Progress is where the current goal stands.
type Progress struct {
	Stage          string   `json:"stage,omitempty"`
	Completed      []string `json:"completed,omitempty"`
	NextSteps      []string `json:"next_steps,omitempty"`
	ActionsInStage int      `json:"actions_in_stage,omitempty"`
}

// IsZero reports whether wm holds nothing worth showing.
func (wm WorkingMemory) IsZero() bool {
	return wm.CurrentGoal == "" && wm.Started.IsZero() && wm.Progress.Stage == "" &&
		len(wm.Progress.Completed) == 0 && len(wm.Progress.NextSteps) == 0 &&
		wm.Progress.ActionsInStage == 0 && len(wm.Lessons) == 0 && len(wm.StrategicObjectives) == 0
}

// Key attaches a WorkingMemory to a [prompt.View] (through
// [prompt.Values]).
var Key = prompt.NewKey[WorkingMemory]("working_memory")

// Parse decodes a working memory JSON document, such as the one an agent
// writes about itself. Unknown fields are ignored; errors wrap
// [ErrInvalid].
func Parse(data []byte) (WorkingMemory, error) {
	var wm WorkingMemory
	if len(data) > MaxDocumentBytes {
		return wm, fmt.Errorf("%w: %d bytes, limit %d", ErrInvalid, len(data), MaxDocumentBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&wm); err != nil {
		return WorkingMemory{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return WorkingMemory{}, fmt.Errorf("%w: data after the JSON object", ErrInvalid)
	}
	return wm, nil
}

// Format renders the section: [Header], then the document as indented
// JSON. When the JSON is longer than maxBytes bytes (maxBytes ≤ 0 means
// [DefaultMaxSizeBytes]) it is cut to at most maxBytes bytes, never inside
// a UTF-8 character and at the end of a line when that keeps at least half
// of the cap, and followed by a line with [TruncationMarker].
func Format(wm WorkingMemory, maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSizeBytes
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(wm); err != nil {
		// Unreachable for this type; show the problem rather than hide it.
		return Header + "\n(unreadable: " + err.Error() + ")"
	}
	doc := strings.TrimRight(buf.String(), "\n")
	if len(doc) <= maxBytes {
		return Header + "\n" + doc
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(doc[cut]) {
		cut--
	}
	// End on a whole line when that keeps at least half of the cap.
	if nl := strings.LastIndexByte(doc[:cut], '\n'); nl >= maxBytes/2 {
		cut = nl
	}
	if kept := strings.TrimRight(doc[:cut], " \n"); kept != "" {
		return Header + "\n" + kept + "\n" + TruncationMarker
	}
	return Header + "\n" + TruncationMarker
}

// Section returns the WORKING MEMORY section: present when the view carries
// a non-empty WorkingMemory under [Key], rendered by [Format] with the
// given cap, and trimmable under a prompt budget at [TrimPriority].
func Section(maxBytes int) prompt.SectionFunc {
	return prompt.SectionFunc{
		ID: SectionName,
		When: func(v *prompt.View) bool {
			wm, ok := Key.Get(v)
			return ok && !wm.IsZero()
		},
		Text: func(v *prompt.View) string {
			wm, _ := Key.Get(v)
			return Format(wm, maxBytes)
		},
		Priority: TrimPriority,
	}
}

// Install inserts [Section] right after the worldview section of a. It
// fails if a has no worldview section ([prompt.ErrUnknownSection]) or
// already has a working memory section ([prompt.ErrDuplicateSection]).
func Install(a *prompt.Assembler, maxBytes int) error {
	return a.InsertAfter(prompt.SectionWorldview, Section(maxBytes))
}
