package workspace

import (
	"strings"
	"unicode"

	"github.com/existence-loop/sdk/internal/runes"
)

// DiscoveryLineChars caps the first line quoted in the discovery that
// read_file reports, in characters (code points).
const DiscoveryLineChars = 160

// describe returns the one-line description of a file that read_file
// reports as a discovery (its Source is the path, which the prompt shows
// after it): `first line "{first non-blank line}"`, the line flattened
// (white space and control characters collapsed to single spaces) and cut
// to DiscoveryLineChars characters, ending in "…" when cut. A file with no
// text gives `(empty file)`.
func describe(content string) string {
	for line := range strings.Lines(content) {
		// One character more than the cap tells whether it was cut.
		if flat := flatten(line, DiscoveryLineChars+1); flat != "" {
			if runes.Count(flat) > DiscoveryLineChars {
				flat = strings.TrimRight(runes.Head(flat, DiscoveryLineChars-1), " ") + "…"
			}
			return `first line "` + flat + `"`
		}
	}
	return "(empty file)"
}

// flatten replaces every run of white space and non-printable characters
// (control characters, a byte order mark) in s with one space, trims the
// ends, and stops after max characters.
func flatten(s string, max int) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range s {
		if n == max {
			break
		}
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
			n++
			if n == max {
				break
			}
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
