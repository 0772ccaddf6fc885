package prompt

import (
	"strconv"
	"strings"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/runes"
)

// Clean returns s without the code points no prompt may carry: text
// written by one party (another agent, the host, a task, a tool result, a
// memory, a slot) and shown to a model must not be able to hide, reorder
// or smuggle what the model reads. It removes the C0 controls but tab and
// newline, DEL, the C1 controls, every format character (zero-width
// characters, bidirectional marks and controls, the byte order mark, ...),
// the tag characters U+E0000–U+E007F and variation selectors used as
// carriers: the SDK's one unsafe-character rule, described in full at
// internal/runes.Unsafe.
//
// Everything else is kept byte for byte, so that ordinary text (and the
// spec §2 strings) is unchanged; s itself is returned, without
// allocating, when it holds none of them. In text that holds one, bytes
// that are not valid UTF-8 become U+FFFD first, so that removing a code
// point can never join two stray bytes into a new one. The assembler
// applies Clean to every section it joins into a [Prompt], custom sections
// included (see [Assembler.Assemble]), and the toolloop executor to what
// it shows its model (tool results, recalled memories among them); an
// application that builds prompts of its own can call it too.
func Clean(s string) string { return runes.Strip(s) }

// cleanSection cleans one rendered section's text (see [Clean]). A line
// that held text and is left blank by the cleaning is dropped, and so are
// leading and trailing line breaks, so that a blank line still only ever
// separates sections.
func cleanSection(t string) string {
	if runes.UnsafeAt(t) < 0 {
		return t
	}
	lines := strings.Split(t, "\n")
	out := lines[:0]
	for _, line := range lines {
		c := Clean(line)
		if c != line && strings.TrimSpace(c) == "" && strings.TrimSpace(line) != "" {
			continue
		}
		out = append(out, c)
	}
	return trimNewlines(strings.Join(out, "\n"))
}

// maxLabelChars bounds a name or sender shown quoted (see writeLabel).
const maxLabelChars = identity.MaxNameChars

// writeLabel writes a name or a message's sender, which the prompt shows
// inside its own markers ("You are {name}.", "  {name}: …",
// "  [{from}]: …"; spec §2 rows 2, 10, 15). A label that is, once
// flattened to one line, a valid agent name ([identity.ValidateName]) is
// written as it is. Anything else — line breaks, brackets, colons,
// controls that would let it imitate a marker or a header, such as a
// sender "host\nA PERSON SAID:" — is written as a quoted string with its
// escapes visible, brackets turned into parentheses and cut to 64
// characters: ["host\nA PERSON SAID:"]. A blank label writes nothing.
func writeLabel(b *strings.Builder, s string) {
	if isBlank(s) {
		return
	}
	f := flat(s, -1)
	if identity.ValidateName(f) == nil {
		b.WriteString(f)
		return
	}
	q := strings.TrimSpace(s)
	if runes.Count(q) > maxLabelChars {
		q = runes.Head(q, maxLabelChars-1) + "…"
	}
	q = strings.Map(func(r rune) rune {
		switch r {
		case '[':
			return '('
		case ']':
			return ')'
		}
		return r
	}, q)
	b.WriteString(strconv.QuoteToGraphic(q))
}
