package prompt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/existence-loop/sdk/internal/runes"
)

// CutMarker marks every place where a [Budget] cut a section. It is always
// visible in the prompt: the model (and whoever reads the prompt) can tell
// that something was left out. Default sections put it on a line of its own,
// in place of what was cut.
const CutMarker = "[… cut to fit the prompt budget]"

// ErrBudget is returned (wrapped in a [*BudgetError]) by
// [Assembler.Assemble] when the prompt cannot fit its [Budget] even with
// every trimmable section at its minimum (header and [CutMarker]).
var ErrBudget = errors.New("prompt: over budget")

// Budget caps the size of the assembled prompt. The zero value means no
// budget. MaxChars and MaxTokens may both be set; the prompt must then fit
// both.
//
// When the prompt would exceed the budget, sections implementing [Trimmer]
// shrink, lowest TrimPriority first, until it fits. The default sections
// shrink in this order (their priorities in parentheses): discoveries (10),
// history (20), opinions (30, the oldest go first), open questions (40, the
// oldest go first), peers (50, the last go first), recent goals (60, the
// oldest go first), peer messages (70, the oldest go first), last outcome
// (80), worldview (90), host messages (100, the oldest go first), situation
// (110) and the assigned task (120). The identity header, world context,
// inner state, time, directive and response format never shrink. Sections with equal
// priority shrink in prompt order. Each cut leaves [CutMarker] and is
// reported in [Prompt].Cuts.
type Budget struct {
	// MaxChars is the maximum number of characters (Unicode code points)
	// of the whole prompt; 0 means no limit.
	MaxChars int
	// MaxTokens is the maximum number of tokens of the whole prompt, as
	// counted by Count; 0 means no limit.
	MaxTokens int
	// Count counts the tokens of a text, e.g. with the model's tokenizer.
	// nil means [EstimateTokens] (characters / 4, rounded up).
	Count func(text string) int
}

// within returns b limited further by w: each limit is the smaller of the
// two (0 meaning none), and b's Count, when set, counts for both.
func (b Budget) within(w Budget) Budget {
	if w.MaxChars > 0 && (b.MaxChars == 0 || w.MaxChars < b.MaxChars) {
		b.MaxChars = w.MaxChars
	}
	if w.MaxTokens > 0 && (b.MaxTokens == 0 || w.MaxTokens < b.MaxTokens) {
		b.MaxTokens = w.MaxTokens
		if b.Count == nil {
			b.Count = w.Count
		}
	}
	return b
}

// Enabled reports whether b limits anything.
func (b Budget) Enabled() bool { return b.MaxChars > 0 || b.MaxTokens > 0 }

// Tokens returns the number of tokens in text, by b.Count or, when nil, by
// [EstimateTokens].
func (b Budget) Tokens(text string) int {
	if b.Count != nil {
		return b.Count(text)
	}
	return EstimateTokens(text)
}

// Check returns nil when text fits b, and otherwise a [*BudgetError] (which
// matches [ErrBudget]) saying by how much it is over.
func (b Budget) Check(text string) error {
	if b.MaxChars > 0 {
		if n := runes.Count(text); n > b.MaxChars {
			return &BudgetError{Unit: "characters", Need: n, Max: b.MaxChars}
		}
	}
	if b.MaxTokens > 0 {
		if n := b.Tokens(text); n > b.MaxTokens {
			return &BudgetError{Unit: "tokens", Need: n, Max: b.MaxTokens}
		}
	}
	return nil
}

// EstimateTokens estimates the number of tokens in text as its number of
// characters (code points) divided by 4, rounded up: the usual estimate for
// English text.
func EstimateTokens(text string) int { return (runes.Count(text) + 3) / 4 }

// BudgetError reports a prompt that does not fit its [Budget]: Need is the
// smallest size the assembler could reach, Max the budget, both in Unit
// ("characters" or "tokens"). It matches [ErrBudget] with errors.Is.
type BudgetError struct {
	Unit string
	Need int
	Max  int
}

// Error says by how much the minimal prompt is over the budget, in the
// budget's unit (characters or tokens), with the need and the maximum.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("prompt: over budget by %d %s: the prompt needs at least %d %s with every trimmable section at its minimum, the budget is %d",
		e.Need-e.Max, e.Unit, e.Need, e.Unit, e.Max)
}

// Is reports whether target is [ErrBudget].
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Cut reports one section the budget shrank. Sizes are in characters (code
// points). The existence package turns each Cut into an event.
type Cut struct {
	// Section is the name of the section that shrank, e.g.
	// [SectionDiscoveries].
	Section string
	// Before and After are the section's length before and after the
	// cut, in characters.
	Before int
	After  int
}

// String returns e.g. "discoveries: 1520 → 310 characters".
func (c Cut) String() string {
	return fmt.Sprintf("%s: %d → %d characters", c.Section, c.Before, c.After)
}

// trimSection cuts a section's text to about maxChars characters for a
// [Trimmer]: it keeps the first line (the header) and the beginning of the
// rest, then a line with [CutMarker]. When even the header and the marker
// do not fit, it returns just those (more than maxChars). A text that
// already fits is returned unchanged. [SectionFunc] uses it when its Shrink
// is nil.
func trimSection(text string, maxChars int) string {
	if runes.Count(text) <= maxChars {
		return text
	}
	head, body, ok := strings.Cut(text, "\n")
	if !ok {
		// A single line: cut it and add the marker.
		keep := maxChars - 1 - runes.Count(CutMarker)
		if keep <= 0 {
			return CutMarker
		}
		return strings.TrimRight(runes.Head(text, keep), " ") + "\n" + CutMarker
	}
	return trimProse(head, "", body, "", maxChars)
}

// trimProse returns header, the first characters of body (each line of the
// kept body is kept as is; the first line is prefixed by indent), a marker
// line and footer, in at most maxChars characters when possible; at the
// minimum it is header, marker and footer.
func trimProse(header, indent, body, footer string, maxChars int) string {
	var full strings.Builder
	full.WriteString(header)
	if body != "" {
		full.WriteString("\n" + indent + body)
	}
	if footer != "" {
		full.WriteString("\n" + footer)
	}
	if runes.Count(full.String()) <= maxChars {
		return full.String()
	}
	fixed := runes.Count(header) + 1 + runes.Count(indent) + runes.Count(CutMarker)
	if footer != "" {
		fixed += 1 + runes.Count(footer)
	}
	var b strings.Builder
	b.WriteString(header)
	if avail := maxChars - fixed - 1 - runes.Count(indent); avail > 0 {
		if kept := strings.TrimRightFunc(runes.Head(body, avail), unicode.IsSpace); kept != "" {
			b.WriteString("\n" + indent + kept)
		}
	}
	b.WriteString("\n" + indent + CutMarker)
	if footer != "" {
		b.WriteString("\n" + footer)
	}
	return b.String()
}

// trimLines returns header, as many of the item lines as fit with a marker
// line ("  " + CutMarker) where the others were, and footer. keepNewest keeps
// the last items (the marker goes first); otherwise the first items are kept
// (the marker goes last). At the minimum it is header and marker.
func trimLines(header string, items []string, keepNewest bool, footer string, maxChars int) string {
	if len(items) == 0 {
		return "" // nothing to shrink: the caller keeps the full text
	}
	marker := "  " + CutMarker
	build := func(k int, withFooter bool) string {
		var b strings.Builder
		b.WriteString(header)
		if keepNewest {
			b.WriteString("\n" + marker)
			for _, it := range items[len(items)-k:] {
				b.WriteString("\n" + it)
			}
		} else {
			for _, it := range items[:k] {
				b.WriteString("\n" + it)
			}
			b.WriteString("\n" + marker)
		}
		if withFooter && footer != "" {
			b.WriteString("\n" + footer)
		}
		return b.String()
	}
	for k := len(items) - 1; k >= 0; k-- {
		if s := build(k, true); runes.Count(s) <= maxChars {
			return s
		}
	}
	return build(0, false)
}

// fitBudget shrinks the trimmable sections of texts (parallel to secs;
// absent sections are "") until the joined prompt fits b. It returns the
// cuts, in the order made, or a *BudgetError.
func fitBudget(b Budget, v *View, secs []Section, texts []string) ([]Cut, error) {
	m := newMeter(b, texts)
	if m.fits() {
		return nil, nil
	}
	type cand struct {
		i    int
		prio int
		t    Trimmer
	}
	var order []cand
	for i, s := range secs {
		if texts[i] == "" {
			continue
		}
		if t, ok := s.(Trimmer); ok {
			if p := t.TrimPriority(); p > 0 {
				order = append(order, cand{i, p, t})
			}
		}
	}
	slices.SortStableFunc(order, func(a, b cand) int { return cmp.Compare(a.prio, b.prio) })

	var cuts []Cut
	for _, c := range order {
		if m.fits() {
			break
		}
		before := m.sizes[c.i]
		trim := func(maxChars int) (string, bool) {
			t := trimNewlines(c.t.Trim(v, maxChars))
			if t == texts[c.i] {
				return "", false
			}
			if !strings.Contains(t, CutMarker) { // every cut is marked
				if t != "" {
					t += "\n"
				}
				t += CutMarker
			}
			return t, runes.Count(t) < before
		}
		// With a budget linear in characters, the cut to exactly the excess
		// is the largest that fits; otherwise (or if the Trimmer overshot)
		// search for the largest maxChars below the current size whose cut
		// fits.
		best, bestOK := "", false
		lo, hi := 0, before-1
		if limit, ok := m.charLimit(); ok {
			target := before - (m.total - limit)
			if target < 0 {
				lo = hi + 1 // even an empty section would not fit: the minimum
			} else if t, ok := trim(target); ok && m.fitsWith(c.i, t) {
				best, bestOK, lo = t, true, hi+1 // skip the search
			}
		}
		for lo <= hi {
			mid := lo + (hi-lo)/2
			t, ok := trim(mid)
			if ok && m.fitsWith(c.i, t) {
				best, bestOK = t, true
				lo = mid + 1
			} else {
				hi = mid - 1
			}
		}
		if !bestOK {
			// Even the minimum does not fit: take the minimum and go on.
			if best, bestOK = trim(0); !bestOK {
				continue
			}
		}
		m.set(c.i, best)
		texts[c.i] = best
		cuts = append(cuts, Cut{Section: secs[c.i].Name(), Before: before, After: m.sizes[c.i]})
	}
	if err := m.err(); err != nil {
		return cuts, err
	}
	return cuts, nil
}

// meter measures the joined prompt as sections change.
type meter struct {
	b     Budget
	texts []string
	sizes []int // characters per section
	total int   // characters of the joined prompt
}

func newMeter(b Budget, texts []string) *meter {
	m := &meter{b: b, texts: slices.Clone(texts), sizes: make([]int, len(texts))}
	for i, t := range texts {
		m.sizes[i] = runes.Count(t)
	}
	m.total = m.sum()
	return m
}

func (m *meter) sum() int {
	n, present := 0, 0
	for i, t := range m.texts {
		if t != "" {
			n += m.sizes[i]
			present++
		}
	}
	if present > 1 {
		n += 2 * (present - 1) // "\n\n" between sections
	}
	return n
}

func (m *meter) set(i int, t string) {
	m.texts[i] = t
	m.sizes[i] = runes.Count(t)
	m.total = m.sum()
}

// fitsWith reports whether the prompt fits with section i replaced by t.
func (m *meter) fitsWith(i int, t string) bool {
	old, oldSize, oldTotal := m.texts[i], m.sizes[i], m.total
	m.set(i, t)
	ok := m.fits()
	m.texts[i], m.sizes[i], m.total = old, oldSize, oldTotal
	return ok
}

func (m *meter) fits() bool { return m.err() == nil }

// charLimit returns the budget as a number of characters of the whole
// prompt, when it is one: MaxChars and, with the default estimate,
// 4 × MaxTokens.
func (m *meter) charLimit() (int, bool) {
	if m.b.MaxTokens > 0 && m.b.Count != nil {
		return 0, false
	}
	limit := m.b.MaxChars
	if m.b.MaxTokens > 0 && (limit == 0 || 4*m.b.MaxTokens < limit) {
		limit = 4 * m.b.MaxTokens
	}
	return limit, limit > 0
}

func (m *meter) err() error {
	if m.b.MaxChars > 0 && m.total > m.b.MaxChars {
		return &BudgetError{Unit: "characters", Need: m.total, Max: m.b.MaxChars}
	}
	if m.b.MaxTokens > 0 {
		var n int
		if m.b.Count == nil {
			n = (m.total + 3) / 4
		} else {
			n = m.b.Count(joinSections(m.texts))
		}
		if n > m.b.MaxTokens {
			return &BudgetError{Unit: "tokens", Need: n, Max: m.b.MaxTokens}
		}
	}
	return nil
}

// joinSections joins the non-empty texts with one blank line between them.
func joinSections(texts []string) string {
	var b strings.Builder
	for _, t := range texts {
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t)
	}
	return b.String()
}
